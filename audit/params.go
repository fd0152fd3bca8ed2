package audit

import (
	"context"
	"maps"
	"strconv"
	"strings"

	"github.com/ClickHouse/clickhouse-go/v2"
)

// Params are the server-side parameters of one query: the values of its
// {name:Type} placeholders, each written in the form ClickHouse reads
// parameter values in. ClickHouse parses a parameter's value in its
// escaped text format (the TabSeparated one), so a String value that
// holds a backslash or a control byte would be read differently or
// rejected ("cannot be parsed completely"); every value the model
// chooses (agent names, run IDs, tool names, reasons) may hold any. The
// String and Strings methods escape; there is no way to set a raw value,
// and every query of this module binds its parameters through Params
// (a test fails on a raw clickhouse.Parameters literal elsewhere).
//
// The zero value is empty and ready to use; methods return p to chain:
//
//	var p audit.Params
//	p.String("run", runID).Int64("since", t.UnixNano())
//	rows, err := conn.Query(p.Context(ctx), "… RunId = {run:String} AND Timestamp >= fromUnixTimestamp64Nano({since:Int64})")
type Params struct {
	m clickhouse.Parameters
}

func (p *Params) set(name, v string) *Params {
	if p.m == nil {
		p.m = clickhouse.Parameters{}
	}
	p.m[name] = v
	return p
}

// String binds {name:String} to v, any bytes (escaped: escapeParam).
func (p *Params) String(name, v string) *Params { return p.set(name, escapeParam(v)) }

// Strings binds {name:Array(String)} to vs (each element quoted and
// escaped).
func (p *Params) Strings(name string, vs []string) *Params {
	var b strings.Builder
	b.WriteByte('[')
	for i, s := range vs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('\'')
		b.WriteString(escapeParam(s))
		b.WriteByte('\'')
	}
	b.WriteByte(']')
	return p.set(name, b.String())
}

// Int64 binds {name:Int64} (or any integer type that holds v: UInt32,
// …) to v in decimal.
func (p *Params) Int64(name string, v int64) *Params {
	return p.set(name, strconv.FormatInt(v, 10))
}

// Context returns ctx carrying the parameters for clickhouse-go
// (clickhouse.WithParameters); later changes to p do not affect it. A nil
// p carries none. Over HTTP clickhouse-go sends each value as
// param_name=value; over the native protocol it quotes the value once
// more for transport, which the server undoes before it reads the
// escaped text, so the escaping is the same for both (this module's
// tests run over HTTP).
func (p *Params) Context(ctx context.Context) context.Context {
	if p == nil {
		return ctx
	}
	return clickhouse.Context(ctx, clickhouse.WithParameters(maps.Clone(p.m)))
}

// escapeParam writes s in ClickHouse's escaped text format, the form a
// String query parameter's value is read in: a backslash as \\, a single
// quote as \' (so that the value may also stand inside an Array(String)
// literal), and every control byte (0x00–0x1f, 0x7f) as \xHH. Other bytes,
// invalid UTF-8 included, are kept: ClickHouse strings are bytes, and
// ClickHouse reads the result back as exactly s.
func escapeParam(s string) string {
	n := 0
	for i := 0; i < len(s); i++ {
		if needsEscape(s[i]) {
			n++
		}
	}
	if n == 0 {
		return s
	}
	const hex = "0123456789abcdef"
	var b strings.Builder
	b.Grow(len(s) + 3*n)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' || c == '\'':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 || c == 0x7f:
			b.WriteString(`\x`)
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&0xf])
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func needsEscape(c byte) bool { return c == '\\' || c == '\'' || c < 0x20 || c == 0x7f }

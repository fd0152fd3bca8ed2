package chserve

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	chproto "github.com/ClickHouse/ch-go/proto"
	"github.com/ClickHouse/clickhouse-go/v2/lib/column"
	"github.com/ClickHouse/clickhouse-go/v2/lib/proto"
)

// reencodeNative rewrites Native data written by chDB, which always uses
// protocol revision 0 (no BlockInfo, no custom-serialization flags), at the
// client's revision, the form a ClickHouse server sends to a client that
// passed client_protocol_version. Decoding and encoding are clickhouse-go's
// own (lib/proto), so only types clickhouse-go supports pass.
func reencodeNative(data []byte, revision uint64) ([]byte, error) {
	if revision == 0 || len(data) == 0 {
		return data, nil
	}
	r := chproto.NewReader(bytes.NewReader(data))
	out := &chproto.Buffer{Buf: make([]byte, 0, len(data)+len(data)/16+64)}
	// chDB's output is revision 0; its DateTime values are instants, so the
	// decoding time zone does not change the bytes written back.
	sc := column.ServerContext{Timezone: time.UTC}
	for n := 0; ; n++ {
		block := proto.Block{ServerContext: &sc}
		if err := block.Decode(r, 0); err != nil {
			if errors.Is(err, io.EOF) && n > 0 {
				break
			}
			return nil, fmt.Errorf("decode Native block %d from the engine: %w", n, err)
		}
		if err := block.Encode(out, revision); err != nil {
			return nil, fmt.Errorf("encode Native block %d at revision %d: %w", n, revision, err)
		}
	}
	return out.Buf, nil
}

// emptyNativeHeader builds the header block (the columns, no rows) of the
// request's query, at revision 0 like the engine's own output: it asks the
// engine to DESCRIBE the query and encodes the block with clickhouse-go.
func emptyNativeHeader(eng Engine, req *request) ([]byte, error) {
	cut := req.st.End
	if req.st.FormatPos >= 0 {
		cut = req.st.FormatPos
	}
	q := "DESCRIBE (" + req.text[:cut] + "\n) SETTINGS readonly = 1"
	res, err := eng.QueryWithParams([]byte(q), "TabSeparatedRaw", req.p.bind)
	if err != nil {
		return nil, err
	}
	sc := column.ServerContext{Timezone: time.UTC}
	block := proto.Block{ServerContext: &sc}
	for _, line := range strings.Split(strings.TrimRight(string(res.Data), "\n"), "\n") {
		f := strings.Split(line, "\t")
		if len(f) < 2 {
			return nil, fmt.Errorf("unexpected DESCRIBE line %q", line)
		}
		if err := block.AddColumn(f[0], column.Type(f[1])); err != nil {
			return nil, err
		}
	}
	var buf chproto.Buffer
	if err := block.Encode(&buf, 0); err != nil {
		return nil, err
	}
	return buf.Buf, nil
}

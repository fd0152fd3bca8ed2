package chserve

import (
	"bufio"
	"bytes"
	"encoding/binary"
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
// own (lib/proto, lib/column), so only types clickhouse-go supports pass.
//
// Blocks without rows need care on both sides: chDB writes the columns'
// serialization state prefixes (e.g. LowCardinality's key version) even
// for them, and clickhouse-go's decoder expects none there; such a block
// is read column by column and written back as names and types only.
func reencodeNative(data []byte, revision uint64) ([]byte, error) {
	if revision == 0 || len(data) == 0 {
		return data, nil
	}
	// br.Peek sees where each block starts: ch-go's Reader reuses a
	// *bufio.Reader at least as large as its own (128 KiB) instead of
	// wrapping it; the check after the loop catches a change of that.
	br := bufio.NewReaderSize(bytes.NewReader(data), 1<<20)
	r := chproto.NewReader(br)
	out := &chproto.Buffer{Buf: make([]byte, 0, len(data)+len(data)/16+64)}
	// chDB's output is revision 0; its DateTime values are instants, so the
	// decoding time zone does not change the bytes written back.
	sc := column.ServerContext{Timezone: time.UTC}
	for n := 0; ; n++ {
		head, err := br.Peek(2 * binary.MaxVarintLen64)
		if len(head) == 0 && errors.Is(err, io.EOF) {
			if n == 0 {
				return nil, fmt.Errorf("decode Native: no block")
			}
			if _, err := r.ReadByte(); err == nil {
				return nil, fmt.Errorf("decode Native: data left after %d blocks that the block scan did not see", n)
			}
			break
		}
		cols, k := binary.Uvarint(head)
		rows, k2 := uint64(0), 0
		if k > 0 {
			rows, k2 = binary.Uvarint(head[k:])
		}
		if k <= 0 || k2 <= 0 {
			return nil, fmt.Errorf("decode Native block %d from the engine: bad block header", n)
		}
		if rows == 0 {
			if err := reencodeEmptyBlock(r, out, cols, revision, &sc); err != nil {
				return nil, fmt.Errorf("Native block %d (no rows): %w", n, err)
			}
			continue
		}
		block := proto.Block{ServerContext: &sc}
		if err := block.Decode(r, 0); err != nil {
			return nil, fmt.Errorf("decode Native block %d from the engine: %w", n, err)
		}
		if err := block.Encode(out, revision); err != nil {
			return nil, fmt.Errorf("encode Native block %d at revision %d: %w", n, revision, err)
		}
	}
	return out.Buf, nil
}

// reencodeEmptyBlock reads a block without rows as chDB writes it (each
// column's state prefix after its name and type) and writes it the way
// clickhouse-go reads one: header, then each column's name, type and
// custom-serialization flag, no data.
func reencodeEmptyBlock(r *chproto.Reader, out *chproto.Buffer, cols, revision uint64, sc *column.ServerContext) error {
	if _, err := r.UVarInt(); err != nil { // columns
		return err
	}
	if _, err := r.UVarInt(); err != nil { // rows
		return err
	}
	block := proto.Block{ServerContext: sc}
	for i := uint64(0); i < cols; i++ {
		name, err := r.Str()
		if err != nil {
			return err
		}
		typ, err := r.Str()
		if err != nil {
			return err
		}
		if err := block.AddColumn(name, column.Type(typ)); err != nil {
			return err
		}
		if cs, ok := block.Columns[i].(column.CustomSerialization); ok {
			if err := cs.ReadStatePrefix(r); err != nil {
				return fmt.Errorf("column %s %s: state prefix: %w", name, typ, err)
			}
		}
	}
	return writeEmptyBlock(out, &block, revision)
}

// writeEmptyBlock writes a block's header without rows at revision: what
// clickhouse-go's Block.Decode reads for a block of zero rows.
func writeEmptyBlock(out *chproto.Buffer, block *proto.Block, revision uint64) error {
	if err := block.EncodeHeader(out, revision); err != nil {
		return err
	}
	for _, c := range block.Columns {
		out.PutString(c.Name())
		out.PutString(string(c.Type()))
		if revision >= proto.DBMS_MIN_REVISION_WITH_CUSTOM_SERIALIZATION {
			out.PutBool(false)
		}
	}
	return nil
}

// emptyNativeHeader builds the header block (the columns, no rows) of the
// request's query as the engine writes one at revision 0 (names, types and
// state prefixes): it asks the engine to DESCRIBE the query.
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
	if err := block.EncodeHeader(&buf, 0); err != nil {
		return nil, err
	}
	for _, c := range block.Columns {
		buf.PutString(c.Name())
		buf.PutString(string(c.Type()))
		if cs, ok := c.(column.CustomSerialization); ok {
			if err := cs.WriteStatePrefix(&buf); err != nil {
				return nil, err
			}
		}
	}
	return buf.Buf, nil
}

package chserve

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"strings"

	"github.com/ClickHouse/ch-go/compress"
	"github.com/andybalholm/brotli"
)

// blockSize is the uncompressed size of one compressed block in answers,
// ClickHouse's default max_compress_block_size (1 MiB).
const blockSize = 1 << 20

// compressBlocks frames data in ClickHouse compressed blocks (CityHash128
// checksum, method byte, sizes) with ch-go's writer, as a server answers
// compress=1.
func compressBlocks(data []byte, method string) ([]byte, error) {
	m := compress.LZ4
	switch method {
	case "ZSTD":
		m = compress.ZSTD
	case "LZ4HC":
		m = compress.LZ4HC
	case "NONE":
		m = compress.None
	}
	w := compress.NewWriter(compress.LevelZero, m)
	out := make([]byte, 0, len(data)/2+64)
	for len(data) > 0 {
		n := min(len(data), blockSize)
		if err := w.Compress(data[:n]); err != nil {
			return nil, err
		}
		out = append(out, w.Data...)
		data = data[n:]
	}
	return out, nil
}

// encodeHTTP applies the first of gzip, deflate or br that acceptEncoding
// lists (enable_http_compression=1). enc is "" when none applies.
func encodeHTTP(data []byte, acceptEncoding string) (out []byte, enc string, err error) {
	for _, part := range strings.Split(acceptEncoding, ",") {
		name := strings.ToLower(strings.TrimSpace(strings.SplitN(part, ";", 2)[0]))
		var buf bytes.Buffer
		switch name {
		case "gzip":
			zw := gzip.NewWriter(&buf)
			if _, err := zw.Write(data); err != nil {
				return nil, "", err
			}
			err = zw.Close()
		case "deflate":
			zw := zlib.NewWriter(&buf)
			if _, err := zw.Write(data); err != nil {
				return nil, "", err
			}
			err = zw.Close()
		case "br":
			zw := brotli.NewWriter(&buf)
			if _, err := zw.Write(data); err != nil {
				return nil, "", err
			}
			err = zw.Close()
		default:
			continue
		}
		if err != nil {
			return nil, "", err
		}
		return buf.Bytes(), name, nil
	}
	return data, "", nil
}

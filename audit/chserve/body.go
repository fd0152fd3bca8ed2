package chserve

import (
	"compress/gzip"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	"github.com/ClickHouse/ch-go/compress"
	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/zstd"
)

// errBodyTooLarge marks a request body over the configured limit.
var errBodyTooLarge = errors.New("request body too large")

// limitedReader fails with errBodyTooLarge once more than n bytes were read.
type limitedReader struct {
	r io.Reader
	n int64
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.n < 0 {
		return 0, errBodyTooLarge
	}
	if int64(len(p)) > l.n+1 {
		p = p[:l.n+1]
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	if l.n < 0 {
		return n, errBodyTooLarge
	}
	return n, err
}

// blockReader ends a stream of ClickHouse compressed blocks cleanly:
// ch-go's compress.Reader reports the end of the input as a wrapped
// "header: EOF" rather than io.EOF.
type blockReader struct {
	r *compress.Reader
}

func (b blockReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err != nil && errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return n, io.EOF
	}
	if err != nil {
		return n, fmt.Errorf("compressed block: %w", err)
	}
	return n, nil
}

// requestBody returns the decoded request body: HTTP Content-Encoding
// (gzip, deflate, br, zstd) first, then ClickHouse's compressed-block
// framing when decompress=1, all under the byte limit.
func (s *Server) requestBody(r *http.Request, decompress bool) (io.Reader, func(), *Exception) {
	var body io.Reader = &limitedReader{r: r.Body, n: s.opts.maxBodyBytes}
	closers := []func(){}
	done := func() {
		for _, c := range closers {
			c()
		}
	}
	switch enc := strings.ToLower(strings.TrimSpace(r.Header.Get("Content-Encoding"))); enc {
	case "", "identity", "none":
	case "gzip", "x-gzip":
		zr, err := gzip.NewReader(body)
		if err != nil {
			return nil, done, &Exception{Code: codeCannotParseInput, Name: "CANNOT_DECOMPRESS", Text: "gzip request body: " + err.Error()}
		}
		body = zr
	case "deflate":
		zr, err := zlib.NewReader(body)
		if err != nil {
			return nil, done, &Exception{Code: codeCannotParseInput, Name: "CANNOT_DECOMPRESS", Text: "deflate request body: " + err.Error()}
		}
		body = zr
	case "br":
		body = brotli.NewReader(body)
	case "zstd":
		zr, err := zstd.NewReader(body, zstd.WithDecoderConcurrency(1))
		if err != nil {
			return nil, done, &Exception{Code: codeCannotParseInput, Name: "CANNOT_DECOMPRESS", Text: "zstd request body: " + err.Error()}
		}
		closers = append(closers, zr.Close)
		body = zr
	default:
		return nil, done, &Exception{Code: 36, Name: "BAD_ARGUMENTS", Text: fmt.Sprintf("Unknown Content-Encoding %q: supported are gzip, deflate, br and zstd", enc)}
	}
	if decompress {
		body = blockReader{r: compress.NewReader(body)}
	}
	return &limitedReader{r: body, n: s.opts.maxBodyBytes}, done, nil
}

// bodyException turns a body read error into an Exception.
func (s *Server) bodyException(err error) *Exception {
	if errors.Is(err, errBodyTooLarge) {
		return &Exception{Code: codeTooManyBytes, Name: "TOO_MANY_BYTES",
			Text: fmt.Sprintf("Request body is larger than the server's limit of %d bytes (auditq serve --max-body-bytes); split the insert into smaller batches", s.opts.maxBodyBytes)}
	}
	var corrupt *compress.CorruptedDataErr
	if errors.As(err, &corrupt) {
		return &Exception{Code: 40, Name: "CHECKSUM_DOESNT_MATCH", Text: "Checksum doesn't match: corrupted data in a compressed block of the request body: " + corrupt.Error()}
	}
	return &Exception{Code: 33, Name: "CANNOT_READ_ALL_DATA", Text: "Cannot read the request body: " + err.Error()}
}

// readAll reads the whole (decoded, limited) body.
func (s *Server) readAll(body io.Reader) ([]byte, *Exception) {
	b, err := io.ReadAll(body)
	if err != nil {
		return nil, s.bodyException(err)
	}
	return b, nil
}

// spool writes INSERT data to a temporary file for INSERT … FROM INFILE:
// chDB fails on large inline data. The caller removes the file.
func (s *Server) spool(data io.Reader) (string, *Exception) {
	f, err := os.CreateTemp(s.opts.tempDir, "auditq-insert-*.data")
	if err != nil {
		return "", &Exception{Code: 76, Name: "CANNOT_OPEN_FILE", Text: "Cannot create a spool file for INSERT data: " + err.Error()}
	}
	name := f.Name()
	_, err = io.Copy(f, data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(name)
		return "", s.bodyException(err)
	}
	return name, nil
}

package mcpgate

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxLineBytes bounds one newline-delimited JSON-RPC message on stdio.
const MaxLineBytes = 4 << 20

// Error codes the stdio filter answers with (JSON-RPC 2.0).
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
)

// FilteredStdio returns a newline-delimited JSON-RPC transport over r and w
// that never lets one bad line end the session: the SDK's stdio
// connection closes on a line it cannot decode, so each line is checked
// first, and one that is not a single JSON-RPC 2.0 message (not JSON,
// wrong version tag, a batch, longer than MaxLineBytes) is answered with a
// JSON-RPC error (-32700 or -32600, id null) and dropped; the session
// goes on. Blank lines are skipped. Writes to w are serialized (one
// message per Write).
func FilteredStdio(r io.Reader, w io.Writer, logger *slog.Logger) mcp.Transport {
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	pr, pw := io.Pipe()
	lw := &lockedWriter{w: w}
	go func() {
		br := bufio.NewReaderSize(r, 64<<10)
		for {
			line, tooLong, err := readLine(br)
			if tooLong || len(bytes.TrimSpace(line)) > 0 {
				if code, msg := checkLine(line, tooLong); code != 0 {
					logger.Warn("mcpgate: malformed message from the client; answered with an error", "code", code, "error", msg)
					b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": code, "message": "toolgate: " + msg}})
					_, _ = lw.Write(append(b, '\n'))
				} else if _, werr := pw.Write(append(line, '\n')); werr != nil {
					return
				}
			}
			if err != nil {
				_ = pw.CloseWithError(err)
				return
			}
		}
	}()
	return &mcp.IOTransport{Reader: pr, Writer: lw, MaxLineLength: MaxLineBytes + 2}
}

// readLine reads one line without its line end; a line longer than
// MaxLineBytes is consumed whole and reported as tooLong (its bytes are
// not kept).
func readLine(br *bufio.Reader) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > MaxLineBytes+2 {
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		return bytes.TrimRight(line, "\r\n"), tooLong, err
	}
}

// checkLine reports why line is not one JSON-RPC 2.0 message (code 0: it is).
func checkLine(line []byte, tooLong bool) (int, string) {
	if tooLong {
		return codeInvalidRequest, fmt.Sprintf("message longer than %d bytes", MaxLineBytes)
	}
	t := bytes.TrimSpace(line)
	if !json.Valid(t) {
		return codeParseError, "parse error: the line is not JSON"
	}
	if t[0] == '[' {
		return codeInvalidRequest, "JSON-RPC batches are not accepted; send one message per line"
	}
	if _, err := jsonrpc.DecodeMessage(t); err != nil {
		return codeInvalidRequest, "invalid request: " + err.Error()
	}
	return 0, ""
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// Close implements io.Closer (IOTransport wants an io.WriteCloser); the
// underlying writer is not closed.
func (l *lockedWriter) Close() error { return nil }

package chserve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/toolgate/toolgate/audit/chdb"
)

// Streamer is an [Engine] that can also hand a result over chunk by chunk
// ([*chdb.Conn]). The server streams a read whose output format has no
// prefix or suffix ([chdb.StreamsWhole]) when its engine is a Streamer:
// neither the engine nor the server then holds the whole result, and the
// client decodes the first rows while the engine produces the next.
type Streamer interface {
	Stream(query []byte, format string, params map[string]string) (*chdb.Stream, error)
}

// streamable reports whether req's answer may be streamed: a read, in a
// prefix-free format, not HEAD, without HTTP compression (gzip, br: those
// answers are buffered and compressed whole).
func (req *request) streamable(r *http.Request, outFormat string) bool {
	if req.st.Kind != KindRead || req.spoolFile != "" || r.Method == http.MethodHead ||
		req.p.httpCompression || !chdb.StreamsWhole(outFormat) {
		return false
	}
	switch req.st.Keyword {
	case "SELECT", "WITH", "(":
		return true // the engine streams queries, not EXPLAIN, SHOW, DESCRIBE, EXISTS
	}
	return false
}

// notStreamable reports the engine's refusal to stream a statement
// ("Streaming query is not supported for query: …", code 36).
func notStreamable(err error) bool {
	var ce *chdb.Error
	return errors.As(err, &ce) && ce.Code == 36 && strings.Contains(ce.Message, "Streaming query is not supported")
}

// errFallback tells serveQuery to answer the request buffered: the engine
// cannot stream.
var errFallback = errors.New("chserve: answer buffered")

// stream answers req from a streaming query on sess: it reads the first
// chunk before it sends the headers, so that a query the engine refuses
// still gets ClickHouse's error status and exception body; then it writes
// each chunk (re-encoded for the client's Native revision, framed in
// compressed blocks for compress=1) and flushes it. A query that fails
// after the headers went out aborts the connection (no terminating chunk),
// so the client reads an error, never a short result that looks complete.
// It returns errFallback, having written nothing, when the request must be
// answered buffered; any other error has been answered or logged.
func (s *Server) stream(ctx context.Context, w http.ResponseWriter, r *http.Request, sess *session, req *request, sql, format, outFormat string, start time.Time) error {
	st, ok := sess.eng.(Streamer)
	if !ok {
		return errFallback
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := sess.prepare(req.p.settings, req.p.database); err != nil {
		s.fail(w, r, asException(err).forUser(req))
		return err
	}
	rs, err := st.Stream([]byte(sql), format, req.p.bind)
	if errors.Is(err, chdb.ErrNoStreaming) || notStreamable(err) {
		return errFallback
	}
	if err != nil {
		s.fail(w, r, asException(err).forUser(req))
		return err
	}
	defer rs.Close()
	first, err := rs.Next()
	if notStreamable(err) {
		return errFallback
	}
	native := strings.EqualFold(outFormat, "Native") && req.p.revision > 0
	if errors.Is(err, io.EOF) {
		// An empty result: answered like a buffered one, with the Native
		// header block a client needs for the columns.
		res := &chdb.Result{RowsRead: rs.RowsRead, BytesRead: rs.BytesRead}
		if req.wantsNativeHeader(format) {
			if header, herr := emptyNativeHeader(sess.eng, req); herr == nil {
				res.Data = header
			} else {
				s.opts.logger.Debug("no header for an empty result", "err", herr)
			}
		}
		data := res.Data
		if native {
			if data, err = nativeForClient(data, req.p.revision); err != nil {
				s.fail(w, r, &Exception{Code: codeNotImplemented, Name: "NOT_IMPLEMENTED", Text: err.Error() + "; use another FORMAT"})
				return err
			}
		}
		s.respond(w, r, req, res, outFormat, data, time.Since(start))
		return nil
	}
	if err != nil {
		s.fail(w, r, asException(err).forUser(req))
		return err
	}
	encode := func(chunk []byte) ([]byte, error) {
		if native {
			var err error
			if chunk, err = nativeForClient(chunk, req.p.revision); err != nil {
				return nil, fmt.Errorf("cannot send this result as Native at client_protocol_version %d: %w", req.p.revision, err)
			}
		}
		if req.p.compress {
			return compressBlocks(chunk, req.p.method)
		}
		return chunk, nil
	}
	data, err := encode(first)
	if err != nil {
		s.fail(w, r, &Exception{Code: codeNotImplemented, Name: "NOT_IMPLEMENTED", Text: err.Error() + "; use another FORMAT"})
		return err
	}
	h := w.Header()
	// What is known when the headers go out: the first chunk's counts.
	s.resultHeaders(h, req, outFormat, rs.RowsRead, rs.BytesRead, 0, 0, len(data), time.Since(start))
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	for {
		if _, err := w.Write(data); err != nil {
			s.opts.logger.Info("client went away during a streamed result", "remote", r.RemoteAddr, "err", err)
			return err
		}
		if flusher != nil {
			flusher.Flush()
		}
		chunk, err := rs.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err == nil {
			data, err = encode(chunk)
		}
		if err != nil {
			s.opts.logger.Warn("streamed query failed after its first rows were sent; aborting the response", "remote", r.RemoteAddr, "err", err)
			panic(http.ErrAbortHandler)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
}

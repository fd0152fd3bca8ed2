package otelbridge

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolgate/toolgate/otelbridge/sampling"
	"github.com/toolgate/toolgate/otelbridge/spool"
)

// TestRedTeamForeignInvalidUTF8Span (red team): a span the executor did
// not make, on the same provider — an HTTP client's instrumentation
// recording the error a hostile server sent (exception.message with
// invalid UTF-8), a status description, an event name — must not take
// the decisions exported with it down (protobuf string fields must be
// valid UTF-8; one bad string fails the marshalling of the whole
// request), with the spool on or off; and the span itself is delivered,
// its bad bytes escaped, not lost.
func TestRedTeamForeignInvalidUTF8Span(t *testing.T) {
	for _, spooled := range []bool{false, true} {
		t.Run(fmt.Sprint("spool=", spooled), func(t *testing.T) {
			r := startReceiver(t)
			cfg := Config{Endpoint: r.addr, Insecure: true, SkipCheck: true,
				Sampling: sampling.Config{Setting: sampling.MustParse("all")},
				Batch:    BatchConfig{BatchTimeout: time.Hour, BatchSize: 512}}
			if spooled {
				cfg.Spool = spool.Config{Dir: t.TempDir()}
			}
			p, err := Setup(context.Background(), cfg)
			require.NoError(t, err)
			tr := p.Tracer("t")
			decide(tr, "before", 5)
			_, s := tr.Start(context.Background(), "GET \xff/evil", trace.WithAttributes(attribute.String("http.url", "http://x/\xc3\x28")))
			s.RecordError(errors.New("server said \xfe\xfe"))
			s.AddEvent("ev\xff", trace.WithAttributes(attribute.StringSlice("list", []string{"ok", "\xed\xa0\x80"})))
			s.SetStatus(2, "bad \xff status")
			s.End()
			decide(tr, "after", 5)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			require.NoError(t, p.Shutdown(ctx))
			seen := map[string]bool{}
			for _, rs := range r.spans() {
				seen[rs.span.GetName()] = true
			}
			for i := range 5 {
				assert.True(t, seen[fmt.Sprint("before-", i)], "before-%d", i)
				assert.True(t, seen[fmt.Sprint("after-", i)], "after-%d", i)
			}
			assert.True(t, seen[`GET \xff/evil`], "the foreign span delivered, escaped: %v", seen)
			assert.Zero(t, p.Stats().Lost())
		})
	}
}

package spool_test

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/toolgate/toolgate/otelbridge/spool"
)

// memClient is an otlptrace.Client that keeps what it is sent, or fails
// (codes.Unavailable) while down.
type memClient struct {
	down atomic.Bool
	mu   sync.Mutex
	got  []*tracepb.Span
	reqs int
}

func (c *memClient) Start(context.Context) error { return nil }
func (c *memClient) Stop(context.Context) error  { return nil }
func (c *memClient) UploadTraces(_ context.Context, rs []*tracepb.ResourceSpans) error {
	if c.down.Load() {
		return status.Error(codes.Unavailable, "collector down")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reqs++
	for _, r := range rs {
		for _, ss := range r.GetScopeSpans() {
			c.got = append(c.got, ss.GetSpans()...)
		}
	}
	return nil
}

// spans returns the received spans by name (several copies possible).
func (c *memClient) byName() map[string][]*tracepb.Span {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string][]*tracepb.Span{}
	for _, s := range c.got {
		out[s.GetName()] = append(out[s.GetName()], s)
	}
	return out
}

func (c *memClient) names() []string {
	var out []string
	for n := range c.byName() {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func attr(s *tracepb.Span, key string) (string, bool) {
	for _, kv := range s.GetAttributes() {
		if kv.GetKey() == key {
			v := kv.GetValue()
			switch {
			case v.GetStringValue() != "":
				return v.GetStringValue(), true
			case v.GetBoolValue():
				return "true", true
			}
			return v.String(), true
		}
	}
	return "", false
}

// rig is a spool behind a tracer provider.
type rig struct {
	sp *spool.Spool
	tp *sdktrace.TracerProvider
	tr trace.Tracer
}

func open(t testing.TB, cfg spool.Config, c *memClient, opts ...spool.Option) *rig {
	t.Helper()
	sp, err := spool.Open(context.Background(), cfg, c, opts...)
	require.NoError(t, err)
	r := &rig{sp: sp}
	r.tp, r.tr = newTP(sp)
	return r
}

func newTP(sp *spool.Spool) (*sdktrace.TracerProvider, trace.Tracer) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sp))
	return tp, tp.Tracer("spool-test")
}

func sortStrings(s []string) { sort.Strings(s) }

// end makes and ends a span called name.
func (r *rig) end(name string) {
	_, s := r.tr.Start(context.Background(), name)
	s.SetAttributes(attribute.String("phase", "final"))
	s.End()
}

// lastSegment is the path of the log's last segment file.
func lastSegment(t require.TestingT, dir string) string {
	ents, err := os.ReadDir(filepath.Join(dir, "wal"))
	require.NoError(t, err)
	var names []string
	for _, e := range ents {
		if len(e.Name()) == 20 {
			names = append(names, e.Name())
		}
	}
	require.NotEmpty(t, names)
	sort.Strings(names)
	return filepath.Join(dir, "wal", names[len(names)-1])
}

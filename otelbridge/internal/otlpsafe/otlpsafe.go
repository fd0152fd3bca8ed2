package otlpsafe

import (
	"context"
	"unicode/utf8"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/toolgate/toolgate/gate"
)

// Sanitize rewrites, in place, every string field of rs that is not valid
// UTF-8; it reports whether it changed any.
func Sanitize(rs []*tracepb.ResourceSpans) bool {
	var f fixer
	for _, r := range rs {
		f.str(&r.SchemaUrl)
		if res := r.GetResource(); res != nil {
			f.kvs(res.Attributes)
		}
		for _, ss := range r.GetScopeSpans() {
			f.str(&ss.SchemaUrl)
			if sc := ss.GetScope(); sc != nil {
				f.str(&sc.Name)
				f.str(&sc.Version)
				f.kvs(sc.Attributes)
			}
			for _, s := range ss.GetSpans() {
				f.str(&s.Name)
				f.str(&s.TraceState)
				f.kvs(s.Attributes)
				for _, e := range s.GetEvents() {
					f.str(&e.Name)
					f.kvs(e.Attributes)
				}
				for _, l := range s.GetLinks() {
					f.str(&l.TraceState)
					f.kvs(l.Attributes)
				}
				if st := s.GetStatus(); st != nil {
					f.str(&st.Message)
				}
			}
		}
	}
	return f.changed
}

type fixer struct{ changed bool }

func (f *fixer) str(p *string) {
	if utf8.ValidString(*p) {
		return
	}
	*p = gate.SafeText(*p, 4*len(*p)+1) // escaped, never cut
	f.changed = true
}

func (f *fixer) kvs(kvs []*commonpb.KeyValue) {
	for _, kv := range kvs {
		if kv == nil {
			continue
		}
		f.str(&kv.Key)
		f.value(kv.GetValue())
	}
}

func (f *fixer) value(v *commonpb.AnyValue) {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		f.str(&x.StringValue)
	case *commonpb.AnyValue_ArrayValue:
		for _, e := range x.ArrayValue.GetValues() {
			f.value(e)
		}
	case *commonpb.AnyValue_KvlistValue:
		f.kvs(x.KvlistValue.GetValues())
	}
}

// Client is an otlptrace.Client that sanitizes what it uploads and keeps
// each request under MaxRequestBytes: a batch larger than the receiver
// takes is refused whole (ResourceExhausted, which the OTLP exporter does
// not retry), every decision in it lost.
type Client struct{ otlptrace.Client }

// UploadTraces sanitizes rs (Sanitize) and uploads it in requests of at
// most MaxRequestBytes (Split), one after the other; it returns the first
// error (the requests before it were delivered).
func (c Client) UploadTraces(ctx context.Context, rs []*tracepb.ResourceSpans) error {
	Sanitize(rs)
	for _, req := range Split(rs, MaxRequestBytes) {
		if len(req) == 1 && len(req[0].ScopeSpans) == 1 && len(req[0].ScopeSpans[0].Spans) == 1 {
			Fit(&tracepb.TracesData{ResourceSpans: req}, MaxRequestBytes) // one span larger than a request
		}
		if err := c.Client.UploadTraces(ctx, req); err != nil {
			return err
		}
	}
	return nil
}

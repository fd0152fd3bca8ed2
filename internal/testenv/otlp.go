package testenv

import (
	"context"
	"errors"
	"fmt"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// CheckExportable reports why spans would not survive an OTLP export, or
// nil. It checks two things:
//
//   - every string of every span is valid UTF-8: the span name, the status
//     description, the instrumentation scope, every string and string-slice
//     attribute of the span, its events, links and resource, and every
//     event name;
//   - the OTLP exporter's own conversion of the spans (otlptrace.New over a
//     client that does what the gRPC client does with a batch: build the
//     ExportTraceServiceRequest and marshal it) passes proto.Marshal, which
//     rejects invalid UTF-8 in a string field and so fails the whole batch.
func CheckExportable(ctx context.Context, spans ...tracetest.SpanStub) error {
	var errs []error
	for i, s := range spans {
		if err := checkUTF8(s); err != nil {
			errs = append(errs, fmt.Errorf("span %d (%q): %w", i, s.Name, err))
		}
	}
	exp, err := otlptrace.New(ctx, marshalClient{})
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	defer func() { _ = exp.Shutdown(ctx) }()
	if err := exp.ExportSpans(ctx, tracetest.SpanStubs(spans).Snapshots()); err != nil {
		errs = append(errs, fmt.Errorf("OTLP export request: %w", err))
	}
	return errors.Join(errs...)
}

// marshalClient is an otlptrace.Client that marshals each request as the
// gRPC client would and sends nothing.
type marshalClient struct{}

func (marshalClient) Start(context.Context) error { return nil }
func (marshalClient) Stop(context.Context) error  { return nil }

func (marshalClient) UploadTraces(_ context.Context, rs []*tracepb.ResourceSpans) error {
	_, err := proto.Marshal(&coltracepb.ExportTraceServiceRequest{ResourceSpans: rs})
	return err
}

func checkUTF8(s tracetest.SpanStub) error {
	var errs []error
	str := func(where, v string) {
		if !utf8.ValidString(v) {
			errs = append(errs, fmt.Errorf("%s is not valid UTF-8: %q", where, v))
		}
	}
	kvs := func(where string, attrs []attribute.KeyValue) {
		for _, kv := range attrs {
			str(where+" key", string(kv.Key))
			switch kv.Value.Type() {
			case attribute.STRING:
				str(where+" "+string(kv.Key), kv.Value.AsString())
			case attribute.STRINGSLICE:
				for j, v := range kv.Value.AsStringSlice() {
					str(fmt.Sprintf("%s %s[%d]", where, kv.Key, j), v)
				}
			}
		}
	}
	str("name", s.Name)
	str("status description", s.Status.Description)
	str("scope name", s.InstrumentationScope.Name)
	str("scope version", s.InstrumentationScope.Version)
	kvs("attribute", s.Attributes)
	for i, ev := range s.Events {
		str(fmt.Sprintf("event %d name", i), ev.Name)
		kvs(fmt.Sprintf("event %d attribute", i), ev.Attributes)
	}
	for i, l := range s.Links {
		kvs(fmt.Sprintf("link %d attribute", i), l.Attributes)
	}
	if s.Resource != nil {
		kvs("resource attribute", s.Resource.Attributes())
	}
	return errors.Join(errs...)
}

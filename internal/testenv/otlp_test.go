package testenv_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/toolgate/toolgate/internal/testenv"
)

// TestCheckExportable holds the check to what OTLP's encoding does: a
// single invalid byte anywhere in a span fails proto.Marshal of the whole
// request (the fault the gate's SafeText exists for), and the check names
// the field.
func TestCheckExportable(t *testing.T) {
	const bad = "rm -rf ~/\xc3"
	tests := []struct {
		name  string
		span  func(*tracetest.SpanStub)
		field string // "" when the span is exportable
	}{
		{"valid", func(*tracetest.SpanStub) {}, ""},
		{"escaped", func(s *tracetest.SpanStub) {
			s.Attributes = []attribute.KeyValue{attribute.String("gate.reason", `rm -rf ~/\xc3`)}
		}, ""},
		{"attribute", func(s *tracetest.SpanStub) { s.Attributes = []attribute.KeyValue{attribute.String("gate.reason", bad)} }, "attribute gate.reason"},
		{"string slice", func(s *tracetest.SpanStub) {
			s.Attributes = []attribute.KeyValue{attribute.StringSlice("gate.verdicts", []string{"ok", bad})}
		}, "gate.verdicts[1]"},
		{"name", func(s *tracetest.SpanStub) { s.Name = "execute_tool \xff" }, "name"},
		{"status", func(s *tracetest.SpanStub) { s.Status = sdktrace.Status{Code: codes.Error, Description: bad} }, "status description"},
		{"event", func(s *tracetest.SpanStub) {
			s.Events = []sdktrace.Event{{Name: "e", Attributes: []attribute.KeyValue{attribute.String("x", bad)}}}
		}, "event 0 attribute x"},
		{"event name", func(s *tracetest.SpanStub) { s.Events = []sdktrace.Event{{Name: bad}} }, "event 0 name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tracetest.SpanStub{Name: "execute_tool bash"}
			tt.span(&s)
			err := testenv.CheckExportable(context.Background(), s, tracetest.SpanStub{Name: "neighbour"})
			if tt.field == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.field)
			assert.Contains(t, err.Error(), "OTLP export request", "proto.Marshal rejects the whole request")
		})
	}
}

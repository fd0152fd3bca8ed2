package spanclass

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/toolgate/toolgate/gate"
)

func TestOf(t *testing.T) {
	tests := []struct {
		name  string
		span  string
		attrs []attribute.KeyValue
		want  Class
	}{
		{"plain span", "GET /", nil, Class{}},
		{"agent by operation", "anything", []attribute.KeyValue{semconv.GenAIOperationNameInvokeAgent}, Class{Agent: true}},
		{"workflow by operation", "x", []attribute.KeyValue{semconv.GenAIOperationNameInvokeWorkflow}, Class{Agent: true}},
		{"agent by name", "invoke_agent coder", nil, Class{Agent: true}},
		{"chat named like an agent is not one", "invoke_agent x", []attribute.KeyValue{semconv.GenAIOperationNameChat}, Class{}},
		{"allowed call", "execute_tool ls", []attribute.KeyValue{gate.AttrGated.Bool(true), gate.AttrAction.String("allow")},
			Class{Decision: true}},
		{"denied call", "execute_tool rm", []attribute.KeyValue{gate.AttrGated.Bool(true), gate.AttrAction.String("deny")},
			Class{Decision: true, Denied: true}},
		{"priority marks a decision denied", "execute_tool rm", []attribute.KeyValue{gate.AttrGated.Bool(true),
			gate.AttrSamplingPriority.String("1")}, Class{Decision: true, Denied: true}},
		{"priority without a decision is not a denial", "other", []attribute.KeyValue{gate.AttrSamplingPriority.Int(1)}, Class{}},
		{"priority 0 float", "execute_tool x", []attribute.KeyValue{gate.AttrGated.Bool(true), gate.AttrSamplingPriority.Float64(0)},
			Class{Decision: true}},
		{"refusal before the gate", "execute_tool nope", []attribute.KeyValue{gate.AttrGated.Bool(false),
			gate.AttrAction.String("deny"), gate.AttrStage.String(string(gate.StageRegistry))},
			Class{Decision: true, Denied: true, PreGate: true}},
		{"opt-out", "execute_tool y", []attribute.KeyValue{gate.AttrOptOut.Bool(true)}, Class{Decision: true}},
		{"approval and rewrite", "execute_tool z", []attribute.KeyValue{gate.AttrAction.String("allow"),
			gate.AttrApproval.String("approved"), gate.AttrRewritten.Bool(true)},
			Class{Decision: true, Approval: true, Rewrite: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tracetest.SpanStub{Name: tt.span, Attributes: tt.attrs}.Snapshot()
			assert.Equal(t, tt.want, Of(s))
		})
	}
}

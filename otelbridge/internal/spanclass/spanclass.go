// Package spanclass reads what otelbridge's processors need to know about
// a finished span from its attributes: is it a gate decision, a denial, an
// agent span, a refusal before the gate, an approval or a rewrite. The
// sampling processor (package sampling) and the batch processor's drop
// priorities (package otelbridge) classify spans alike through it.
package spanclass

import (
	"strings"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/toolgate/toolgate/gate"
)

// Class is what the processors need to know about a span.
type Class struct {
	Decision bool // gate.gated or gate.opt_out true, or gate.action set
	Denied   bool // a decision with gate.action == "deny", or sampling.priority > 0
	Agent    bool // an invoke_agent / invoke_workflow span
	PreGate  bool // gate.stage is a stage before the gate (gate.Stage.PreGate)
	Approval bool // gate.approval set: an approver answered (approved, declined, timeout, invalid)
	Rewrite  bool // gate.rewritten true: a gate rewrote the input
}

// Of reads s's attributes once and classifies it.
func Of(s sdktrace.ReadOnlySpan) Class {
	var c Class
	var op string
	for _, kv := range s.Attributes() {
		switch kv.Key {
		case gate.AttrGated, gate.AttrOptOut:
			if kv.Value.AsBool() {
				c.Decision = true
			}
		case gate.AttrAction:
			c.Decision = true
			if kv.Value.AsString() == string(gate.ActionDeny) {
				c.Denied = true
			}
		case gate.AttrStage:
			c.PreGate = gate.Stage(kv.Value.AsString()).PreGate()
		case gate.AttrApproval:
			c.Approval = kv.Value.AsString() != ""
		case gate.AttrRewritten:
			c.Rewrite = kv.Value.AsBool()
		case gate.AttrSamplingPriority:
			if samplingPriority(kv.Value) > 0 {
				c.Denied = true
			}
		case semconv.GenAIOperationNameKey:
			op = kv.Value.AsString()
		}
	}
	// A priority without a decision (someone else's span) is not a denial.
	c.Denied = c.Denied && c.Decision
	switch op {
	case semconv.GenAIOperationNameInvokeAgent.Value.AsString(),
		semconv.GenAIOperationNameInvokeWorkflow.Value.AsString():
		c.Agent = true
	case "":
		name := s.Name()
		c.Agent = strings.HasPrefix(name, "invoke_agent") || strings.HasPrefix(name, "invoke_workflow")
	}
	return c
}

// samplingPriority reads sampling.priority whatever its type.
func samplingPriority(v attribute.Value) float64 {
	switch v.Type() {
	case attribute.INT64:
		return float64(v.AsInt64())
	case attribute.FLOAT64:
		return v.AsFloat64()
	case attribute.BOOL:
		if v.AsBool() {
			return 1
		}
	case attribute.STRING:
		if s := v.AsString(); s != "" && s != "0" {
			return 1
		}
	}
	return 0
}

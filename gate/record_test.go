package gate_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"

	"github.com/toolgate/toolgate/gate"
)

func full() gate.Record {
	return gate.Record{
		Gated: true, Action: gate.ActionDeny, Reason: "no \xff", Source: "classify.bash", Rule: "rm.root",
		ErrorKind: gate.ErrorKindInvalid, Risk: gate.RiskHigh, Approval: gate.ApprovalDeclined, Approver: "ui",
		OptOut: true, Rewritten: true, RewrittenBy: "normalise", OriginalInputHash: gate.InputHash([]byte(`{}`)), Rounds: 2,
		Verdicts: []gate.Verdict{{Gate: "normalise", Action: gate.ActionAllow, Rewrote: true}, {Gate: "classify.bash", Action: gate.ActionDeny, Risk: gate.RiskHigh, Rule: "rm.root"}},
		Duration: 1500 * time.Nanosecond, Stage: gate.StageGate, Calls: 3,
		Chain:      gate.Link{ID: "chain-1", Seq: 2, Prev: "prev", Hash: "hash"},
		ApprovalID: "apr-1", ApprovalWait: 90*time.Second + 250*time.Millisecond + 7*time.Microsecond,
	}
}

// Every attribute the encoder can write is one of Fields (plus
// sampling.priority), and every field is written by a full record: the
// audit columns generated from Fields cover the span.
func TestFieldsCoverAttributes(t *testing.T) {
	rec := full()
	got := map[attribute.Key]attribute.Value{}
	for _, kv := range rec.Attributes(nil, 0) {
		_, dup := got[kv.Key]
		require.False(t, dup, "key %s written twice", kv.Key)
		got[kv.Key] = kv.Value
	}
	want := map[attribute.Key]bool{gate.AttrSamplingPriority: true}
	for _, f := range gate.Fields() {
		want[f.Key] = true
		v, ok := got[f.Key]
		require.True(t, ok, "field %s (%s) not written by a full record", f.Key, f.Name)
		switch f.Type {
		case gate.FieldBool:
			assert.Equal(t, attribute.BOOL, v.Type(), f.Key)
		case gate.FieldInt:
			assert.Equal(t, attribute.INT64, v.Type(), f.Key)
		case gate.FieldStringList:
			assert.Equal(t, attribute.STRINGSLICE, v.Type(), f.Key)
		default:
			assert.Equal(t, attribute.STRING, v.Type(), f.Key)
		}
	}
	for k := range got {
		assert.True(t, want[k], "attribute %s is not in gate.Fields", k)
	}
	assert.Equal(t, `no \xff`, got[gate.AttrReason].AsString())
	assert.Equal(t, "rm.root", got[gate.AttrRule].AsString())
	assert.Equal(t, []string{"normalise|rewrite||", "classify.bash|deny|high|rm.root"}, got[gate.AttrVerdicts].AsStringSlice())
}

func TestRecordAttributesShapes(t *testing.T) {
	tests := []struct {
		name   string
		rec    gate.Record
		want   map[attribute.Key]string
		absent []attribute.Key
	}{
		{"ungated", gate.Record{}, map[attribute.Key]string{gate.AttrGated: "false"}, []attribute.Key{gate.AttrAction, gate.AttrVerdicts}},
		{"ungated opt-out", gate.Record{OptOut: true}, map[attribute.Key]string{gate.AttrGated: "false", gate.AttrOptOut: "true"}, []attribute.Key{gate.AttrAction}},
		{"single verdict equal to the decision is left out",
			gate.Record{Gated: true, Action: gate.ActionAllow, Source: "a", Verdicts: []gate.Verdict{{Gate: "a", Action: gate.ActionAllow}}},
			map[attribute.Key]string{gate.AttrAction: "allow", gate.AttrSource: "a"}, []attribute.Key{gate.AttrVerdicts, gate.AttrSamplingPriority, gate.AttrRounds, gate.AttrRewritten}},
		{"single verdict turned round by an approval is kept",
			gate.Record{Gated: true, Action: gate.ActionAllow, Source: "a", Approval: gate.ApprovalApproved, Approver: "ui", Verdicts: []gate.Verdict{{Gate: "a", Action: gate.ActionAsk}}},
			map[attribute.Key]string{gate.AttrVerdicts: `["a|ask||"]`, gate.AttrApproval: "approved"}, nil},
		{"deny is prioritised", gate.Record{Gated: true, Action: gate.ActionDeny, Source: "a", Reason: "r"},
			map[attribute.Key]string{gate.AttrSamplingPriority: "1", gate.AttrReason: "r"}, nil},
		{"the deciding gate's rule is its own attribute", gate.Record{Gated: true, Action: gate.ActionDeny, Source: "no-prod", Rule: "prod.write", Reason: "writes to prod"},
			map[attribute.Key]string{gate.AttrRule: "prod.write", gate.AttrReason: "writes to prod"}, nil},
		{"no rule, no attribute", gate.Record{Gated: true, Action: gate.ActionDeny, Source: "a", Reason: "r [not.a.rule]"},
			map[attribute.Key]string{gate.AttrAction: "deny"}, []attribute.Key{gate.AttrRule}},
		{"a durable approval's ID and wait", gate.Record{Gated: true, Action: gate.ActionAllow, Source: "a", Approval: gate.ApprovalApproved, Approver: "alice@example.com",
			ApprovalID: "apr-7", ApprovalWait: 3*time.Minute + 999*time.Microsecond},
			map[attribute.Key]string{gate.AttrApprovalID: "apr-7", gate.AttrApprovalWait: "180000", gate.AttrApprover: "alice@example.com"}, nil},
		{"a pending approval: the ID, no wait yet", gate.Record{Gated: true, Action: gate.ActionDeny, Source: "a", Approval: gate.ApprovalPending, Approver: "inbox", ApprovalID: "apr-8"},
			map[attribute.Key]string{gate.AttrApprovalID: "apr-8", gate.AttrApproval: "pending"}, []attribute.Key{gate.AttrApprovalWait}},
		{"a wait under a millisecond is recorded as 1", gate.Record{Gated: true, Action: gate.ActionAllow, Source: "a", Approval: gate.ApprovalApproved, Approver: "cb", ApprovalWait: 300 * time.Microsecond},
			map[attribute.Key]string{gate.AttrApprovalWait: "1"}, []attribute.Key{gate.AttrApprovalID}},
		{"no approval, no approval ID or wait", gate.Record{Gated: true, Action: gate.ActionAllow, Source: "a", ApprovalWait: -time.Second},
			map[attribute.Key]string{}, []attribute.Key{gate.AttrApprovalID, gate.AttrApprovalWait}},
		{"an approval ID is bounded like a name", gate.Record{Gated: true, Action: gate.ActionAllow, Source: "a", ApprovalID: string(make([]byte, 1000))},
			map[attribute.Key]string{}, nil},
		{"names are bounded", gate.Record{Gated: true, Action: gate.ActionAllow, Source: string(make([]byte, 1000))},
			map[attribute.Key]string{}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := map[attribute.Key]attribute.Value{}
			for _, kv := range tc.rec.Attributes(nil, 0) {
				got[kv.Key] = kv.Value
			}
			for k, v := range tc.want {
				assert.Equal(t, v, got[k].Emit(), k)
			}
			for _, k := range tc.absent {
				assert.NotContains(t, got, k)
			}
			if s, ok := got[gate.AttrSource]; ok {
				assert.LessOrEqual(t, len(s.AsString()), gate.MaxNameBytes)
			}
			if s, ok := got[gate.AttrApprovalID]; ok {
				assert.LessOrEqual(t, len(s.AsString()), gate.MaxNameBytes)
			}
		})
	}
}

func TestEncodeVerdictsBounded(t *testing.T) {
	vs := make([]gate.Verdict, gate.MaxVerdicts+10)
	for i := range vs {
		vs[i] = gate.Verdict{Gate: fmt.Sprintf("g|%d", i), Action: gate.ActionAllow}
	}
	out := gate.EncodeVerdicts(vs)
	require.Len(t, out, gate.MaxVerdicts+1)
	assert.Equal(t, "g/0|allow||", out[0])
	assert.Equal(t, "…|more|10|", out[gate.MaxVerdicts])
	g, a, r, rule := gate.ParseVerdict(out[0])
	assert.Equal(t, []string{"g/0", "allow", "", ""}, []string{g, a, r, rule})
}

func TestMemoryGrants(t *testing.T) {
	ctx := context.Background()
	m := gate.NewMemoryGrants(2)
	require.NoError(t, m.Grant(ctx, "r1", "k"))
	ok, err := m.Granted(ctx, "r1", "k")
	require.NoError(t, err)
	assert.True(t, ok)
	ok, _ = m.Granted(ctx, "r2", "k")
	assert.False(t, ok, "grants are per run")
	require.NoError(t, m.Grant(ctx, "r2", "k"))
	require.NoError(t, m.Grant(ctx, "r3", "k"))
	ok, _ = m.Granted(ctx, "r1", "k")
	assert.False(t, ok, "the oldest run is forgotten past the bound")
	ok, _ = m.Granted(ctx, "r3", "k")
	assert.True(t, ok)
}

func TestApprovalAnswersAreBoundToTheirRequest(t *testing.T) {
	req := gate.ApprovalRequest{CallHash: "h1"}
	for _, res := range []gate.ApprovalResult{req.Approve("a", ""), req.ApproveForRun("a", ""), req.Decline("a", ""), req.TimedOut("a", "")} {
		assert.Equal(t, "h1", res.CallHash)
	}
	assert.True(t, req.Approve("a", "").Approved())
	assert.Equal(t, gate.GrantScopeRun, req.ApproveForRun("a", "").Remember)
	assert.False(t, req.Decline("a", "").Approved())
	assert.False(t, req.TimedOut("a", "").Approved())
}

// A call the executor refused before any gate is a decision of its own
// stage: deny by the executor, not gated, its error kind and reason, and
// sampling.priority=1 so every sampler keeps it; a record of a call that
// passed the checks but was not gated records only its stage.
func TestRecordAttributesStages(t *testing.T) {
	for _, tc := range []struct {
		name string
		rec  gate.Record
		want map[attribute.Key]attribute.Value
	}{
		{"registry", gate.Record{Stage: gate.StageRegistry, Action: gate.ActionDeny, Source: gate.SourceExecutor, Reason: "tool not registered", ErrorKind: "tool_not_found"},
			map[attribute.Key]attribute.Value{
				gate.AttrGated: attribute.BoolValue(false), gate.AttrStage: attribute.StringValue("registry"),
				gate.AttrAction: attribute.StringValue("deny"), gate.AttrSource: attribute.StringValue("executor"),
				gate.AttrReason: attribute.StringValue("tool not registered"), gate.AttrError: attribute.StringValue("tool_not_found"),
				gate.AttrSamplingPriority: attribute.IntValue(1),
			}},
		{"reachability", gate.Record{Stage: gate.StageReachability, Action: gate.ActionDeny, Source: gate.SourceExecutor, Reason: "r", ErrorKind: "tool_not_reachable"},
			map[attribute.Key]attribute.Value{
				gate.AttrGated: attribute.BoolValue(false), gate.AttrStage: attribute.StringValue("reachability"),
				gate.AttrAction: attribute.StringValue("deny"), gate.AttrSource: attribute.StringValue("executor"),
				gate.AttrReason: attribute.StringValue("r"), gate.AttrError: attribute.StringValue("tool_not_reachable"),
				gate.AttrSamplingPriority: attribute.IntValue(1),
			}},
		{"input", gate.Record{Stage: gate.StageInput, Action: gate.ActionDeny, Source: gate.SourceExecutor, Reason: "bad \xff", ErrorKind: "invalid_input"},
			map[attribute.Key]attribute.Value{
				gate.AttrGated: attribute.BoolValue(false), gate.AttrStage: attribute.StringValue("input"),
				gate.AttrAction: attribute.StringValue("deny"), gate.AttrSource: attribute.StringValue("executor"),
				gate.AttrReason: attribute.StringValue(`bad \xff`), gate.AttrError: attribute.StringValue("invalid_input"),
				gate.AttrSamplingPriority: attribute.IntValue(1),
			}},
		{"ungated", gate.Record{Stage: gate.StageGate},
			map[attribute.Key]attribute.Value{gate.AttrGated: attribute.BoolValue(false), gate.AttrStage: attribute.StringValue("gate")}},
		{"opt-out", gate.Record{Stage: gate.StageGate, OptOut: true},
			map[attribute.Key]attribute.Value{gate.AttrGated: attribute.BoolValue(false), gate.AttrOptOut: attribute.BoolValue(true), gate.AttrStage: attribute.StringValue("gate")}},
		{"no stage", gate.Record{}, map[attribute.Key]attribute.Value{gate.AttrGated: attribute.BoolValue(false)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := map[attribute.Key]attribute.Value{}
			for _, kv := range tc.rec.Attributes(nil, 0) {
				got[kv.Key] = kv.Value
			}
			assert.Equal(t, tc.want, got)
		})
	}
	for _, s := range gate.Stages() {
		assert.Equal(t, s != gate.StageGate, s.PreGate(), s)
	}
	assert.False(t, gate.Stage("").PreGate())
}

// Record.Calls is recorded as gate.calls only when the record stands for
// more than one call: 0 and 1 (and a nonsense negative count) are one call
// and leave the attribute out, which readers take as 1.
func TestRecordAttributesCalls(t *testing.T) {
	grouped := gate.Record{Stage: gate.StageRun, Action: gate.ActionDeny, Source: gate.SourceExecutor,
		ErrorKind: "run_aborted", Reason: "the run was aborted"}
	for _, tc := range []struct {
		name  string
		calls int64
		want  attribute.Value // invalid: absent
	}{
		{"zero is one call", 0, attribute.Value{}},
		{"one call", 1, attribute.Value{}},
		{"negative is one call", -5, attribute.Value{}},
		{"two calls", 2, attribute.Int64Value(2)},
		{"a full group", 64, attribute.Int64Value(64)},
		{"large", 1 << 40, attribute.Int64Value(1 << 40)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, rec := range []gate.Record{grouped, {Gated: true, Action: gate.ActionAllow, Source: "a"}, {}} {
				rec.Calls = tc.calls
				got := map[attribute.Key]attribute.Value{}
				for _, kv := range rec.Attributes(nil, 0) {
					got[kv.Key] = kv.Value
				}
				v, ok := got[gate.AttrCalls]
				assert.Equal(t, tc.want.Type() != attribute.INVALID, ok)
				if ok {
					assert.Equal(t, tc.want, v)
				}
				// The rest of the record is encoded as without Calls.
				rec.Calls = 0
				want := map[attribute.Key]attribute.Value{}
				for _, kv := range rec.Attributes(nil, 0) {
					want[kv.Key] = kv.Value
				}
				delete(got, gate.AttrCalls)
				assert.Equal(t, want, got)
			}
		})
	}
	var def string
	for _, f := range gate.Fields() {
		if f.Key == gate.AttrCalls {
			assert.Equal(t, "Calls", f.Name)
			assert.Equal(t, gate.FieldInt, f.Type)
			def = f.Default
		}
	}
	assert.Equal(t, "1", def, "a span without gate.calls records one call")
}

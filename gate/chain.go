package gate

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
)

// Chain composes gates into one that runs them in order:
//
//   - the first deny wins and stops the chain (later gates do not run);
//   - an ask does not stop the chain (a later deny still wins, so no human
//     is bothered about a call a policy denies); the first ask is returned
//     when no gate denies;
//   - a rewrite (allow or ask with RewrittenInput that differs from the
//     call's RawInput, ignoring insignificant whitespace) ends the chain at
//     once: the decision carries the rewrite, and the gates that ran before
//     it judged another input, so the caller must validate the rewrite and
//     run the whole chain again on it. The executor does exactly that (see
//     its package doc), so every gate judges the input that runs. A
//     rewrite identical to the current input is no rewrite;
//   - the highest Risk any gate reported is carried on the final decision;
//   - an allow's Source is the gate that reported the highest risk (the
//     first of them), else the first gate: the policy that judged the call,
//     not whichever gate happened to run last. Judge records every member's
//     verdict.
//
// Every member runs through Evaluate, so a member's error, panic, timeout or
// invalid decision is a deny attributed to that member. A decision's Source
// is the member's own Source, else its name (Named, Namer), else "chain[i]".
// An empty chain allows with Source "chain". A nil member is an invalid
// gate: it denies (ErrorKindInvalid) when reached.
func Chain(gates ...Gate) Gate {
	c := chain{gates: make([]Gate, 0, len(gates)), names: make([]string, 0, len(gates))}
	for i, g := range gates {
		c.gates = append(c.gates, g)
		c.names = append(c.names, NameOf(g, "chain["+strconv.Itoa(i)+"]"))
	}
	return c
}

// Members returns the gates of a Chain, in order (a copy); ok is false
// when g is not a Chain (a Named or Scoped chain included). The executor
// uses it to apply the scopes of a chain's members.
func Members(g Gate) (gates []Gate, ok bool) {
	c, ok := g.(chain)
	if !ok {
		return nil, false
	}
	return append([]Gate(nil), c.gates...), true
}

type chain struct {
	gates []Gate
	names []string
}

// Name is "chain".
func (c chain) Name() string { return "chain" }

// Len is the number of gates in the chain.
func (c chain) Len() int { return len(c.gates) }

func (c chain) Decide(ctx context.Context, call ToolCallContext) (Decision, error) {
	d, _ := c.judge(ctx, call, nil, false)
	return d, nil
}

// judge runs the chain, appending verdicts to vs when record is set.
func (c chain) judge(ctx context.Context, call ToolCallContext, vs []Verdict, record bool) (Decision, []Verdict) {
	if len(c.gates) == 0 {
		return Decision{Action: ActionAllow, Source: "chain"}, vs
	}
	var (
		ask   Decision
		asked bool
		risk  RiskLevel
		judge Decision // the allow's attribution: highest risk, else first
		first = true
	)
	for i, g := range c.gates {
		if i > 0 && ctx.Err() != nil {
			d := failClosed(ErrorKindCancelled, c.names[i], ctx.Err())
			if record {
				vs = append(vs, d.verdict())
			}
			return d.WithRisk(risk), vs
		}
		var d Decision
		if inner, ok := g.(chain); ok {
			d, vs = inner.judge(ctx, call, vs, record)
		} else {
			d = Evaluate(ctx, g, call, c.names[i])
			if d.RewrittenInput != nil && sameJSON(d.RewrittenInput, call.RawInput) {
				d.RewrittenInput = nil // a rewrite to the same input is none
			}
			if record {
				vs = append(vs, d.verdict())
			}
		}
		if d.Action == ActionDeny {
			d.Risk = risk.Max(d.Risk)
			return d, vs
		}
		if d.RewrittenInput != nil {
			// The gates before this one judged another input: end the
			// round; the caller validates the rewrite and runs again.
			d.Risk = risk.Max(d.Risk)
			return d, vs
		}
		if first || d.Risk.Max(judge.Risk) != judge.Risk {
			judge, first = d, false
		}
		risk = risk.Max(d.Risk)
		if d.Action == ActionAsk && !asked {
			ask, asked = d, true
		}
	}
	out := judge
	if asked {
		out = ask
	}
	out.Risk = risk
	return out, vs
}

// verdict is d as one gate's verdict.
func (d Decision) verdict() Verdict {
	return Verdict{Gate: d.Source, Action: d.Action, Rewrote: d.RewrittenInput != nil, Risk: d.Risk,
		Rule: d.Rule, Reason: d.Reason, ErrorKind: d.ErrorKind}
}

// sameJSON reports whether a and b are the same bytes once insignificant
// whitespace is removed (json.Compact only drops whitespace, so equal
// results are read identically by every JSON parser).
func sameJSON(a, b json.RawMessage) bool {
	if bytes.Equal(a, b) {
		return true
	}
	var ca, cb bytes.Buffer
	if json.Compact(&ca, a) != nil || json.Compact(&cb, b) != nil {
		return false
	}
	return bytes.Equal(ca.Bytes(), cb.Bytes())
}

// Judge is Evaluate that also records who judged: it appends the verdict
// of g, or of each member when g is a Chain (nested chains flattened), to
// vs and returns the extended slice. The decision is the one Evaluate
// returns for g.
func Judge(ctx context.Context, g Gate, call ToolCallContext, source string, vs []Verdict) (d Decision, out []Verdict) {
	if c, ok := g.(chain); ok {
		n := len(vs)
		defer func() {
			if r := recover(); r != nil {
				d = Evaluate(ctx, panicGate{r}, call, source)
				out = append(vs[:n], d.verdict())
			}
		}()
		return c.judge(ctx, call, vs, true)
	}
	d = Evaluate(ctx, g, call, source)
	if d.RewrittenInput != nil && sameJSON(d.RewrittenInput, call.RawInput) {
		d.RewrittenInput = nil
	}
	return d, append(vs, d.verdict())
}

// panicGate re-raises a recovered panic inside Evaluate, so that it is
// recorded like any gate's panic.
type panicGate struct{ v any }

func (p panicGate) Decide(context.Context, ToolCallContext) (Decision, error) { panic(p.v) }

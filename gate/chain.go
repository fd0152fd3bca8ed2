package gate

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
)

// Chain composes gates into one that runs them in order:
//
//   - the first deny wins and stops the chain (later gates do not run);
//   - an ask does not stop the chain (a later deny still wins, so no human
//     is bothered about a call a policy denies); the first ask is returned
//     when no gate denies;
//   - an allow with RewrittenInput replaces the input the later gates see
//     (Input is the rewrite decoded; RawInput stays what the model sent) and
//     the final decision carries the last rewrite;
//   - the highest Risk any gate reported is carried on the final decision.
//
// Every member runs through Evaluate, so a member's error, panic, timeout or
// invalid decision is a deny attributed to that member. A decision's Source
// is the member's own Source, else its name (Named, Namer), else "chain[i]".
// An allow's Source is the last rewriting member's, else the last member's.
// An empty chain allows with Source "chain".
func Chain(gates ...Gate) Gate {
	c := chain{gates: make([]Gate, 0, len(gates)), names: make([]string, 0, len(gates))}
	for i, g := range gates {
		c.gates = append(c.gates, g)
		c.names = append(c.names, NameOf(g, "chain["+strconv.Itoa(i)+"]"))
	}
	return c
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
	if len(c.gates) == 0 {
		return Decision{Action: ActionAllow, Source: "chain"}, nil
	}
	var (
		ask       Decision
		asked     bool
		risk      RiskLevel
		rewritten json.RawMessage
		allow     Decision
	)
	for i, g := range c.gates {
		if i > 0 && ctx.Err() != nil {
			return failClosed(ErrorKindCancelled, c.names[i], ctx.Err()).WithRisk(risk), nil
		}
		d := Evaluate(ctx, g, call, c.names[i])
		risk = risk.Max(d.Risk)
		switch d.Action {
		case ActionDeny:
			d.Risk = risk
			return d, nil
		case ActionAsk:
			if !asked {
				ask, asked = d, true
			}
		default:
			if d.RewrittenInput == nil && rewritten == nil {
				allow = d
			}
		}
		if d.RewrittenInput != nil {
			var in map[string]any
			if err := json.Unmarshal(d.RewrittenInput, &in); err != nil || in == nil {
				return failClosed(ErrorKindInvalid, d.Source,
					fmt.Errorf("%w: rewritten input is not a JSON object", ErrInvalidDecision)).WithRisk(risk), nil
			}
			call.Input = in
			rewritten = d.RewrittenInput
			if d.Action == ActionAllow {
				allow = d
			}
		}
	}
	var out Decision
	if asked {
		out = ask
	} else {
		out = allow
	}
	out.Risk = risk
	out.RewrittenInput = rewritten
	return out, nil
}

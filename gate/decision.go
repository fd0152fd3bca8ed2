package gate

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Action is what a gate wants done with a call.
type Action string

// Actions. An ask is resolved by an Approver into allow or deny; the span
// and the audit trail only ever record allow or deny.
const (
	ActionAllow Action = "allow"
	ActionDeny  Action = "deny"
	ActionAsk   Action = "ask"
)

// Decision is a gate's answer for one call.
//
// Allow with a non-nil RewrittenInput replaces the call's input; the
// executor validates the rewrite against the tool's schema again and denies
// the call when it is invalid.
type Decision struct {
	Action Action
	// Reason explains deny and ask (required for them); optional for allow.
	Reason string
	// Source names the policy that decided. Chain fills it when empty.
	Source string
	// Risk is the classifier's level, when one ran.
	Risk RiskLevel
	// Rule names the rule of the gate's policy that decided (for example a
	// classifier rule ID such as "fs.delete.root"); optional.
	Rule string
	// RewrittenInput, on allow or ask, is the input to run instead (a JSON
	// object). The executor validates it against the tool's schema and
	// runs every gate again on it; see Chain and the executor's docs.
	RewrittenInput json.RawMessage
	// ErrorKind is set (to one of the ErrorKind* values) only on a deny that
	// is a fail-closed denial: the gate returned an error, panicked, timed
	// out, returned an invalid decision, or the call was cancelled. Evaluate
	// and Chain set it; policies leave it empty.
	ErrorKind string
}

// Allow returns an allow decision.
func Allow() Decision { return Decision{Action: ActionAllow} }

// Deny returns a deny decision with a reason.
func Deny(reason string) Decision { return Decision{Action: ActionDeny, Reason: reason} }

// Ask returns a decision that defers to an Approver, with the reason shown
// to the human.
func Ask(reason string) Decision { return Decision{Action: ActionAsk, Reason: reason} }

// AllowRewritten returns an allow decision that replaces the input.
func AllowRewritten(input json.RawMessage, reason string) Decision {
	return Decision{Action: ActionAllow, Reason: reason, RewrittenInput: input}
}

// WithSource returns a copy of d with Source set.
func (d Decision) WithSource(source string) Decision { d.Source = source; return d }

// WithRisk returns a copy of d with Risk set.
func (d Decision) WithRisk(r RiskLevel) Decision { d.Risk = r; return d }

// ErrInvalidDecision is wrapped by Validate's errors.
var ErrInvalidDecision = errors.New("gate: invalid decision")

// Validate reports whether d is well formed: a known action, a reason on
// deny and ask, a rewrite only on allow or ask (an ask may carry the input an
// earlier gate of a Chain rewrote; the approver is asked about that input),
// an error kind only on deny, and a known risk level. Its errors wrap
// ErrInvalidDecision.
func (d Decision) Validate() error {
	switch d.Action {
	case ActionAllow:
	case ActionDeny, ActionAsk:
		if d.Reason == "" {
			return fmt.Errorf("%w: %s without a reason", ErrInvalidDecision, d.Action)
		}
		if d.Action == ActionDeny && d.RewrittenInput != nil {
			return fmt.Errorf("%w: rewritten input on %s", ErrInvalidDecision, d.Action)
		}
	default:
		return fmt.Errorf("%w: unknown action %q", ErrInvalidDecision, d.Action)
	}
	switch d.ErrorKind {
	case "":
	case ErrorKindError, ErrorKindPanic, ErrorKindTimeout, ErrorKindInvalid, ErrorKindCancelled:
		if d.Action != ActionDeny {
			return fmt.Errorf("%w: error kind %q on %s", ErrInvalidDecision, d.ErrorKind, d.Action)
		}
	default:
		return fmt.Errorf("%w: unknown error kind %q", ErrInvalidDecision, d.ErrorKind)
	}
	switch d.Risk {
	case RiskNone, RiskSafe, RiskReview, RiskHigh:
	default:
		return fmt.Errorf("%w: unknown risk level %q", ErrInvalidDecision, d.Risk)
	}
	return nil
}

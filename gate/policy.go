package gate

import (
	"context"
	"slices"
)

// AllowAll is a policy that allows every call (source "allow-all"). It is
// useful as a chain's explicit default and in benchmarks.
func AllowAll() Gate {
	return Named("allow-all", Func(func(context.Context, ToolCallContext) (Decision, error) {
		return Decision{Action: ActionAllow, Source: "allow-all"}, nil
	}))
}

// DenyTools denies calls to the named tools with reason (source
// "deny-tools") and allows the rest. Unlike reachability (which hides a tool
// from an agent), this is a recorded gate decision.
func DenyTools(reason string, tools ...string) Gate {
	set := slices.Clone(tools)
	return Named("deny-tools", Func(func(_ context.Context, c ToolCallContext) (Decision, error) {
		if slices.Contains(set, c.ToolName) {
			return Decision{Action: ActionDeny, Reason: reason, Source: "deny-tools"}, nil
		}
		return Decision{Action: ActionAllow, Source: "deny-tools"}, nil
	}))
}

// AskTools asks an Approver before calls to the named tools (source
// "ask-tools") and allows the rest.
func AskTools(reason string, tools ...string) Gate {
	set := slices.Clone(tools)
	return Named("ask-tools", Func(func(_ context.Context, c ToolCallContext) (Decision, error) {
		if slices.Contains(set, c.ToolName) {
			return Decision{Action: ActionAsk, Reason: reason, Source: "ask-tools"}, nil
		}
		return Decision{Action: ActionAllow, Source: "ask-tools"}, nil
	}))
}

// AskConsequential asks an Approver before every call of a tool marked
// Consequential (source "consequential") and allows the rest.
func AskConsequential() Gate {
	return Named("consequential", Func(func(_ context.Context, c ToolCallContext) (Decision, error) {
		if c.Consequential {
			return Decision{Action: ActionAsk, Reason: "tool " + c.ToolName + " is consequential", Source: "consequential"}, nil
		}
		return Decision{Action: ActionAllow, Source: "consequential"}, nil
	}))
}

// AskDestructive asks an Approver before calls of tools whose annotations
// do not rule out destructive effects (source "destructive"): a tool is
// treated as destructive unless it declares ReadOnlyHint or an explicit
// DestructiveHint of false (MCP's default for DestructiveHint is true).
// Annotations are untrusted, so this policy only ever makes the gate
// stricter: it asks, it never allows what another gate denies.
func AskDestructive() Gate {
	return Named("destructive", Func(func(_ context.Context, c ToolCallContext) (Decision, error) {
		a := c.Annotations
		destructive := !a.ReadOnlyHint && (a.DestructiveHint == nil || *a.DestructiveHint)
		if destructive {
			return Decision{Action: ActionAsk, Reason: "tool " + c.ToolName + " may be destructive", Source: "destructive"}, nil
		}
		return Decision{Action: ActionAllow, Source: "destructive"}, nil
	}))
}

package gate

// Annotations are hints a tool declares about its behaviour, as in MCP's
// ToolAnnotations (MCP specification 2025-06-18, "Tool annotations"). They
// are untrusted: a gate may use them to be stricter, never to be laxer
// than its own analysis of the call.
type Annotations struct {
	// ReadOnlyHint: the tool does not modify its environment.
	ReadOnlyHint bool `json:"readOnlyHint,omitempty"`
	// DestructiveHint: the tool may perform destructive updates (meaningful
	// when ReadOnlyHint is false). Nil means unknown; MCP's default is true.
	DestructiveHint *bool `json:"destructiveHint,omitempty"`
	// IdempotentHint: repeated calls with the same arguments have no
	// additional effect.
	IdempotentHint bool `json:"idempotentHint,omitempty"`
	// OpenWorldHint: the tool may interact with an open world of external
	// entities (the network). Nil means unknown; MCP's default is true.
	OpenWorldHint *bool `json:"openWorldHint,omitempty"`
}

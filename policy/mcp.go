package policy

import (
	"fmt"
	"time"
)

// MCP is the gateway's section (`mcp:`): the upstream MCP servers `toolgate
// mcp` connects to, and how it serves. See docs/mcp-gateway.md.
type MCP struct {
	// Upstreams are the MCP servers behind the gateway; each one's tools
	// are presented as "<name>_<tool>".
	Upstreams []Upstream `yaml:"upstreams"`
	// Listen is the default of `toolgate mcp --listen` (streamable HTTP on a
	// loopback host:port, e.g. "127.0.0.1:8931"); "" serves stdio.
	Listen string `yaml:"listen"`
	// CallTimeout bounds each upstream tools/call (a Go duration, "60s";
	// "" means 60s). A call past it is an error result for the model.
	CallTimeout string `yaml:"call_timeout"`
}

// Upstream is one MCP server behind the gateway.
type Upstream struct {
	Name    string            `yaml:"name"`    // namespace prefix, [a-zA-Z0-9_-]{1,32}
	Command []string          `yaml:"command"` // stdio: argv of the server process
	Env     map[string]string `yaml:"env"`
	URL     string            `yaml:"url"`     // streamable HTTP
	Roots   []string          `yaml:"roots"`   // the roots the upstream sees (absolute after load)
	Trusted bool              `yaml:"trusted"` // trust the upstream's tool annotations
	Tools   []ToolRule        `yaml:"tools"`   // per-tool rules for this upstream's tools (match on the upstream's own tool name)
	Hide    []string          `yaml:"hide"`    // tools not presented (globs)
}

// DefaultCallTimeout is MCP.CallTimeout's default.
const DefaultCallTimeout = 60 * time.Second

// Timeout is CallTimeout parsed: DefaultCallTimeout when empty. Errors
// (wrapping ErrPolicy): not a Go duration, or not positive.
func (m MCP) Timeout() (time.Duration, error) {
	if m.CallTimeout == "" {
		return DefaultCallTimeout, nil
	}
	d, err := time.ParseDuration(m.CallTimeout)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%w: mcp.call_timeout %q: want a positive Go duration such as 60s", ErrPolicy, m.CallTimeout)
	}
	return d, nil
}

package policy

// MCP is the gateway's section (`mcp:`): the upstream MCP servers `toolgate mcp` connects to.
type MCP struct {
	Upstreams []Upstream `yaml:"upstreams"`
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

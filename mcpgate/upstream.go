package mcpgate

import (
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
)

// Upstream is one MCP server behind the gateway (the `mcp.upstreams`
// entries of the policy file, see package policy).
type Upstream struct {
	// Name is the namespace prefix of the upstream's tools:
	// [a-zA-Z0-9_-]{1,32}, unique among the upstreams.
	Name string
	// Command is the argv of a server the gateway starts and speaks to
	// over stdio; URL is a streamable-HTTP endpoint. Exactly one is set
	// (or neither, with WithTransport for this name).
	Command []string
	// Env is added to the environment of Command.
	Env map[string]string
	URL string
	// Roots are the directories (absolute) the upstream is told are the
	// client's roots. The client's own roots never reach an upstream:
	// the gateway is the upstream's client. Empty: the gateway declares
	// no roots capability, so the upstream keeps its own configuration.
	Roots []string
	// Trusted makes the gateway believe the upstream's tool annotations
	// (readOnlyHint, destructiveHint, openWorldHint). Untrusted (the
	// default): every tool is taken as not read-only, destructive and
	// open-world, as MCP's defaults say.
	Trusted bool
	// Tools are per-tool rules, matched on the upstream's own tool name
	// (exact or a path.Match glob), first match wins, before the built-in
	// table (BuiltinRules).
	Tools []Rule
	// Hide lists tools (exact or path.Match globs, on the upstream's own
	// name) that are neither listed nor callable.
	Hide []string
}

var upstreamName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,32}$`)

// Validate reports the first problem of u: a bad name, both or none of
// Command and URL (unless transport says another transport is given), a URL
// that is not http(s), a relative root, an invalid rule or glob.
func (u Upstream) Validate(hasTransport bool) error {
	if !upstreamName.MatchString(u.Name) {
		return fmt.Errorf("mcpgate: upstream name %q: want [a-zA-Z0-9_-]{1,32}", u.Name)
	}
	switch {
	case hasTransport:
	case len(u.Command) > 0 && u.URL != "":
		return fmt.Errorf("mcpgate: upstream %s: both command and url are set; give one", u.Name)
	case len(u.Command) == 0 && u.URL == "":
		return fmt.Errorf("mcpgate: upstream %s: give command (stdio) or url (streamable HTTP)", u.Name)
	case u.URL != "":
		p, err := url.Parse(u.URL)
		if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			return fmt.Errorf("mcpgate: upstream %s: url %q is not an http(s) URL", u.Name, u.URL)
		}
	}
	for _, r := range u.Roots {
		if !filepath.IsAbs(r) {
			return fmt.Errorf("mcpgate: upstream %s: root %q is not absolute", u.Name, r)
		}
	}
	for i, r := range u.Tools {
		if err := r.Validate(); err != nil {
			return fmt.Errorf("mcpgate: upstream %s: tools[%d]: %w", u.Name, i, err)
		}
	}
	for _, h := range u.Hide {
		if err := checkGlob(h); err != nil {
			return fmt.Errorf("mcpgate: upstream %s: hide %q: %w", u.Name, h, err)
		}
	}
	return nil
}

// hidden reports whether tool is hidden by u.Hide.
func (u Upstream) hidden(tool string) bool {
	for _, h := range u.Hide {
		if globMatch(h, tool) {
			return true
		}
	}
	return false
}

// rootURIs are u.Roots as file:// URIs.
func (u Upstream) rootURIs() []string {
	out := make([]string, 0, len(u.Roots))
	for _, r := range u.Roots {
		out = append(out, (&url.URL{Scheme: "file", Path: filepath.ToSlash(filepath.Clean(r))}).String())
	}
	return out
}

func (u Upstream) describe() string {
	if u.URL != "" {
		return u.URL
	}
	return strings.Join(u.Command, " ")
}

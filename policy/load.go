package policy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/toolgate/toolgate/classify"
)

// ErrPolicy is wrapped by every error about a policy file's content.
var ErrPolicy = errors.New("policy: bad policy file")

// MaxFileBytes bounds a policy file (1 MiB).
const MaxFileBytes = 1 << 20

// DefaultFile is the file Load looks for in the working directory.
const DefaultFile = "toolgate.yaml"

// EnvPolicy names the policy file when Load is given no path.
const EnvPolicy = "TOOLGATE_POLICY"

// Load reads the policy file at path. With path "" it reads
// $TOOLGATE_POLICY, else ./toolgate.yaml if it exists, else returns
// Default(). Errors wrap ErrPolicy (content: "FILE:LINE: what") or the
// file system's error (an unreadable or missing named file); a named file
// that does not exist is an error, never the defaults.
func Load(p string) (*Policy, error) {
	if p == "" {
		p = os.Getenv(EnvPolicy)
	}
	if p == "" {
		if _, err := os.Stat(DefaultFile); err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return Default(), nil
			}
			return nil, fmt.Errorf("policy: %s: %w", DefaultFile, err)
		}
		p = DefaultFile
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return nil, fmt.Errorf("policy: %s: %w", p, err)
	}
	f, err := os.Open(abs)
	if err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("policy: %s: %w", p, err)
	}
	pol, err := parse(data, filepath.Dir(abs), p)
	if err != nil {
		return nil, err
	}
	pol.source = abs
	return pol, nil
}

// Parse decodes a policy file's content; dir is the directory relative
// paths in it are taken from ("" = the working directory). Errors wrap
// ErrPolicy and name the line ("line 4: ..."). It never panics.
func Parse(data []byte, dir string) (*Policy, error) { return parse(data, dir, "") }

func parse(data []byte, dir, name string) (p *Policy, err error) {
	defer func() {
		// yaml.v3 is not known to panic on any input; a panic here must
		// still be an error, never a crash of the hook.
		if r := recover(); r != nil {
			p, err = nil, perr(name, 0, fmt.Sprintf("the YAML decoder failed: %v", r))
		}
	}()
	if len(data) > MaxFileBytes {
		return nil, perr(name, 0, fmt.Sprintf("larger than %d bytes", MaxFileBytes))
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, perr(name, 1, "empty: a policy file starts with \"version: 1\"")
	}
	p = &Policy{}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(p); err != nil {
		return nil, yamlError(name, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, perr(name, extra.Line, "more than one YAML document")
	} else if !errors.Is(err, io.EOF) {
		return nil, yamlError(name, err)
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, yamlError(name, err)
	}
	lines := nodeLines{root: &root}
	if err := p.check(name, lines); err != nil {
		return nil, err
	}
	if dir == "" {
		if dir, err = os.Getwd(); err != nil {
			return nil, fmt.Errorf("policy: working directory: %w", err)
		}
	}
	p.dir = dir
	p.fill()
	p.Workspace = absIn(dir, p.Workspace)
	p.Approver.Inbox = absIn(dir, p.Approver.Inbox)
	p.Export.Spool = absIn(dir, p.Export.Spool)
	for i := range p.MCP.Upstreams {
		for j, r := range p.MCP.Upstreams[i].Roots {
			p.MCP.Upstreams[i].Roots[j] = absIn(dir, r)
		}
	}
	return p, nil
}

// absIn makes a non-empty relative path absolute under dir.
func absIn(dir, p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(dir, p)
}

// check validates the decoded values, naming the line of the bad one.
func (p *Policy) check(name string, l nodeLines) error {
	if p.Version != Version {
		line := l.line("version")
		if line == 0 {
			line = 1
		}
		return perr(name, line, fmt.Sprintf("version is %d, want %d (add \"version: 1\")", p.Version, Version))
	}
	switch p.Profile {
	case "", classify.ProfileStrict, classify.ProfileWorkspace, classify.ProfileReadOnly:
	default:
		return perr(name, l.line("profile"), fmt.Sprintf("unknown profile %q (want strict, workspace or read-only)", p.Profile))
	}
	switch p.High {
	case "", HighDeny, HighAsk:
	default:
		return perr(name, l.line("high"), fmt.Sprintf("high is %q, want deny or ask", p.High))
	}
	switch p.Approver.Kind {
	case "", ApproverDeny, ApproverInbox:
	default:
		return perr(name, l.line("approver", "kind"), fmt.Sprintf("approver kind is %q, want deny or inbox", p.Approver.Kind))
	}
	if p.Export.Endpoint != "" && strings.ContainsAny(p.Export.Endpoint, " \t\r\n") {
		return perr(name, l.line("export", "endpoint"), fmt.Sprintf("export endpoint %q contains white space", p.Export.Endpoint))
	}
	if err := checkRules(name, l, p.Tools, "tools"); err != nil {
		return err
	}
	for i, u := range p.MCP.Upstreams {
		if err := checkRules(name, l, u.Tools, "mcp", "upstreams", strconv.Itoa(i), "tools"); err != nil {
			return err
		}
	}
	return nil
}

func checkRules(name string, l nodeLines, rules []ToolRule, at ...string) error {
	for i, r := range rules {
		where := append(append([]string(nil), at...), strconv.Itoa(i))
		if r.Match == "" {
			return perr(name, l.line(where...), "a tool rule without match")
		}
		if _, err := path.Match(r.Match, ""); err != nil {
			return perr(name, l.line(append(where, "match")...), fmt.Sprintf("match %q is not a valid pattern: %v", r.Match, err))
		}
		if !r.Kind.valid() {
			return perr(name, l.line(append(where, "kind")...), fmt.Sprintf("unknown kind %q (want shell, read, search, write, delete, fetch, allow, deny or ask)", r.Kind))
		}
		for j, f := range r.Fields {
			if f == "" {
				return perr(name, l.line(append(where, "fields", strconv.Itoa(j))...), "an empty field name")
			}
		}
	}
	return nil
}

// perr is a content error naming the file (when known) and line (when > 0).
func perr(name string, line int, msg string) error {
	return fmt.Errorf("%w: %s", ErrPolicy, loc(name, line, msg))
}

// loc is "FILE:LINE: msg", leaving out what is unknown.
func loc(name string, line int, msg string) string {
	switch {
	case name != "" && line > 0:
		return fmt.Sprintf("%s:%d: %s", name, line, msg)
	case name != "":
		return name + ": " + msg
	case line > 0:
		return fmt.Sprintf("line %d: %s", line, msg)
	}
	return msg
}

// yamlLine finds "line N: " in yaml.v3's messages.
var yamlLine = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)

// yamlError rewrites yaml.v3's errors as "FILE:LINE: what", one line per
// problem ("field x not found in type policy.Policy" for an unknown key).
func yamlError(name string, err error) error {
	var te *yaml.TypeError
	msgs := []string{err.Error()}
	if errors.As(err, &te) {
		msgs = te.Errors
	}
	out := make([]string, 0, len(msgs))
	for _, m := range msgs {
		m = strings.TrimPrefix(m, "yaml: ")
		if g := yamlLine.FindStringSubmatch(m); g != nil {
			n, _ := strconv.Atoi(g[1])
			out = append(out, loc(name, n, g[2]))
			continue
		}
		out = append(out, loc(name, 0, m))
	}
	return fmt.Errorf("%w: %s", ErrPolicy, strings.Join(out, "; "))
}

// nodeLines finds the line of a value in the document's node tree.
type nodeLines struct{ root *yaml.Node }

// line is the line of the value at keys (mapping keys, or sequence
// indices as decimal strings), else of its nearest present ancestor, else 0.
func (l nodeLines) line(keys ...string) int {
	n := l.root
	if n == nil {
		return 0
	}
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	best := n.Line
	for _, k := range keys {
		next := (*yaml.Node)(nil)
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == k {
					next = n.Content[i+1]
					break
				}
			}
		case yaml.SequenceNode:
			if i, err := strconv.Atoi(k); err == nil && i >= 0 && i < len(n.Content) {
				next = n.Content[i]
			}
		}
		if next == nil {
			return best
		}
		n = next
		best = n.Line
	}
	return best
}

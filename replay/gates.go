package replay

import (
	"context"
	"fmt"
	"path"
	"regexp"
	"strings"

	"github.com/toolgate/toolgate/classify"
	"github.com/toolgate/toolgate/gate"
)

// Gate sources of the replay's own policies (gate.source).
const (
	SourceNoSideEffects = "replay.no-side-effects"
	SourceIPython       = "replay.ipython"
)

// runGates builds the per-run gate: bash calls through classify.BashGate,
// file tools through classify.PathGate, ipython code through ipythonGate,
// think and finish allowed as side-effect free. workspace is the run's
// working directory ("" when unknown).
func runGates(workspace string, extra []classify.Option, profile string) (gate.Gate, error) {
	copts := append([]classify.Option{classify.WithWorkspace(workspace)}, extra...)
	var gopts []classify.GateOption
	if profile != "" {
		gopts = append(gopts, classify.WithGateProfile(profile))
		copts = append(copts, classify.WithProfile(profile))
	}
	bash, err := classify.BashGate(append(gopts, classify.WithClassifierOptions(copts...))...)
	if err != nil {
		return nil, fmt.Errorf("replay: bash gate: %w", err)
	}
	files, err := classify.PathGate(append(gopts, classify.WithClassifierOptions(copts...))...)
	if err != nil {
		return nil, fmt.Errorf("replay: path gate: %w", err)
	}
	c, err := classify.New(copts...)
	if err != nil {
		return nil, fmt.Errorf("replay: classifier: %w", err)
	}
	noSideEffects := gate.Func(func(context.Context, gate.ToolCallContext) (gate.Decision, error) {
		return gate.Decision{Action: gate.ActionAllow, Reason: "no side effects", Source: SourceNoSideEffects, Risk: gate.RiskSafe}, nil
	})
	byTool := map[string]gate.Gate{
		ToolBash:      bash,
		ToolReadFile:  files,
		ToolWriteFile: files,
		ToolEdit:      files,
		ToolIPython:   ipythonGate{c: c, readOnly: profile == classify.ProfileReadOnly},
		ToolThink:     noSideEffects,
		ToolFinish:    noSideEffects,
	}
	return gate.Func(func(ctx context.Context, call gate.ToolCallContext) (gate.Decision, error) {
		g, ok := byTool[call.ToolName]
		if !ok {
			return gate.Deny("no replay policy for tool " + call.ToolName).WithSource("replay"), nil
		}
		return g.Decide(ctx, call)
	}), nil
}

// openHandsFileHelpers are OpenHands' agent-skills functions, called from
// its IPython tool, and the file operation each performs on its first
// (path) argument.
var openHandsFileHelpers = map[string]classify.Op{
	"open_file": classify.OpRead, "goto_line": classify.OpRead, "scroll_up": classify.OpRead,
	"scroll_down": classify.OpRead, "search_dir": classify.OpRead, "search_file": classify.OpRead,
	"find_file": classify.OpRead, "parse_pdf": classify.OpRead, "parse_docx": classify.OpRead,
	"create_file": classify.OpWrite, "edit_file_by_replace": classify.OpWrite,
	"insert_content_at_line": classify.OpWrite, "append_file": classify.OpWrite,
}

// helperCall matches a top-level call of a helper with a literal first
// argument: name( 'path' or name( "path" or name(\n'path'.
var helperCall = regexp.MustCompile(`(?m)^([A-Za-z_][A-Za-z0-9_]*)\(\s*(?:'([^'\n]*)'|"([^"\n]*)")?`)

// ipythonGate decides IPython cells: shell escapes (lines starting with
// "!") are classified as bash, OpenHands' file helpers as file operations
// on their path; any other Python is review (it can do anything the
// process can).
type ipythonGate struct {
	c        *classify.Classifier
	readOnly bool // the read-only profile: review is denied, not asked
}

// Decide implements gate.Gate.
func (g ipythonGate) Decide(ctx context.Context, call gate.ToolCallContext) (gate.Decision, error) {
	if err := ctx.Err(); err != nil {
		return gate.Decision{}, err
	}
	code := call.String("code")
	level, reason := gate.RiskSafe, ""
	raise := func(r classify.Risk, what string) {
		if r.Level.Rank() > level.Rank() {
			level, reason = r.Level, what+": "+r.Reason
		}
	}
	rest := stripHelperCalls(code, func(name, p string) {
		raise(g.c.Path(openHandsFileHelpers[name], p), name)
	})
	for _, line := range strings.Split(rest, "\n") {
		t := strings.TrimSpace(line)
		switch {
		case t == "" || strings.HasPrefix(t, "#"):
		case strings.HasPrefix(t, "!"):
			raise(g.c.Bash(strings.TrimPrefix(t, "!")), "shell escape")
		default:
			raise(classify.Risk{Level: gate.RiskReview, Reason: "arbitrary Python code can do anything the agent's process can"}, "python")
		}
	}
	if level == gate.RiskSafe && reason == "" {
		reason = "only file helpers on safe paths"
	}
	var d gate.Decision
	switch level {
	case gate.RiskSafe:
		d = gate.Allow()
		d.Reason = reason
	case gate.RiskReview:
		if g.readOnly {
			d = gate.Deny(reason)
		} else {
			d = gate.Ask(reason)
		}
	default:
		d = gate.Deny(reason)
	}
	return d.WithRisk(level).WithSource(SourceIPython), nil
}

// stripHelperCalls calls f for every top-level OpenHands file-helper call
// with a literal path and returns the code with those calls' lines
// removed, so only the remaining code is judged as Python. A helper call
// spans to its closing parenthesis (triple-quoted arguments included).
func stripHelperCalls(code string, f func(name, path string)) string {
	var out strings.Builder
	for len(code) > 0 {
		loc := helperCall.FindStringSubmatchIndex(code)
		if loc == nil {
			out.WriteString(code)
			break
		}
		name := code[loc[2]:loc[3]]
		_, known := openHandsFileHelpers[name]
		end := callEnd(code, loc[1])
		if !known || loc[4] < 0 && loc[6] < 0 || end < 0 {
			out.WriteString(code[:loc[1]])
			code = code[loc[1]:]
			continue
		}
		p := ""
		if loc[4] >= 0 {
			p = code[loc[4]:loc[5]]
		} else {
			p = code[loc[6]:loc[7]]
		}
		f(name, path.Clean(p))
		out.WriteString(code[:loc[0]])
		code = code[end:]
	}
	return out.String()
}

// callEnd returns the index just past the ")" closing the call whose
// arguments start at i, skipping string literals (including triple-quoted
// ones); -1 when it is not closed.
func callEnd(s string, i int) int {
	depth := 1
	for i < len(s) {
		switch c := s[i]; {
		case strings.HasPrefix(s[i:], `"""`) || strings.HasPrefix(s[i:], `'''`):
			q := s[i : i+3]
			j := strings.Index(s[i+3:], q)
			if j < 0 {
				return -1
			}
			i += 3 + j + 3
			continue
		case c == '"' || c == '\'':
			j := i + 1
			for j < len(s) && s[j] != c && s[j] != '\n' {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			i = j + 1
			continue
		case c == '(':
			depth++
		case c == ')':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
		i++
	}
	return -1
}

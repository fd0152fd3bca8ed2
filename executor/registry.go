package executor

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/toolgate/toolgate/gate"
)

// Registration errors.
var (
	// ErrInvalidTool: a tool's name, Execute, type or schema is unusable.
	ErrInvalidTool = errors.New("executor: invalid tool")
	// ErrDuplicateTool: a tool with this name is already registered.
	ErrDuplicateTool = errors.New("executor: duplicate tool")
)

// Registry holds the tools an executor can run, with their schemas compiled
// once at registration. It is safe for concurrent use; tools may be
// registered while calls run (lookups never wait: Register publishes a new
// copy of the table).
type Registry struct {
	mu    sync.Mutex                        // serialises Register
	tools atomic.Pointer[map[string]*entry] // read-only once published
}

// entry is a registered tool with its compiled schemas.
type entry struct {
	tool     Tool
	input    *jsonschema.Schema
	output   *jsonschema.Schema
	spanName string
	toolType string
	measure  [2]measureOpts // metric options for allow, deny
	info     gate.ToolInfo  // what gate scopes are resolved against
}

// NewRegistry returns an empty registry, optionally with tools registered.
func NewRegistry(tools ...Tool) (*Registry, error) {
	r := &Registry{}
	empty := map[string]*entry{}
	r.tools.Store(&empty)
	if err := r.Register(tools...); err != nil {
		return nil, err
	}
	return r, nil
}

// Register adds tools. It fails, registering none of them, when a tool is
// invalid (ErrInvalidTool: bad name, nil Execute, unknown Type, a schema
// that does not compile or whose input is not an object schema) or its name
// is taken (ErrDuplicateTool).
//
// A tool registered after executor.New is judged by every gate whose
// scope holds it (gate.Scope), but Register does not check that the tool
// declares the fields those gates need (executor.New and Executor.Agent
// do, for the tools registered by then): a call whose input lacks them is
// denied by the gate (fail closed). Register tools before New, or create
// agents after registering, to have such mistakes reported as
// ErrGateScope.
func (r *Registry) Register(tools ...Tool) error {
	entries := make([]*entry, 0, len(tools))
	seen := map[string]bool{}
	for _, t := range tools {
		e, err := compileTool(t)
		if err != nil {
			return err
		}
		if seen[t.Name] {
			return fmt.Errorf("%w: %q given twice", ErrDuplicateTool, t.Name)
		}
		seen[t.Name] = true
		entries = append(entries, e)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	old := *r.tools.Load()
	for _, e := range entries {
		if _, dup := old[e.tool.Name]; dup {
			return fmt.Errorf("%w: %q", ErrDuplicateTool, e.tool.Name)
		}
	}
	next := make(map[string]*entry, len(old)+len(entries))
	for k, v := range old {
		next[k] = v
	}
	for _, e := range entries {
		next[e.tool.Name] = e
	}
	r.tools.Store(&next)
	return nil
}

// Lookup returns the registered tool named name.
func (r *Registry) Lookup(name string) (Tool, bool) {
	e, ok := r.lookup(name)
	if !ok {
		return Tool{}, false
	}
	return e.tool, true
}

// Names returns the registered tool names, sorted.
func (r *Registry) Names() []string {
	tools := *r.tools.Load()
	names := make([]string, 0, len(tools))
	for n := range tools {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

func (r *Registry) lookup(name string) (*entry, bool) {
	e, ok := (*r.tools.Load())[name]
	return e, ok
}

func validName(s string) bool {
	if len(s) == 0 || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

func compileTool(t Tool) (*entry, error) {
	if !validName(t.Name) {
		return nil, fmt.Errorf("%w: name %q (want 1-128 of A-Z a-z 0-9 _ - .)", ErrInvalidTool, t.Name)
	}
	if t.Execute == nil {
		return nil, fmt.Errorf("%w: %q has no Execute", ErrInvalidTool, t.Name)
	}
	typ := t.Type
	switch typ {
	case "":
		typ = ToolTypeFunction
	case ToolTypeFunction, ToolTypeExtension, ToolTypeDatastore:
	default:
		return nil, fmt.Errorf("%w: %q has unknown type %q", ErrInvalidTool, t.Name, t.Type)
	}
	e := &entry{tool: t, spanName: "execute_tool " + t.Name, toolType: typ, measure: newMeasureOpts(t.Name)}
	in := t.InputSchema
	if len(bytes.TrimSpace(in)) == 0 {
		in = []byte(`{"type":"object"}`)
	}
	var err error
	if e.input, err = compileSchema(t.Name, "input", in); err != nil {
		return nil, err
	}
	if !objectSchema(e.input) {
		return nil, fmt.Errorf("%w: %q input schema must admit an object", ErrInvalidTool, t.Name)
	}
	e.info = toolInfo(t, e.input)
	if len(bytes.TrimSpace(t.OutputSchema)) > 0 {
		if e.output, err = compileSchema(t.Name, "output", t.OutputSchema); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// objectSchema: the schema's type, if it names one, admits objects (the
// input is always decoded as a JSON object).
func objectSchema(s *jsonschema.Schema) bool {
	return s.Types == nil || s.Types.IsEmpty() || slices.Contains(s.Types.ToStrings(), "object")
}

func compileSchema(tool, which string, schema []byte) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return nil, fmt.Errorf("%w: %q %s schema is not JSON: %w", ErrInvalidTool, tool, which, err)
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(jsonschema.SchemeURLLoader{}) // never load external $refs
	url := "urn:toolgate:tool:" + tool + ":" + which
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("%w: %q %s schema: %w", ErrInvalidTool, tool, which, err)
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("%w: %q %s schema: %w", ErrInvalidTool, tool, which, err)
	}
	return s, nil
}

// schemaMessage shortens a jsonschema validation error to its causes.
func schemaMessage(err error) string {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err.Error()
	}
	msg := ve.Error()
	// Drop the first line ("jsonschema validation failed with '<url>'").
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[i+1:]
	}
	return strings.TrimSpace(msg)
}

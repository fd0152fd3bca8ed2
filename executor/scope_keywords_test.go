package executor_test

import (
	"context"
	"encoding/json"
	"reflect"
	"sync/atomic"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/classify"
	"github.com/toolgate/toolgate/executor"
	"github.com/toolgate/toolgate/gate"
)

// How the scope resolver (toolInfo) handles a keyword of the compiled
// schema (jsonschema.Schema's fields).
const (
	// kwAdmits: the keyword admits top-level property names itself.
	kwAdmits = "admits-by-name"
	// kwWalked: the keyword holds subschemas the resolver walks.
	kwWalked = "walked"
	// kwIgnored: the keyword cannot admit or name an object property
	// (why says why).
	kwIgnored = "ignored"
)

// scopeKeywords classifies every exported field of jsonschema.Schema. For
// an admitting or walked keyword, schema is an input schema that admits
// "command" only through it (compiled at draft, "" the default 2020-12).
var scopeKeywords = map[string]struct {
	how, why, schema string
}{
	"DraftVersion":     {how: kwIgnored, why: "metadata"},
	"Location":         {how: kwIgnored, why: "metadata"},
	"Bool":             {how: kwIgnored, why: "true is wholly open, false admits nothing; read for property schemas"},
	"ID":               {how: kwIgnored, why: "an identifier; references to it compile to Ref"},
	"Anchor":           {how: kwIgnored, why: "an identifier; references to it compile to Ref"},
	"RecursiveAnchor":  {how: kwIgnored, why: "an identifier; references compile to RecursiveRef"},
	"DynamicAnchor":    {how: kwIgnored, why: "an identifier; references compile to DynamicRef"},
	"Types":            {how: kwIgnored, why: "constrains the value's type, names no property"},
	"Format":           {how: kwIgnored, why: "constrains a value, names no property"},
	"MaxProperties":    {how: kwIgnored, why: "counts properties, names none"},
	"MinProperties":    {how: kwIgnored, why: "counts properties, names none"},
	"MinItems":         {how: kwIgnored, why: "array keyword: the input is an object"},
	"MaxItems":         {how: kwIgnored, why: "array keyword: the input is an object"},
	"UniqueItems":      {how: kwIgnored, why: "array keyword: the input is an object"},
	"Contains":         {how: kwIgnored, why: "array keyword: the input is an object"},
	"MinContains":      {how: kwIgnored, why: "array keyword: the input is an object"},
	"MaxContains":      {how: kwIgnored, why: "array keyword: the input is an object"},
	"Items":            {how: kwIgnored, why: "array keyword: the input is an object"},
	"AdditionalItems":  {how: kwIgnored, why: "array keyword: the input is an object"},
	"PrefixItems":      {how: kwIgnored, why: "array keyword: the input is an object"},
	"Items2020":        {how: kwIgnored, why: "array keyword: the input is an object"},
	"UnevaluatedItems": {how: kwIgnored, why: "array keyword: the input is an object"},
	"MinLength":        {how: kwIgnored, why: "string keyword: the input is an object"},
	"MaxLength":        {how: kwIgnored, why: "string keyword: the input is an object"},
	"Pattern":          {how: kwIgnored, why: "string keyword (read under propertyNames)"},
	"ContentEncoding":  {how: kwIgnored, why: "string keyword: the input is an object"},
	"ContentMediaType": {how: kwIgnored, why: "string keyword: the input is an object"},
	"ContentSchema":    {how: kwIgnored, why: "applies to a string's decoded content, not the input object"},
	"Maximum":          {how: kwIgnored, why: "number keyword: the input is an object"},
	"Minimum":          {how: kwIgnored, why: "number keyword: the input is an object"},
	"ExclusiveMaximum": {how: kwIgnored, why: "number keyword: the input is an object"},
	"ExclusiveMinimum": {how: kwIgnored, why: "number keyword: the input is an object"},
	"MultipleOf":       {how: kwIgnored, why: "number keyword: the input is an object"},
	"Extensions":       {how: kwIgnored, why: "custom vocabularies: the executor's compiler registers none, so always empty"},
	"Title":            {how: kwIgnored, why: "annotation"},
	"Description":      {how: kwIgnored, why: "annotation"},
	"Default":          {how: kwIgnored, why: "annotation: never validated"},
	"Comment":          {how: kwIgnored, why: "annotation"},
	"ReadOnly":         {how: kwIgnored, why: "annotation"},
	"WriteOnly":        {how: kwIgnored, why: "annotation"},
	"Examples":         {how: kwIgnored, why: "annotation: never validated"},
	"Deprecated":       {how: kwIgnored, why: "annotation"},

	"Properties":            {how: kwAdmits, schema: `{"type":"object","properties":{"command":{"type":"string"}}}`},
	"PatternProperties":     {how: kwAdmits, schema: `{"type":"object","patternProperties":{"^comm":{}},"additionalProperties":false}`},
	"AdditionalProperties":  {how: kwAdmits, schema: `{"type":"object","additionalProperties":{"type":"string"}}`},
	"UnevaluatedProperties": {how: kwAdmits, schema: `{"type":"object","unevaluatedProperties":{"type":"string"}}`},
	"PropertyNames":         {how: kwAdmits, schema: `{"type":"object","propertyNames":{"const":"command"}}`},
	"Required":              {how: kwAdmits, schema: `{"type":"object","required":["command"]}`},
	"DependentRequired":     {how: kwAdmits, schema: `{"type":"object","dependentRequired":{"x":["command"]}}`},
	"Enum":                  {how: kwAdmits, schema: `{"type":"object","enum":[{"command":"rm -rf /"},{"x":1}]}`},
	"Const":                 {how: kwAdmits, schema: `{"type":"object","const":{"command":"rm -rf /"}}`},

	"Ref":              {how: kwWalked, schema: `{"$ref":"#/$defs/c","$defs":{"c":{"properties":{"command":{}}}}}`},
	"RecursiveRef":     {how: kwWalked, schema: `{"$schema":"https://json-schema.org/draft/2019-09/schema","$recursiveAnchor":true,"anyOf":[{"$recursiveRef":"#"},{"properties":{"command":{}}}]}`},
	"DynamicRef":       {how: kwWalked, schema: `{"$dynamicRef":"#c","$defs":{"c":{"$dynamicAnchor":"c","properties":{"command":{}}}}}`},
	"Not":              {how: kwWalked, schema: `{"type":"object","not":{"properties":{"command":{"type":"number"}},"required":["command"]}}`},
	"AllOf":            {how: kwWalked, schema: `{"allOf":[{"properties":{"command":{}}}]}`},
	"AnyOf":            {how: kwWalked, schema: `{"anyOf":[{"properties":{"command":{}}}]}`},
	"OneOf":            {how: kwWalked, schema: `{"oneOf":[{"properties":{"command":{}}}]}`},
	"If":               {how: kwWalked, schema: `{"if":{"properties":{"command":{}}}}`},
	"Then":             {how: kwWalked, schema: `{"if":true,"then":{"properties":{"command":{}}}}`},
	"Else":             {how: kwWalked, schema: `{"if":false,"else":{"properties":{"command":{}}}}`},
	"DependentSchemas": {how: kwWalked, schema: `{"type":"object","dependentSchemas":{"x":{"properties":{"command":{}}}}}`},
	"Dependencies":     {how: kwWalked, schema: `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","dependencies":{"x":{"properties":{"command":{}}}}}`},
}

// TestToolInfoKeywords: every field of jsonschema.Schema is classified —
// a keyword a new release adds fails here until the resolver handles it
// or the table says why it cannot admit a property — and each admitting
// or walked keyword, alone, puts "command" in BashGate's scope.
func TestToolInfoKeywords(t *testing.T) {
	typ := reflect.TypeFor[jsonschema.Schema]()
	fields := map[string]bool{}
	for i := range typ.NumField() {
		f := typ.Field(i)
		if !f.IsExported() {
			continue
		}
		fields[f.Name] = true
		kw, ok := scopeKeywords[f.Name]
		if !assert.True(t, ok, "jsonschema.Schema.%s is not classified: make executor.toolInfo walk it or admit the names it gives, "+
			"or say in scopeKeywords why it cannot admit an object property", f.Name) {
			continue
		}
		if kw.how == kwIgnored {
			assert.NotEmpty(t, kw.why, f.Name)
		} else {
			assert.NotEmpty(t, kw.schema, f.Name)
		}
	}
	for name := range scopeKeywords {
		assert.True(t, fields[name], "scopeKeywords names %s, which jsonschema.Schema no longer has", name)
	}

	noop := func(context.Context, json.RawMessage) (executor.Result, error) { return executor.Text(""), nil }
	for name, kw := range scopeKeywords {
		if kw.how == kwIgnored {
			continue
		}
		t.Run(name, func(t *testing.T) {
			reg, err := executor.NewRegistry(executor.Tool{Name: "t", InputSchema: json.RawMessage(kw.schema), Execute: noop})
			require.NoError(t, err)
			info, ok := executor.ToolInfo(reg, "t")
			require.True(t, ok)
			_, admitted := info.Admitted([]string{"command"})
			assert.True(t, admitted, "%s admits command: %+v", kw.schema, info.Fields)
			bg, err := classify.BashGate()
			require.NoError(t, err)
			_, err = executor.New(reg, executor.WithGates(bg))
			if _, declared := info.Field([]string{"command"}, "string"); declared {
				assert.NoError(t, err)
			} else {
				assert.ErrorIs(t, err, executor.ErrGateScope)
			}
		})
	}
}

// TestGateScopeDraftKeywords: a tool whose schema admits the gated field
// only through draft-06/07/2019-09 "dependencies" (schema or array form)
// or an "enum"/"const" of objects is in the gate's scope: where the field
// is declared (a dependencies schema's properties) the gate judges the
// call, else New refuses the tool with ErrGateScope — no call runs
// ungated.
func TestGateScopeDraftKeywords(t *testing.T) {
	noop := func(context.Context, json.RawMessage) (executor.Result, error) { return executor.Text("ran"), nil }
	rm := `"rm -rf / --no-preserve-root"`
	tests := []struct {
		name, schema, input string
		refused             bool // ErrGateScope at New, else gated and denied
	}{
		{"draft-07 dependencies schema", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"x":{"type":"string"}},"dependencies":{"x":{"properties":{"command":{"type":"string"}},"required":["command"]}},"required":["x"]}`,
			`{"x":"1","command":` + rm + `}`, false},
		{"draft-06 dependencies", `{"$schema":"http://json-schema.org/draft-06/schema#","type":"object","dependencies":{"x":{"properties":{"cmd":{"type":"string"}}}}}`,
			`{"x":"1","cmd":` + rm + `}`, false},
		{"2019-09 dependencies", `{"$schema":"https://json-schema.org/draft/2019-09/schema","type":"object","properties":{"x":{"type":"string"}},"dependencies":{"x":{"properties":{"command":{"type":"string"}}}}}`,
			`{"x":"1","command":` + rm + `}`, false},
		{"dependencies in allOf", `{"$schema":"http://json-schema.org/draft-07/schema#","allOf":[{"dependencies":{"x":{"properties":{"command":{"type":"string"}}}}}]}`,
			`{"x":"1","command":` + rm + `}`, false},
		{"draft-07 dependencies array", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"x":{"type":"string"}},"dependencies":{"x":["command"]}}`, "", true},
		{"dependencies key", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","dependencies":{"command":["x"]}}`, "", true},
		{"enum of objects", `{"type":"object","enum":[{"command":` + rm + `},{"command":"ls"}]}`, "", true},
		{"const object", `{"type":"object","const":{"cmd":"rm -rf /"}}`, "", true},
		{"enum in allOf", `{"allOf":[{"enum":[{"command":"rm -rf /"}]}]}`, "", true},
		{"const in dependencies", `{"$schema":"http://json-schema.org/draft-07/schema#","dependencies":{"x":{"const":{"x":1,"command":"rm"}}}}`, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ran atomic.Int64
			exec := func(context.Context, json.RawMessage) (executor.Result, error) {
				ran.Add(1)
				return executor.Text("ran"), nil
			}
			reg, err := executor.NewRegistry(executor.Tool{Name: "bash", InputSchema: json.RawMessage(tt.schema), Execute: exec},
				executor.Tool{Name: "cat", InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`), Execute: noop})
			require.NoError(t, err)
			info, ok := executor.ToolInfo(reg, "bash")
			require.True(t, ok)
			_, ok = info.Admitted([]string{"command", "cmd"})
			require.True(t, ok, "%+v", info.Fields)
			bg, err := classify.BashGate()
			require.NoError(t, err)
			pg, err := classify.PathGate()
			require.NoError(t, err)
			ex, err := executor.New(reg, executor.WithGates(bg, pg))
			if tt.refused {
				require.ErrorIs(t, err, executor.ErrGateScope)
				assert.Contains(t, err.Error(), `tool "bash"`)
				return
			}
			require.NoError(t, err)
			a, err := ex.Agent("a", executor.AgentPresets(executor.PresetAll))
			require.NoError(t, err)
			res := a.Run("r").Execute(context.Background(), executor.ToolCall{ID: "1", Name: "bash", Input: json.RawMessage(tt.input)})
			assert.True(t, res.Gate.Gated)
			assert.Equal(t, classify.SourceBash, res.Gate.Source)
			assert.Equal(t, gate.ActionDeny, res.Gate.Action, res.Gate.Reason)
			assert.Zero(t, ran.Load())
		})
	}
}

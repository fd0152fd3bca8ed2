package gate

import "slices"

// ToolInfo describes one registered tool as a Scope sees it: the
// developer's own declaration (name, annotations, the fields of its input
// schema), never anything a model sent. The executor builds it once per
// registered tool.
type ToolInfo struct {
	// Name is the registered tool name.
	Name string
	// Annotations are the tool's registered hints.
	Annotations Annotations
	// Fields are the properties the tool's input schema declares: the
	// "properties" of the schema and of every subschema it composes
	// (allOf, anyOf, oneOf, $ref, if/then/else, dependentSchemas), each
	// once.
	Fields []SchemaField
}

// SchemaField is one property an input schema declares.
type SchemaField struct {
	// Name is the property name, as the schema spells it.
	Name string
	// Types are the JSON types the property's schema names ("string",
	// "integer", "object", …); nil when it names none, i.e. any type.
	Types []string
}

// Admits reports whether the field may hold a value of JSON type typ: ""
// admits any field; a field that names no types admits every type;
// "integer" and "number" admit each other's fields.
func (f SchemaField) Admits(typ string) bool {
	if typ == "" || len(f.Types) == 0 {
		return true
	}
	switch {
	case slices.Contains(f.Types, typ):
		return true
	case typ == "integer":
		return slices.Contains(f.Types, "number")
	case typ == "number":
		return slices.Contains(f.Types, "integer")
	}
	return false
}

// Field returns the first declared field that is one of names to a
// case-insensitive parser (SameFieldName) and admits typ ("" for any).
func (t ToolInfo) Field(names []string, typ string) (SchemaField, bool) {
	for _, f := range t.Fields {
		for _, n := range names {
			if SameFieldName(f.Name, n) && f.Admits(typ) {
				return f, true
			}
		}
	}
	return SchemaField{}, false
}

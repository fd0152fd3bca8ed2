package executor

import "github.com/toolgate/toolgate/gate"

// DecodeObject is the decoder of tool inputs (decodeInput without the
// schema), for the allocation test.
var DecodeObject = decodeObject

// ToolInfo is what gate scopes see of the registered tool name.
func ToolInfo(r *Registry, name string) (gate.ToolInfo, bool) {
	e, ok := r.lookup(name)
	if !ok {
		return gate.ToolInfo{}, false
	}
	return e.info, true
}

package executor

// DecodeObject is the decoder of tool inputs (decodeInput without the
// schema), for the allocation test.
var DecodeObject = decodeObject

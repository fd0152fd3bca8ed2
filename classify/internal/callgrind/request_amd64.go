package callgrind

// clientRequest executes valgrind's client-request sequence with args
// (request code, then up to five arguments); it returns 0 outside
// valgrind.
//
//go:noescape
func clientRequest(args *[6]uintptr) uintptr

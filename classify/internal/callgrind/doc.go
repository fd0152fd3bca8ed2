// Package callgrind lets a benchmark mark points in a run under
// valgrind's callgrind tool, so that per-call instruction counts
// (repeatable on a loaded machine, unlike times) can be read from the
// dumps it writes. Outside valgrind, and on architectures other than
// amd64, every function is a no-op.
package callgrind

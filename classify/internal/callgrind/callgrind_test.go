package callgrind

import "testing"

// TestOutsideValgrind: outside valgrind the requests do nothing and
// return (the benchmarks call them on every run).
func TestOutsideValgrind(t *testing.T) {
	DumpStats()
	ZeroStats()
	if got := clientRequest(&[6]uintptr{reqDumpStats}); got != 0 {
		t.Fatalf("clientRequest outside valgrind = %d, want 0", got)
	}
}

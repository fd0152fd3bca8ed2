package callgrind

// Callgrind's client request codes (valgrind/callgrind.h:
// VG_USERREQ_TOOL_BASE('C','T') + n).
const (
	reqDumpStats = 0x43540000 + 0
	reqZeroStats = 0x43540000 + 1
)

// DumpStats asks callgrind to write the counts gathered since the last
// dump (or zeroing) to a new dump file and to start counting afresh.
func DumpStats() { clientRequest(&[6]uintptr{reqDumpStats}) }

// ZeroStats asks callgrind to reset its counters without a dump.
func ZeroStats() { clientRequest(&[6]uintptr{reqZeroStats}) }

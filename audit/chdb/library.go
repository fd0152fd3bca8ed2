package chdb

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// ErrLibraryNotFound is returned by [Open] when libchdb.so is not at the
// given path. Its wrapping message says how to install the library.
var ErrLibraryNotFound = errors.New("libchdb.so not found")

// InstallHint tells a user how to install libchdb; it is part of the error
// returned for a missing library.
const InstallHint = "install it with `make deps` (or scripts/install-libchdb.sh, which puts it in .cache/chdb/libchdb.so), " +
	"or point TOOLGATE_LIBCHDB / --libchdb at an existing libchdb.so"

// Library is a loaded libchdb.so with its C functions bound.
// It is safe for concurrent use; the engine itself serializes nothing, see [Conn].
type Library struct {
	path string

	connect            func(argc int32, argv []*byte) *unsafe.Pointer
	closeConn          func(conn *unsafe.Pointer)
	queryN             func(conn unsafe.Pointer, query []byte, queryLen uintptr, format string, formatLen uintptr) unsafe.Pointer
	queryWithParamsN   func(conn unsafe.Pointer, query []byte, queryLen uintptr, format string, formatLen uintptr, names []*byte, nameLens []uintptr, values []*byte, valueLens []uintptr, count uintptr) unsafe.Pointer
	destroyResult      func(res unsafe.Pointer)
	resultBuffer       func(res unsafe.Pointer) unsafe.Pointer
	resultLength       func(res unsafe.Pointer) uintptr
	resultElapsed      func(res unsafe.Pointer) float64
	resultRowsRead     func(res unsafe.Pointer) uint64
	resultBytesRead    func(res unsafe.Pointer) uint64
	resultRowsWritten  func(res unsafe.Pointer) uint64
	resultBytesWritten func(res unsafe.Pointer) uint64
	resultError        func(res unsafe.Pointer) unsafe.Pointer
	setSignalHandlers  func(enabled int32)

	// stream binds the streaming entry points, or is nil when the library
	// lacks them (they are looked up after the required ones, so an old
	// library still loads; see [Library.CanStream]).
	stream *streamFuncs

	// connMu serializes chdb_connect/chdb_close_conn: the engine boots on
	// the first connect and keeps one data path per process.
	connMu sync.Mutex
}

// Open loads libchdb.so from path (dlopen) and binds its functions. Opening
// the same path twice is cheap: the dynamic loader returns the same handle.
//
// Errors: [ErrLibraryNotFound] (wrapped, with [InstallHint]) when no file is
// at path; a wrapped loader error when the file is not a loadable library or
// lacks a symbol.
func Open(path string) (lib *Library, err error) {
	if path == "" {
		return nil, fmt.Errorf("chdb: %w: no path given; %s", ErrLibraryNotFound, InstallHint)
	}
	if _, statErr := os.Stat(path); statErr != nil {
		if errors.Is(statErr, os.ErrNotExist) {
			return nil, fmt.Errorf("chdb: %w at %s; %s", ErrLibraryNotFound, path, InstallHint)
		}
		return nil, fmt.Errorf("chdb: %w", statErr)
	}
	h, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		return nil, fmt.Errorf("chdb: load %s: %w", path, err)
	}
	lib = &Library{path: path}
	defer func() {
		// RegisterLibFunc panics on a missing symbol; an old or foreign
		// library must surface as an error, not a crash.
		if r := recover(); r != nil {
			lib, err = nil, fmt.Errorf("chdb: %s is not a usable libchdb (26.5 API): %v", path, r)
		}
	}()
	purego.RegisterLibFunc(&lib.connect, h, "chdb_connect")
	purego.RegisterLibFunc(&lib.closeConn, h, "chdb_close_conn")
	purego.RegisterLibFunc(&lib.queryN, h, "chdb_query_n")
	purego.RegisterLibFunc(&lib.queryWithParamsN, h, "chdb_query_with_params_n")
	purego.RegisterLibFunc(&lib.destroyResult, h, "chdb_destroy_query_result")
	purego.RegisterLibFunc(&lib.resultBuffer, h, "chdb_result_buffer")
	purego.RegisterLibFunc(&lib.resultLength, h, "chdb_result_length")
	purego.RegisterLibFunc(&lib.resultElapsed, h, "chdb_result_elapsed")
	purego.RegisterLibFunc(&lib.resultRowsRead, h, "chdb_result_rows_read")
	purego.RegisterLibFunc(&lib.resultBytesRead, h, "chdb_result_bytes_read")
	purego.RegisterLibFunc(&lib.resultRowsWritten, h, "chdb_result_rows_written")
	purego.RegisterLibFunc(&lib.resultBytesWritten, h, "chdb_result_bytes_written")
	purego.RegisterLibFunc(&lib.resultError, h, "chdb_result_error")
	purego.RegisterLibFunc(&lib.setSignalHandlers, h, "chdb_set_signal_handlers_enabled")
	lib.stream = bindStream(h)
	return lib, nil
}

// Path is the file the library was loaded from.
func (l *Library) Path() string { return l.path }

// cString returns a NUL-terminated copy of s.
func cString(s string) *byte {
	b := make([]byte, len(s)+1)
	copy(b, s)
	return &b[0]
}

// goString copies the NUL-terminated C string at p.
func goString(p unsafe.Pointer) string {
	if p == nil {
		return ""
	}
	n := 0
	for *(*byte)(unsafe.Add(p, n)) != 0 {
		n++
	}
	return string(unsafe.Slice((*byte)(p), n))
}

// DisableSignalHandlers stops the engine from installing process-wide
// signal handlers (SIGSEGV, SIGINT, …), leaving them to the Go runtime so
// that signal.Notify keeps working. Call it before the first [Library.Connect].
func (l *Library) DisableSignalHandlers() {
	l.setSignalHandlers(0)
}

package inbox

import (
	"time"
)

// OpenConfig configures Open.
type OpenConfig struct {
	// LockTimeout bounds the wait for the file lock that another process
	// holds during its operation (0: 10 s).
	LockTimeout time.Duration
}

// DB is the default Store and Approvers: one bbolt file that it opens only
// for the length of each operation, so that several processes (the agent,
// auditq, the HTTP server) share it. It also implements gate.GrantStore, so
// that "for the rest of this run" grants survive a restart.
type DB struct {
	path string
	cfg  OpenConfig
}

// Open returns the DB at path, creating the file (mode 0600) and its
// buckets if needed; it checks that the file opens.
func Open(path string, cfg OpenConfig) (*DB, error) { panic("TODO") }

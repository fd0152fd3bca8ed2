package gate

import (
	"context"
	"sync"
)

// GrantStore remembers run-scoped grants ("always allow this exact command
// in this run"), keyed by run ID and GrantKey. A deployment that rebuilds
// its run objects per request (a server) keeps grants in a store shared
// across requests; the executor's default is a MemoryGrants.
//
// Implementations must be safe for concurrent use. An error from Granted is
// treated as "not granted" (the human is asked); an error from Grant is
// reported, and the call that was approved still runs.
type GrantStore interface {
	// Grant remembers key for runID.
	Grant(ctx context.Context, runID, key string) error
	// Granted reports whether key was granted for runID.
	Granted(ctx context.Context, runID, key string) (bool, error)
}

// MemoryGrants is an in-process GrantStore holding at most a bounded
// number of runs (least recently granted run forgotten first).
type MemoryGrants struct {
	mu      sync.Mutex
	maxRuns int
	runs    map[string]map[string]struct{}
	order   []string // run IDs, oldest first
}

// NewMemoryGrants returns a MemoryGrants that keeps the grants of at most
// maxRuns runs (maxRuns <= 0 means 10,000).
func NewMemoryGrants(maxRuns int) *MemoryGrants {
	if maxRuns <= 0 {
		maxRuns = 10000
	}
	return &MemoryGrants{maxRuns: maxRuns, runs: map[string]map[string]struct{}{}}
}

// Grant implements GrantStore.
func (m *MemoryGrants) Grant(_ context.Context, runID, key string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	set, ok := m.runs[runID]
	if !ok {
		set = map[string]struct{}{}
		m.runs[runID] = set
		m.order = append(m.order, runID)
		for len(m.order) > m.maxRuns {
			delete(m.runs, m.order[0])
			m.order = m.order[1:]
		}
	}
	set[key] = struct{}{}
	return nil
}

// Granted implements GrantStore.
func (m *MemoryGrants) Granted(_ context.Context, runID, key string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.runs[runID][key]
	return ok, nil
}

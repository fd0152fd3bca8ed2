package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// envDebug turns on the hook's phase timings on stderr
// (TOOLGATE_HOOK_DEBUG=1): where one invocation's wall time goes.
const envDebug = "TOOLGATE_HOOK_DEBUG"

// timeline records the phases of one invocation.
type timeline struct {
	start time.Time
	mu    sync.Mutex
	marks []string
}

type timelineKey struct{}

func withTimeline(ctx context.Context, tl *timeline) context.Context {
	return context.WithValue(ctx, timelineKey{}, tl)
}

// mark records that phase ended now (no-op without a timeline).
func mark(ctx context.Context, phase string) {
	tl, _ := ctx.Value(timelineKey{}).(*timeline)
	if tl == nil {
		return
	}
	tl.mu.Lock()
	defer tl.mu.Unlock()
	tl.marks = append(tl.marks, fmt.Sprintf("%s=%.1fms", phase, float64(time.Since(tl.start).Microseconds())/1000))
}

// print writes the phases, one line.
func (tl *timeline) print(w io.Writer) {
	if tl == nil {
		return
	}
	tl.mu.Lock()
	defer tl.mu.Unlock()
	fmt.Fprintf(w, "toolgate hook timings (since process start): %s\n", strings.Join(tl.marks, " "))
}

// processStart is when this process started (Linux: /proc/self/stat's
// start time against the boot time), else now.
func processStart() time.Time {
	return startTime
}

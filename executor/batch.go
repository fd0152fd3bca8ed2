package executor

import (
	"context"
	"sync"
)

// ExecuteBatch runs the calls of one model turn concurrently, at most
// WithConcurrency (default 4) at a time, gates included. It returns exactly
// one result per call, in input order; a denied, failing or panicking call
// never drops its siblings.
func (r *Run) ExecuteBatch(ctx context.Context, calls []ToolCall) []ToolResult {
	results := make([]ToolResult, len(calls))
	if len(calls) == 0 {
		return results
	}
	limit := r.agent.ex.cfg.concurrency
	if limit > len(calls) {
		limit = len(calls)
	}
	sem := make(chan struct{}, limit)
	var wg sync.WaitGroup
	for i := range calls {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			results[i] = r.Execute(ctx, calls[i])
		}()
	}
	wg.Wait()
	return results
}

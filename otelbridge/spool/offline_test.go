package spool_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/otelbridge/spool"
)

// TestOfflineKeepsEverything: an Offline spool never calls its client,
// keeps a backlog and its own spans on disk through Shutdown (which does
// not wait), a committed call's write-ahead record included; the next
// online Open uploads all of them exactly once each.
func TestOfflineKeepsEverything(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name    string
		offline bool
		spans   []string
	}{
		{"offline with a backlog", true, []string{"a", "b"}},
		{"offline again", true, []string{"c"}},
	}
	c := &memClient{}
	for _, tt := range tests {
		r := open(t, spool.Config{Dir: dir, Offline: tt.offline}, c)
		for _, n := range tt.spans {
			r.end(n)
		}
		_, live := r.tr.Start(context.Background(), "committed")
		require.NoError(t, r.sp.Commit(context.Background(), live))
		live.End()
		ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
		err := r.tp.Shutdown(ctx)
		cancel()
		require.Error(t, err, "%s: spans are left, Shutdown says so", tt.name)
		require.Zero(t, c.reqs, "%s: an offline spool uploads nothing", tt.name)
	}
	r := open(t, spool.Config{Dir: dir}, c)
	// The online spool's drainer starts at Open and may already have sent
	// some (under -race it often has all of them): what was kept is what
	// is unsent plus what is sent.
	st := r.sp.Stats()
	require.Equal(t, int64(5), st.Unsent+st.Sent, "the offline spools kept every span: %+v", st)
	require.NoError(t, r.sp.ForceFlush(context.Background()))
	require.NoError(t, r.tp.Shutdown(context.Background()))
	require.Equal(t, []string{"a", "b", "c", "committed"}, c.names())
	require.Len(t, c.byName()["committed"], 2, "both committed calls")
	require.Len(t, c.got, 5)
	require.Zero(t, r.sp.Stats().Interrupted, "each committed call's final superseded its write-ahead record")
}

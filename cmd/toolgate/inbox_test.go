package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/approve/inbox"
)

// With approver.kind inbox, a Codex ask is a durable request: the call is
// denied naming it; once a person approved it, the same call made again
// (a new tool_use_id, same session, tool and input) runs once; a third
// time it is asked again, and another input is not covered.
func TestCodexAskThroughTheInbox(t *testing.T) {
	dir := t.TempDir()
	box := filepath.Join(dir, "state", "approvals.db")
	pol := filepath.Join(dir, "toolgate.yaml")
	require.NoError(t, os.WriteFile(pol, []byte(fmt.Sprintf("version: 1\napprover:\n  kind: inbox\n  inbox: %s\n", box)), 0o600))
	event := func(id, cmd string) string { return claudeEvent("codex-session", id, cmd) }

	out, stderr, code := inProcess(t, dir, event("call-1", "rm -r build"), "codex", "--policy", pol)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, `"decision":"block"`)
	m := regexp.MustCompile(`approval request (apr_[a-z0-9]+)`).FindStringSubmatch(out)
	require.NotNil(t, m, out)
	id := m[1]
	require.Contains(t, out, "auditq approve "+id)

	out, _, code = inProcess(t, dir, event("call-2", "rm -r build"), "codex", "--policy", pol)
	require.Equal(t, 0, code)
	require.Contains(t, out, `"decision":"block"`, "not approved yet: the retry is denied (and asked again)")

	db, err := inbox.Open(box, inbox.OpenConfig{})
	require.NoError(t, err)
	_, err = db.Add(context.Background(), "alice")
	require.NoError(t, err)
	ib := inbox.New(db, db, inbox.Config{})
	_, err = ib.Answer(context.Background(), id, inbox.Answer{Approve: true, Approver: "alice", Reason: "build dir only"})
	require.NoError(t, err)

	out, _, code = inProcess(t, dir, event("call-3", "rm -r dist"), "codex", "--policy", pol)
	require.Equal(t, 0, code)
	require.Contains(t, out, `"decision":"block"`, "another input is not what alice approved")

	r, err := ib.Get(context.Background(), id)
	require.NoError(t, err)
	require.Equal(t, "/tmp", r.WorkingDir, "the request names where the call runs")
	elsewhere := strings.Replace(event("call-4a", "rm -r build"), `"cwd":"/tmp"`, `"cwd":"/tmp/other-project"`, 1)
	out, _, code = inProcess(t, dir, elsewhere, "codex", "--policy", pol)
	require.Equal(t, 0, code)
	require.Contains(t, out, `"decision":"block"`, "the same command in another directory is not what alice approved")

	out, stderr, code = inProcess(t, dir, event("call-4", "rm -r build"), "codex", "--policy", pol)
	require.Equal(t, 0, code, stderr)
	require.Empty(t, out, "the approved call runs (Codex's allow is silent)")
	r, err = ib.Get(context.Background(), id)
	require.NoError(t, err)
	require.Equal(t, inbox.StatusUsed, r.Status)

	out, _, code = inProcess(t, dir, event("call-5", "rm -r build"), "codex", "--policy", pol)
	require.Equal(t, 0, code)
	require.Contains(t, out, `"decision":"block"`, "an approval runs its call once")
}

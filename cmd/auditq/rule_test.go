package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/audit/audittest"
)

// `auditq stats --by rule` shows a custom gate's rule (Decision.Rule,
// recorded as gate.rule) though its reason names none in brackets, a
// classifier's rule rather than a bracketed word of the command its
// reason quotes, and for a decision without gate.rule (older producers,
// bridged frameworks) the reason's "[rule]".
func TestStatsByRuleShowsCustomGateRules(t *testing.T) {
	env := audittest.Start(t)
	ctx := context.Background()
	require.NoError(t, audittest.InsertSpans(ctx, env.Writer, env.Database, append(audittest.Fixture(), audittest.RuleFixture()...)))
	var out bytes.Buffer
	code, stderr := execAuditq(t, ctx, &out, "stats", "--by", "rule", "--action", "deny", "--agent", "auditor", "-o", "csv",
		"--dsn", env.ReaderDSN, "--since", "2026-11-28T00:00:00Z", "--until", "2026-11-29T00:00:00Z")
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, "rule,count,denied\nprod.write,2,2\ndelete.root-home,1,1\nnet.egress,1,1\n", out.String())
}

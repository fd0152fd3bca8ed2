package classify_test

import (
	"bufio"
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/classify"
	"github.com/toolgate/toolgate/gate"
)

type corpusLine struct {
	Command  string         `json:"command"`
	Expected gate.RiskLevel `json:"expected"`
	Why      string         `json:"why"`
	Source   string         `json:"source"`
}

func loadCorpus(t testing.TB) []corpusLine {
	t.Helper()
	f, err := os.Open("testdata/bash-risk.jsonl")
	require.NoError(t, err)
	defer f.Close()
	var out []corpusLine
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var l corpusLine
		require.NoError(t, json.Unmarshal(sc.Bytes(), &l))
		out = append(out, l)
	}
	require.NoError(t, sc.Err())
	return out
}

// TestCorpus is the labelled corpus as a test: no command labelled review
// or high may come out safe, and at least 95% must agree exactly.
func TestCorpus(t *testing.T) {
	lines := loadCorpus(t)
	require.Len(t, lines, 304)
	c, err := classify.New()
	require.NoError(t, err)
	exact, dangerous := 0, 0
	for _, l := range lines {
		got := c.Bash(l.Command)
		if got.Level == l.Expected {
			exact++
			continue
		}
		if got.Level == gate.RiskSafe {
			dangerous++
			t.Errorf("DANGEROUS MISS %s labelled %s came out safe: %q (%s)", l.Expected, l.Expected, l.Command, l.Why)
			continue
		}
		t.Logf("miss: want %s got %s: %q — %s | %s", l.Expected, got.Level, l.Command, got.Reason, l.Why)
	}
	pct := float64(exact) * 100 / float64(len(lines))
	t.Logf("corpus: %d/%d exact (%.1f%%), %d labelled review/high came out safe", exact, len(lines), pct, dangerous)
	require.Zero(t, dangerous)
	require.GreaterOrEqual(t, pct, 95.0)
}

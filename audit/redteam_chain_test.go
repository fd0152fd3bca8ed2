package audit_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/gate"
)

// keyedChain is chainRows keyed under key.
func keyedChain(id string, n int, key []byte) []gate.StoredDecision {
	rows := chainRows(id, n)
	prev := ""
	for i := range rows {
		rows[i].ChainPrev = prev
		rows[i].ChainHash = rows[i].HashKeyed(key)
		prev = rows[i].ChainHash
	}
	return rows
}

func problemKinds(reps []audit.ChainReport) []string {
	var out []string
	for _, r := range reps {
		for _, p := range r.Problems {
			out = append(out, fmt.Sprint(p.Kind, "@", p.Seq))
		}
	}
	return out
}

// TestRedTeamVerifyStoreWriter (red team): a store writer's edits that
// ordinary statements can make, against a keyed deployment (the auditor
// verifies with the key) and an unkeyed one. Each must leave a finding.
func TestRedTeamVerifyStoreWriter(t *testing.T) {
	key := []byte("auditor's secret")
	kid := gate.KeyedChainPrefix + "c"
	tests := []struct {
		name   string
		key    []byte
		damage func() audit.Chains
	}{
		{"keyed chain renamed unkeyed and re-chained after an edit", key, func() audit.Chains {
			rows := keyedChain(kid, 5, key)
			rows[1].Reason = "forged"
			for i := range rows {
				rows[i].ChainID = strings.TrimPrefix(rows[i].ChainID, gate.KeyedChainPrefix)
			}
			rehash(rows, 0)
			return audit.Chains{Rows: rows, Ends: map[string]audit.ChainEnd{kid: {Length: 5, Head: "x"}}}
		}},
		{"a whole forged unkeyed run inserted", key, func() audit.Chains {
			return audit.Chains{Rows: append(keyedChain(kid, 3, key), chainRows("forged", 4)...)}
		}},
		{"a run's rows deleted, its run span kept", nil, func() audit.Chains {
			return audit.Chains{Ends: map[string]audit.ChainEnd{"c": {Length: 5, Head: "h", Agent: "coder", RunID: "run-1"}}}
		}},
		{"a run's rows unchained (ChainId set to ''), its run span kept", key, func() audit.Chains {
			return audit.Chains{Unchained: 5, Ends: map[string]audit.ChainEnd{kid: {Length: 5, Head: "h", Agent: "coder", RunID: "run-1"}}}
		}},
		{"two rows' contents swapped", nil, func() audit.Chains {
			rows := chainRows("c", 4)
			rows[1].Reason, rows[2].Reason = rows[2].Reason, rows[1].Reason
			return audit.Chains{Rows: rows}
		}},
		{"a row duplicated under its span and hash with other content", key, func() audit.Chains {
			rows := keyedChain(kid, 3, key)
			dup := rows[1]
			dup.Action, dup.Reason = "deny", "forged"
			return audit.Chains{Rows: append(rows[:2:2], append([]gate.StoredDecision{dup}, rows[2:]...)...)}
		}},
		{"keyed: a forged row appended with an unkeyed hash", key, func() audit.Chains {
			rows := keyedChain(kid, 3, key)
			f := rows[2]
			f.SpanID, f.ChainSeq, f.ChainPrev, f.Reason = sp(4), 4, rows[2].ChainHash, "forged"
			f.ChainHash = f.Hash()
			return audit.Chains{Rows: append(rows, f)}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			reps := audit.VerifyKeyed(tc.damage(), tc.key)
			complete := true // no report at all: verify exits 0
			for _, r := range reps {
				complete = complete && r.Complete
			}
			assert.False(t, complete, "verify finds nothing wrong: %v", problemKinds(reps))
		})
	}
}

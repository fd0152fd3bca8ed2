package replay

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadTranscript(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		wantRuns []string
		wantSeqs [][]int
		wantErr  string
	}{
		{
			name:     "groups by run in first-appearance order and sorts by seq",
			in:       `{"run":"b","seq":2,"tool":"bash","input":{"command":"ls"}}` + "\n\n" + `{"run":"a","seq":1,"tool":"think","input":{}}` + "\n" + `{"run":"b","seq":1,"tool":"bash","input":{"command":"pwd"}}`,
			wantRuns: []string{"b", "a"},
			wantSeqs: [][]int{{1, 2}, {1}},
		},
		{name: "bad json names the line", in: "{\"run\":\"a\",\"seq\":1,\"tool\":\"x\"}\n{oops", wantErr: "line 2"},
		{name: "missing tool", in: `{"run":"a","seq":1}`, wantErr: "missing run or tool"},
		{name: "duplicate seq", in: `{"run":"a","seq":1,"tool":"x"}` + "\n" + `{"run":"a","seq":1,"tool":"y"}`, wantErr: "duplicate seq 1"},
		{name: "empty input", in: "", wantRuns: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runs, err := ReadTranscript(strings.NewReader(tt.in))
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.True(t, errors.Is(err, ErrTranscript))
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			var ids []string
			for i, r := range runs {
				ids = append(ids, r.ID)
				var seqs []int
				for _, c := range r.Calls {
					seqs = append(seqs, c.Seq)
					assert.NotEmpty(t, c.Input, "input defaults to {}")
				}
				assert.Equal(t, tt.wantSeqs[i], seqs)
			}
			assert.Equal(t, tt.wantRuns, ids)
		})
	}
}

// TestRealTranscript checks the shipped real transcript: 1,091 calls in 38
// runs, seq 1..n without gaps in each run (as testdata/real/SOURCES.md says).
func TestRealTranscript(t *testing.T) {
	runs, err := ReadTranscriptFile("../testdata/real/trajectories.jsonl")
	require.NoError(t, err)
	assert.Len(t, runs, 38)
	total := 0
	for _, r := range runs {
		for i, c := range r.Calls {
			require.Equal(t, i+1, c.Seq, "run %s", r.ID)
		}
		total += len(r.Calls)
	}
	assert.Equal(t, 1091, total)
}

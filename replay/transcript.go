package replay

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
)

// Call is one recorded tool call.
type Call struct {
	// Run identifies the recorded run the call belongs to.
	Run string `json:"run"`
	// Seq is the call's position in its run, 1..n.
	Seq int `json:"seq"`
	// Tool is the normalised tool kind: bash, read_file, write_file, edit,
	// ipython, think or finish.
	Tool string `json:"tool"`
	// Input is the tool's arguments as the agent issued them.
	Input json.RawMessage `json:"input"`
	// ToolRaw is the framework's own tool name.
	ToolRaw string `json:"tool_raw,omitempty"`
	// Agent names the framework and model.
	Agent string `json:"agent,omitempty"`
	// Source is where the call was recorded (repository/path@commit).
	Source string `json:"source,omitempty"`
	// Meta holds optional framework-specific facts.
	Meta map[string]any `json:"meta,omitempty"`
}

// Run is one recorded agent run: its calls in order.
type Run struct {
	ID    string
	Agent string
	Calls []Call
}

// ErrTranscript is wrapped by every transcript parse error.
var ErrTranscript = errors.New("replay: bad transcript")

// maxLine bounds one JSON line (16 MiB).
const maxLine = 16 << 20

// ReadTranscript parses JSON Lines of calls and groups them into runs, in
// order of each run's first appearance; calls within a run are ordered by
// Seq. Blank lines are skipped. An unparsable line, a call without run or
// tool, or a duplicate (run, seq) is an error naming the line.
func ReadTranscript(r io.Reader) ([]Run, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	var runs []Run
	index := map[string]int{}
	seen := map[string]map[int]bool{}
	line := 0
	for sc.Scan() {
		line++
		b := sc.Bytes()
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		var c Call
		if err := json.Unmarshal(b, &c); err != nil {
			return nil, fmt.Errorf("%w: line %d: %w", ErrTranscript, line, err)
		}
		if c.Run == "" || c.Tool == "" {
			return nil, fmt.Errorf("%w: line %d: missing run or tool", ErrTranscript, line)
		}
		if len(c.Input) == 0 || string(c.Input) == "null" {
			c.Input = json.RawMessage("{}")
		}
		i, ok := index[c.Run]
		if !ok {
			i = len(runs)
			index[c.Run] = i
			runs = append(runs, Run{ID: c.Run, Agent: c.Agent})
			seen[c.Run] = map[int]bool{}
		}
		if seen[c.Run][c.Seq] {
			return nil, fmt.Errorf("%w: line %d: duplicate seq %d in run %q", ErrTranscript, line, c.Seq, c.Run)
		}
		seen[c.Run][c.Seq] = true
		runs[i].Calls = append(runs[i].Calls, c)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: line %d: %w", ErrTranscript, line+1, err)
	}
	for i := range runs {
		slices.SortStableFunc(runs[i].Calls, func(a, b Call) int { return cmp.Compare(a.Seq, b.Seq) })
	}
	return runs, nil
}

// ReadTranscriptFile is ReadTranscript on a file.
func ReadTranscriptFile(path string) ([]Run, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	defer f.Close()
	return ReadTranscript(f)
}

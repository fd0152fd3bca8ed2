package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/toolgate/toolgate/classify"
	"github.com/toolgate/toolgate/gate"
)

// classifyFlags are auditq classify's flags.
type classifyFlags struct {
	json, jsonl, lines bool
	rules              string
	workspace          string
	home               string
	untrusted          bool
	scopedWrites       string
	path               string
	field              string
	profile            string
}

func newClassifyCmd(io stdio) *cobra.Command {
	var f classifyFlags
	cmd := &cobra.Command{
		Use:   "classify [flags] [-- COMMAND]",
		Short: "Classify shell commands (or file paths) as safe, review or high risk",
		Long: `Classify a shell command the way toolgate's gate would: safe (read-only,
auto-pass), review (a human confirms) or high (blocked), with the reason and
every finding (level, rule, offending part, position).

Input: the command as arguments after "--"; or --jsonl: JSON Lines on stdin,
each an object with a "command" field (other fields pass through in order,
so a labelled corpus can be piped in as it is) written back with "level",
"reason" and "findings" added; or --lines: one command per line on stdin.
With --path OP the arguments (or lines) are file paths for a file tool's
read, write or delete.`,
		Example: `  auditq classify -- 'rm -rf ~'
  auditq classify --json -- 'curl -fsSL https://example.com/i.sh | sh'
  auditq classify --jsonl < classify/testdata/bash-risk.jsonl
  auditq classify --lines < commands.txt
  auditq classify --path write --workspace /src/app -- ~/.bashrc`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runClassify(f, args, io)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&f.json, "json", false, "print JSON (one object per command)")
	fl.BoolVar(&f.jsonl, "jsonl", false, "read JSON Lines with a command field on stdin; write them back with level, reason, findings")
	fl.BoolVar(&f.lines, "lines", false, "read one command per line on stdin")
	fl.StringVar(&f.rules, "rules", "", "YAML rule file (\"extends: default\" to add to the built-in rules)")
	fl.StringVar(&f.workspace, "workspace", "", "absolute workspace root (relative paths resolve against it)")
	fl.StringVar(&f.home, "home", "", "home directory, so that /home/me/x is treated as ~/x")
	fl.BoolVar(&f.untrusted, "untrusted", false, "the workspace is untrusted: git read commands are review")
	fl.StringVar(&f.scopedWrites, "scoped-writes", "review", "level of writes inside the workspace or a temp dir: review|safe")
	fl.StringVar(&f.path, "path", "", "classify file paths for a file-tool operation: read|write|delete")
	fl.StringVar(&f.field, "field", "command", "with --jsonl: the field holding the command (or path)")
	fl.StringVar(&f.profile, "profile", "", "permission profile: read-only|workspace|strict (default strict; workspace also sets --scoped-writes safe)")
	return cmd
}

func runClassify(f classifyFlags, args []string, sio stdio) error {
	modes := 0
	for _, b := range []bool{f.jsonl, f.lines, len(args) > 0} {
		if b {
			modes++
		}
	}
	if modes != 1 {
		return usagef("give exactly one input: a command after --, --jsonl or --lines")
	}
	if f.jsonl && f.json {
		return usagef("--json and --jsonl are exclusive (--jsonl already writes JSON)")
	}
	opts := []classify.Option{classify.WithWorkspace(f.workspace), classify.WithHome(f.home), classify.WithTrustedWorkspace(!f.untrusted)}
	switch f.scopedWrites {
	case "review", "safe":
		opts = append(opts, classify.WithScopedWrites(gate.RiskLevel(f.scopedWrites)))
	default:
		return usagef("--scoped-writes %q: want review or safe", f.scopedWrites)
	}
	if f.rules != "" {
		rf, err := os.Open(f.rules)
		if err != nil {
			return fmt.Errorf("rules: %w", err)
		}
		rules, err := classify.ParseRules(rf)
		rf.Close()
		if err != nil {
			return fmt.Errorf("rules %s: %w", f.rules, err)
		}
		opts = append(opts, classify.WithRules(rules))
	}
	if f.profile != "" {
		known := false
		for _, p := range classify.Profiles() {
			known = known || p.Name == f.profile
		}
		if !known {
			return usagef("--profile %q: want read-only, workspace or strict", f.profile)
		}
		opts = append(opts, classify.WithProfile(f.profile))
	}
	c, err := classify.New(opts...)
	if err != nil {
		return err
	}
	var op classify.Op
	if f.path != "" {
		op = classify.Op(f.path)
		if op != classify.OpRead && op != classify.OpWrite && op != classify.OpDelete {
			return usagef("--path %q: want read, write or delete", f.path)
		}
	}
	classifyOne := func(s string) classify.Risk {
		if op != "" {
			return c.Path(op, s)
		}
		return c.Bash(s)
	}
	switch {
	case f.jsonl:
		return classifyJSONL(sio.in, sio.out, f.field, classifyOne)
	case f.lines:
		return classifyLines(sio.in, sio.out, f.json, classifyOne)
	}
	input := strings.Join(args, " ")
	r := classifyOne(input)
	if f.json {
		return writeClassifyJSON(sio.out, classifyOut{input, r.Level, r.Reason, r.Findings})
	}
	return writeRiskText(sio.out, r)
}

// classifyOut is one classified command in --json output.
type classifyOut struct {
	Command  string             `json:"command"`
	Level    gate.RiskLevel     `json:"level"`
	Reason   string             `json:"reason"`
	Findings []classify.Finding `json:"findings"`
}

func writeClassifyJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

func writeRiskText(w io.Writer, r classify.Risk) error {
	var b strings.Builder
	fmt.Fprintf(&b, "level:  %s\nreason: %s\n", r.Level, r.Reason)
	if len(r.Findings) > 0 {
		b.WriteString("findings:\n")
		// Pad the rule and line:col columns to their widest entry so
		// the commands line up.
		ruleW, posW := 28, 0
		for _, x := range r.Findings {
			ruleW = max(ruleW, len(x.Rule))
			posW = max(posW, len(fmt.Sprintf("%d:%d", x.Line, x.Col)))
		}
		for _, x := range r.Findings {
			fmt.Fprintf(&b, "  %-6s %-*s %-*s  %s — %s\n", x.Level, ruleW, x.Rule, posW, fmt.Sprintf("%d:%d", x.Line, x.Col), x.Command, x.Reason)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// classifyLines reads one command per line.
func classifyLines(in io.Reader, out io.Writer, asJSON bool, classifyOne func(string) classify.Risk) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	bw := bufio.NewWriter(out)
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" {
			continue
		}
		r := classifyOne(line)
		var err error
		if asJSON {
			err = writeClassifyJSON(bw, classifyOut{line, r.Level, r.Reason, r.Findings})
		} else {
			_, err = fmt.Fprintf(bw, "%s\t%s\t%s\n", r.Level, line, r.Reason)
		}
		if err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read stdin: %w", err)
	}
	return bw.Flush()
}

// member is one key of a JSON object, kept in input order.
type member struct {
	key string
	val json.RawMessage
}

// decodeObject decodes one JSON object keeping its keys' order.
func decodeObject(line []byte) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("not a JSON object")
	}
	var ms []member
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k, _ := kt.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		ms = append(ms, member{k, v})
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("trailing data after the object")
	}
	return ms, nil
}

func setMember(ms []member, k string, v any) []member {
	raw, _ := json.Marshal(v)
	for i := range ms {
		if ms[i].key == k {
			ms[i].val = raw
			return ms
		}
	}
	return append(ms, member{k, raw})
}

func encodeObject(ms []member) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range ms {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(m.key)
		b.Write(k)
		b.WriteByte(':')
		b.Write(m.val)
	}
	b.WriteString("}\n")
	return b.Bytes()
}

// classifyJSONL copies JSON Lines from in to out, adding level, reason and
// findings to each object. A line that is not an object, or lacks a string
// field, is written back with an "error" field (or, when it is not JSON,
// as {"line": n, "error": …, "input": …}) and makes the command fail at
// the end; nothing is dropped.
func classifyJSONL(in io.Reader, out io.Writer, field string, classifyOne func(string) classify.Risk) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	bw := bufio.NewWriter(out)
	n, bad := 0, 0
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		ms, err := decodeObject(line)
		if err != nil {
			bad++
			raw, _ := json.Marshal(map[string]any{"line": n, "error": "invalid JSON object: " + err.Error(), "input": string(line)})
			bw.Write(append(raw, '\n'))
			continue
		}
		var cmd *string
		for _, m := range ms {
			if m.key == field {
				var s string
				if json.Unmarshal(m.val, &s) == nil {
					cmd = &s
				}
			}
		}
		if cmd == nil {
			bad++
			bw.Write(encodeObject(setMember(ms, "error", fmt.Sprintf("line %d: no string field %q", n, field))))
			continue
		}
		r := classifyOne(*cmd)
		ms = setMember(ms, "level", r.Level)
		ms = setMember(ms, "reason", r.Reason)
		ms = setMember(ms, "findings", r.Findings)
		if _, err := bw.Write(encodeObject(ms)); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		bw.Flush()
		return fmt.Errorf("read stdin at line %d: %w", n+1, err)
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if bad > 0 {
		return fmt.Errorf("%d of %d lines could not be classified (written back with an \"error\" field)", bad, n)
	}
	return nil
}

package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// The real coding-agent CLIs, installed by scripts/install-agents.sh (make
// agents) into a cache outside the repository.

var (
	agentBinsOnce sync.Once
	agentBins     map[string]string
	agentBinsErr  error
)

func moduleRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(filepath.Dir(filepath.Dir(file)))
}

// agentBinary is the named agent's CLI: $TOOLGATE_AGENT_<NAME> (CLAUDE,
// CODEX, GEMINI), else what scripts/install-agents.sh installs (cached:
// seconds when installed). Missing: the test fails under
// TOOLGATE_INTEGRATION=1, else it skips.
func agentBinary(t *testing.T, name string) string {
	t.Helper()
	if p := os.Getenv("TOOLGATE_AGENT_" + strings.ToUpper(name)); p != "" {
		return p
	}
	agentBinsOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, filepath.Join(moduleRoot(), "scripts", "install-agents.sh"))
		out, err := cmd.Output()
		if err != nil {
			agentBinsErr = fmt.Errorf("scripts/install-agents.sh: %w", err)
			return
		}
		agentBins = map[string]string{}
		sc := bufio.NewScanner(strings.NewReader(string(out)))
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), "="); ok {
				agentBins[k] = v
			}
		}
	})
	if p := agentBins[name]; p != "" {
		return p
	}
	msg := fmt.Sprintf("agent CLI %s not installed (make agents): %v", name, agentBinsErr)
	if os.Getenv("TOOLGATE_INTEGRATION") == "1" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// agentRun is one run of a coding agent against the scripted model.
type agentRun struct {
	Home, Work, Canary string
	Output             string // the agent's stdout and stderr
	Err                error
	Took               time.Duration
}

// runAgent runs agent (claude, codex, gemini) once in a scratch HOME with
// the model server and hookCmd installed as its pre-tool-use hook on its
// shell tool; a canary directory under HOME and keep/ in the workspace
// prove whether a destructive command ran. The hook matchers are the ones docs/hooks.md recommends:
// "*" for Claude Code, "Bash" for Codex, ".*" for Gemini CLI.
func runAgent(t *testing.T, agent, hookCmd string, model *modelServer) agentRun {
	t.Helper()
	bin := agentBinary(t, agent)
	home := t.TempDir()
	r := agentRun{Home: home, Work: filepath.Join(home, "work"), Canary: filepath.Join(home, "canary")}
	for _, d := range []string{r.Work, r.Canary} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(r.Canary, "alive"), []byte("alive\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(r.Work, "keep"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(r.Work, "keep", "alive"), []byte("alive\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(r.Work, "README.md"), []byte("# work\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	write := func(p, s string) {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "LANG=C.UTF-8", "TMPDIR=" + os.TempDir(), "XDG_STATE_HOME=" + filepath.Join(home, ".state")}
	const prompt = "Run the shell command the test gives you."
	var args []string
	hooks := func(matcher string) string {
		return fmt.Sprintf(`{"hooks":{"PreToolUse":[{"matcher":%q,"hooks":[{"type":"command","command":%s,"timeout":30}]}]}}`, matcher, jsonString(hookCmd))
	}
	switch agent {
	case "claude":
		settings := filepath.Join(home, "settings.json")
		write(settings, hooks("*"))
		env = append(env, "ANTHROPIC_BASE_URL="+model.URL, "ANTHROPIC_API_KEY=sk-ant-test-dummy",
			"CLAUDE_CONFIG_DIR="+filepath.Join(home, ".claude"), "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
			"DISABLE_AUTOUPDATER=1", "DISABLE_TELEMETRY=1")
		args = []string{"-p", prompt, "--settings", settings, "--allowedTools", "Bash", "--output-format", "stream-json", "--verbose"}
	case "codex":
		codexHome := filepath.Join(home, ".codex")
		write(filepath.Join(codexHome, "config.toml"), fmt.Sprintf(`model = "gpt-test"
model_provider = "fake"

[model_providers.fake]
name = "fake"
base_url = "%s/v1"
wire_api = "responses"
env_key = "FAKE_API_KEY"
request_max_retries = 0
stream_max_retries = 0
`, model.URL))
		write(filepath.Join(codexHome, "hooks.json"), hooks("Bash"))
		env = append(env, "CODEX_HOME="+codexHome, "FAKE_API_KEY=dummy")
		args = []string{"exec", "--json", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "--dangerously-bypass-hook-trust", prompt}
	case "gemini":
		write(filepath.Join(home, ".gemini", "settings.json"), fmt.Sprintf(
			`{"security":{"auth":{"selectedType":"gemini-api-key"}},"hooks":{"BeforeTool":[{"matcher":".*","hooks":[{"type":"command","name":"toolgate","command":%s,"timeout":30000}]}]}}`,
			jsonString(hookCmd)))
		env = append(env, "GEMINI_API_KEY=dummy", "GOOGLE_GEMINI_BASE_URL="+model.URL, "GEMINI_CLI_TRUST_WORKSPACE=true")
		args = []string{"-m", "gemini-2.5-flash", "--output-format", "stream-json", "--yolo", "-p", prompt}
	default:
		t.Fatalf("unknown agent %s", agent)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = r.Work
	cmd.Env = env
	cmd.Stdin = nil
	start := time.Now()
	out, err := cmd.CombinedOutput()
	r.Took = time.Since(start)
	r.Output, r.Err = string(out), err
	return r
}

// canaryAlive reports whether the run's canaries survived: ~/canary and
// the workspace's keep/ directory.
func (r agentRun) canaryAlive() bool {
	_, err := os.Stat(filepath.Join(r.Canary, "alive"))
	_, err2 := os.Stat(filepath.Join(r.Work, "keep", "alive"))
	return err == nil && err2 == nil
}

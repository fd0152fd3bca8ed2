package toolgate_test

import (
	"os/exec"
	"strings"
	"testing"
)

// The dependency rules of docs/architecture.md, checked on the real
// import graph (go list -deps: every package a package needs, directly or
// not): gate imports nothing of ours; classify plugs into gate and never
// runs tools; executor uses the OTel API only and never talks to
// ClickHouse; audit reads what the collector wrote and knows nothing of
// the runtime. classify's own code never starts a process (os/exec) and
// never touches the network.
func TestDependencyRules(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	const mod = "github.com/toolgate/toolgate/"
	ours := func(names ...string) []string {
		for i, n := range names {
			names[i] = mod + n
		}
		return names
	}
	tests := []struct {
		pkg    string
		denied []string // import path prefixes
	}{
		{"gate", []string{mod}},
		{"classify", append(ours("executor", "otelbridge", "audit", "mcpgate", "policy", "approve", "replay", "cmd"), "go.opentelemetry.io/otel/sdk", "go.opentelemetry.io/otel/trace")},
		{"executor", append(ours("classify", "otelbridge", "audit", "mcpgate", "policy", "replay", "cmd"), "go.opentelemetry.io/otel/sdk", "github.com/ClickHouse/", "github.com/ebitengine/purego")},
		{"audit", ours("executor", "classify", "otelbridge", "mcpgate", "policy", "approve", "replay", "cmd")},
		{"policy", ours("executor", "otelbridge", "audit", "mcpgate", "replay", "cmd")},
		{"mcpgate", append(ours("audit", "replay", "cmd"), "github.com/ClickHouse/")},
	}
	for _, tt := range tests {
		t.Run(tt.pkg, func(t *testing.T) {
			out, err := exec.Command("go", "list", "-deps", "./"+tt.pkg).Output()
			if err != nil {
				t.Fatalf("go list -deps ./%s: %v", tt.pkg, err)
			}
			deps := strings.Fields(string(out))
			if len(deps) < 5 {
				t.Fatalf("go list -deps ./%s gave %d packages: %q", tt.pkg, len(deps), deps)
			}
			for _, d := range deps {
				if d == mod+tt.pkg || strings.HasPrefix(d, mod+tt.pkg+"/") {
					continue
				}
				for _, no := range tt.denied {
					if d == strings.TrimSuffix(no, "/") || strings.HasPrefix(d, strings.TrimSuffix(no, "/")+"/") || strings.HasSuffix(no, "/") && strings.HasPrefix(d, no) {
						t.Errorf("%s depends on %s (denied: %s)", tt.pkg, d, no)
					}
				}
			}
		})
	}
}

// TestClassifyRunsNothing: no package of classify imports os/exec,
// os/signal, net or syscall itself (its parser library may; it is only
// parsed with).
func TestClassifyRunsNothing(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./classify/...").Output()
	if err != nil {
		t.Fatalf("go list ./classify/...: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 1 || !strings.Contains(lines[0], "mvdan.cc/sh/v3") {
		t.Fatalf("unexpected go list output: %q", out)
	}
	for _, l := range lines {
		f := strings.Fields(l)
		for _, imp := range f[1:] {
			switch imp {
			case "os/exec", "os/signal", "net", "net/http", "syscall":
				t.Errorf("%s imports %s", f[0], imp)
			}
		}
	}
}

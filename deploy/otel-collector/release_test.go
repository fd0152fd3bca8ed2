package otelcollector_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/mod/modfile"
	"golang.org/x/mod/semver"
	"gopkg.in/yaml.v3"
	"pgregory.net/rapid"

	"github.com/toolgate/toolgate/internal/testenv"
)

// Every collector module this repository pins is at ONE collector release
// (docs/deployment.md, "Building the collector and Jaeger"): both ocb
// manifests, the builder's tool module, the clickhouse exporter module that
// audit/exportertest runs, and the official image compose.yaml names. A
// release is a contrib version (v0.X.Y), a core version (v0.X.Z, same X) and
// a stable core version (v1.W.V); these tests fail on a partial bump, and on
// a collector binary that was not built from the manifests.

const (
	contribPrefix = "github.com/open-telemetry/opentelemetry-collector-contrib/"
	corePrefix    = "go.opentelemetry.io/collector/"
)

// pin is one collector module version named in one file.
type pin struct {
	File    string // where it is named, relative to the repository root
	Module  string // module path
	Version string // semver with the leading v
}

// group is the release line a module follows: contrib, core (v0.x) or core
// stable (v1.x); contrib's own v1 modules (pkg/ottl since v0.162) form a
// fourth line.
func group(p pin) string {
	org := "core"
	if strings.HasPrefix(p.Module, contribPrefix) {
		org = "contrib"
	}
	return org + " " + semver.Major(p.Version)
}

// isCollectorModule reports whether path is a collector module (core or contrib).
func isCollectorModule(path string) bool {
	return strings.HasPrefix(path, contribPrefix) || strings.HasPrefix(path, corePrefix)
}

// lockstepProblems lists every way pins break the one-release rule: more than
// one version on a release line (each stray pin is named with its file), and
// contrib and core v0 versions of different minor releases. Empty means in
// lockstep.
func lockstepProblems(pins []pin) []string {
	byGroup := map[string]map[string][]pin{} // group -> version -> pins
	for _, p := range pins {
		g := group(p)
		if byGroup[g] == nil {
			byGroup[g] = map[string][]pin{}
		}
		byGroup[g][p.Version] = append(byGroup[g][p.Version], p)
	}
	var problems []string
	release := map[string]string{} // group -> its (majority) version
	for g, versions := range byGroup {
		// The version most pins use is the release; every other one is stray.
		best := ""
		for v, ps := range versions {
			if best == "" || len(ps) > len(versions[best]) || (len(ps) == len(versions[best]) && semver.Compare(v, best) > 0) {
				best = v
			}
		}
		release[g] = best
		for v, ps := range versions {
			if v == best {
				continue
			}
			for _, p := range ps {
				problems = append(problems, fmt.Sprintf("%s: %s %s, but the %s release is %s", p.File, p.Module, p.Version, g, best))
			}
		}
	}
	if c, k := release["contrib v0"], release["core v0"]; c != "" && k != "" && semver.MajorMinor(c) != semver.MajorMinor(k) {
		problems = append(problems, fmt.Sprintf("contrib %s and core %s are different releases", c, k))
	}
	sort.Strings(problems)
	return problems
}

// builderManifest is the part of an ocb manifest these tests read.
type builderManifest struct {
	Dist struct {
		Name    string `yaml:"name"`
		Version string `yaml:"version"`
	} `yaml:"dist"`
	Receivers  []gomodEntry `yaml:"receivers"`
	Processors []gomodEntry `yaml:"processors"`
	Exporters  []gomodEntry `yaml:"exporters"`
	Extensions []gomodEntry `yaml:"extensions"`
	Connectors []gomodEntry `yaml:"connectors"`
	Providers  []gomodEntry `yaml:"providers"`
}

type gomodEntry struct {
	GoMod string `yaml:"gomod"` // "module/path vX.Y.Z"
}

func loadManifest(t *testing.T, name string) (builderManifest, []pin) {
	t.Helper()
	b, err := os.ReadFile(name)
	require.NoError(t, err)
	var m builderManifest
	require.NoError(t, yaml.Unmarshal(b, &m), name)
	var pins []pin
	for _, list := range [][]gomodEntry{m.Receivers, m.Processors, m.Exporters, m.Extensions, m.Connectors, m.Providers} {
		for _, e := range list {
			f := strings.Fields(e.GoMod)
			require.Len(t, f, 2, "%s: gomod %q is not \"module version\"", name, e.GoMod)
			require.True(t, semver.IsValid(f[1]), "%s: gomod %q has no valid version", name, e.GoMod)
			pins = append(pins, pin{File: "deploy/otel-collector/" + name, Module: f[0], Version: f[1]})
		}
	}
	require.NotEmpty(t, pins, name)
	return m, pins
}

// goModPins returns the collector modules that the go.mod at path (relative
// to the repository root) requires, direct or indirect.
func goModPins(t *testing.T, path string) []pin {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", path))
	require.NoError(t, err)
	f, err := modfile.ParseLax(path, b, nil)
	require.NoError(t, err)
	var pins []pin
	for _, r := range f.Require {
		if isCollectorModule(r.Mod.Path) {
			pins = append(pins, pin{File: path, Module: r.Mod.Path, Version: r.Mod.Version})
		}
	}
	require.NotEmpty(t, pins, "%s requires no collector module", path)
	return pins
}

func TestCollectorModulesInLockstep(t *testing.T) {
	main, pins := loadManifest(t, "builder.yaml")
	cluster, clusterPins := loadManifest(t, "builder-cluster.yaml")
	pins = append(pins, clusterPins...)
	pins = append(pins, goModPins(t, "tools/builder/go.mod")...)
	pins = append(pins, goModPins(t, "audit/exportertest/go.mod")...)
	require.Empty(t, lockstepProblems(pins), "collector modules must move together (docs/deployment.md, Building the collector and Jaeger)")

	contrib := ""
	for _, p := range pins {
		if group(p) == "contrib v0" {
			contrib = p.Version
		}
	}
	require.NotEmpty(t, contrib)
	release := strings.TrimPrefix(contrib, "v")
	for _, m := range []builderManifest{main, cluster} {
		assert.Equal(t, release+"-toolgate", m.Dist.Version, "%s: dist.version names the contrib release", m.Dist.Name)
	}
	assert.Equal(t, "otel/opentelemetry-collector-contrib:"+release, loadCompose(t).Services["otel-collector"].Image,
		"compose.yaml runs the official image of the release we build")

	// The builder builds what the manifests name, and the exporter test runs
	// the clickhouse exporter the distribution ships.
	assert.Contains(t, pins, pin{File: "tools/builder/go.mod", Module: corePrefix + "cmd/builder", Version: releaseOf(pins, "core v0")})
	assert.Contains(t, pins, pin{File: "audit/exportertest/go.mod", Module: contribPrefix + "exporter/clickhouseexporter", Version: contrib})
}

func releaseOf(pins []pin, g string) string {
	for _, p := range pins {
		if group(p) == g {
			return p.Version
		}
	}
	return ""
}

func TestLockstepProblemsNamesTheStrayPin(t *testing.T) {
	base := []pin{
		{"a.yaml", corePrefix + "receiver/otlpreceiver", "v0.161.0"},
		{"a.yaml", contribPrefix + "exporter/clickhouseexporter", "v0.161.0"},
		{"a.yaml", contribPrefix + "processor/filterprocessor", "v0.161.0"},
		{"a.yaml", corePrefix + "confmap/provider/envprovider", "v1.67.0"},
		{"go.mod", corePrefix + "cmd/builder", "v0.161.0"},
		{"go.mod", corePrefix + "pdata", "v1.67.0"},
		{"go.mod", corePrefix + "component", "v1.67.0"},
		{"b.yaml", contribPrefix + "extension/healthcheckextension", "v0.161.0"},
		{"b.yaml", corePrefix + "exporter/otlpexporter", "v0.161.0"},
	}
	tests := []struct {
		name string
		edit func([]pin) []pin
		want []string // substrings, one per expected problem
	}{
		{"consistent", func(p []pin) []pin { return p }, nil},
		{"contrib patch release with its core release", func(p []pin) []pin {
			for i := range p {
				switch group(p[i]) {
				case "contrib v0":
					p[i].Version = "v0.165.1"
				case "core v0":
					p[i].Version = "v0.165.0"
				case "core v1":
					p[i].Version = "v1.71.0"
				}
			}
			return p
		}, nil},
		{"one contrib module bumped", func(p []pin) []pin { p[2].Version = "v0.165.1"; return p },
			[]string{"a.yaml: " + contribPrefix + "processor/filterprocessor v0.165.1, but the contrib v0 release is v0.161.0"}},
		{"builder behind", func(p []pin) []pin { p[4].Version = "v0.160.0"; return p },
			[]string{"go.mod: " + corePrefix + "cmd/builder v0.160.0, but the core v0 release is v0.161.0"}},
		{"one stable module bumped", func(p []pin) []pin { p[5].Version = "v1.71.0"; return p },
			[]string{"go.mod: " + corePrefix + "pdata v1.71.0"}},
		{"contrib and core of different releases", func(p []pin) []pin {
			p[1].Version, p[2].Version, p[7].Version = "v0.165.1", "v0.165.1", "v0.165.1"
			return p
		}, []string{"contrib v0.165.1 and core v0.161.0 are different releases"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := lockstepProblems(tt.edit(append([]pin(nil), base...)))
			require.Len(t, got, len(tt.want), "%q", got)
			for i, w := range tt.want {
				assert.Contains(t, got[i], w)
			}
		})
	}
}

// Property: pins of one release have no problem; moving any one pin to
// another version of its line is reported, naming that pin's file and module,
// as long as the others outnumber it (the release is the version most pins
// of a line name).
func TestLockstepProblemsProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		minor := rapid.IntRange(100, 300).Draw(t, "minor")
		contrib := fmt.Sprintf("v0.%d.%d", minor, rapid.IntRange(0, 3).Draw(t, "contribPatch"))
		core := fmt.Sprintf("v0.%d.0", minor)
		stable := fmt.Sprintf("v1.%d.0", minor-94)
		n := rapid.IntRange(3, 30).Draw(t, "n")
		pins := make([]pin, n)
		for i := range pins {
			file := rapid.SampledFrom([]string{"builder.yaml", "builder-cluster.yaml", "go.mod"}).Draw(t, "file")
			switch rapid.IntRange(0, 2).Draw(t, "line") {
			case 0:
				pins[i] = pin{file, fmt.Sprintf("%sexporter/e%d", contribPrefix, i), contrib}
			case 1:
				pins[i] = pin{file, fmt.Sprintf("%sprocessor/p%d", corePrefix, i), core}
			default:
				pins[i] = pin{file, fmt.Sprintf("%sconfmap/c%d", corePrefix, i), stable}
			}
		}
		// Every line has at least three pins, so the others outvote a moved one
		// (the real files pin 5 to 30 modules per line).
		for j := range 3 {
			pins = append(pins,
				pin{"x", fmt.Sprintf("%sx%d", contribPrefix, j), contrib},
				pin{"x", fmt.Sprintf("%sx%d", corePrefix, j), core},
				pin{"x", fmt.Sprintf("%sy%d", corePrefix, j), stable})
		}
		if got := lockstepProblems(pins); len(got) != 0 {
			t.Fatalf("one release reported: %q", got)
		}

		i := rapid.IntRange(0, len(pins)-1).Draw(t, "moved")
		old := pins[i].Version
		moved := old
		for moved == old {
			delta := rapid.IntRange(-5, 5).Draw(t, "delta")
			moved = fmt.Sprintf("%s.%d.0", semver.Major(old), minor+delta)
			if semver.Major(old) == "v1" {
				moved = fmt.Sprintf("v1.%d.0", minor-94+delta)
			}
		}
		pins[i].Version = moved
		got := lockstepProblems(pins)
		want := fmt.Sprintf("%s: %s %s", pins[i].File, pins[i].Module, moved)
		found := false
		for _, g := range got {
			found = found || strings.HasPrefix(g, want)
		}
		if !found {
			t.Fatalf("moving %s from %s to %s: want a problem starting %q, got %q", pins[i].Module, old, moved, want, got)
		}
	})
}

// componentList is the part of `otelcol components` these tests read.
type componentList struct {
	BuildInfo struct {
		Version string `yaml:"version"`
	} `yaml:"buildinfo"`
	Receivers  []struct{ Module string } `yaml:"receivers"`
	Processors []struct{ Module string } `yaml:"processors"`
	Exporters  []struct{ Module string } `yaml:"exporters"`
	Extensions []struct{ Module string } `yaml:"extensions"`
	Connectors []struct{ Module string } `yaml:"connectors"`
	Providers  []struct{ Module string } `yaml:"providers"`
}

// The collector binaries the integration tests run (TOOLGATE_OTELCOL,
// TOOLGATE_OTELCOL_CLUSTER) are built from the manifests as they are: every
// component module at the pinned version. A stale bin/ fails here.
func TestCollectorBinaryMatchesManifest(t *testing.T) {
	for _, tt := range []struct{ env, manifest string }{
		{"TOOLGATE_OTELCOL", "builder.yaml"},
		{"TOOLGATE_OTELCOL_CLUSTER", "builder-cluster.yaml"},
	} {
		t.Run(tt.manifest, func(t *testing.T) {
			bin := testenv.CollectorBinary(t, tt.env)
			m, pins := loadManifest(t, tt.manifest)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			out, err := exec.CommandContext(ctx, bin, "components").Output()
			require.NoError(t, err, "%s components", bin)
			var c componentList
			require.NoError(t, yaml.Unmarshal(out, &c))
			assert.Equal(t, m.Dist.Version, c.BuildInfo.Version, "%s was built from another %s", bin, tt.manifest)
			var built []string
			for _, list := range [][]struct{ Module string }{c.Receivers, c.Processors, c.Exporters, c.Extensions, c.Connectors, c.Providers} {
				for _, e := range list {
					built = append(built, e.Module)
				}
			}
			for _, p := range pins {
				assert.Contains(t, built, p.Module+" "+p.Version, "%s lacks %s at the pinned version", bin, p.Module)
			}
		})
	}
}

package otelcollector_test

import (
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/toolgate/toolgate/audit"
)

// compose.yaml cannot run here (no Docker): these tests check what can be
// checked without it.

type composeFile struct {
	Services map[string]struct {
		Image       string            `yaml:"image"`
		Command     []string          `yaml:"command"`
		Environment map[string]string `yaml:"environment"`
		Volumes     []string          `yaml:"volumes"`
		Ports       []string          `yaml:"ports"`
	} `yaml:"services"`
}

func loadCompose(t *testing.T) composeFile {
	t.Helper()
	b, err := os.ReadFile("compose.yaml")
	require.NoError(t, err)
	var c composeFile
	require.NoError(t, yaml.Unmarshal(b, &c))
	return c
}

// composeValue resolves compose's ${VAR:?msg} / ${VAR:-default} for a test.
var composeVar = regexp.MustCompile(`\$\{([A-Z_]+)(:[?-][^}]*)?\}`)

func composeValue(v string) string {
	return composeVar.ReplaceAllStringFunc(v, func(m string) string {
		sub := composeVar.FindStringSubmatch(m)
		if strings.HasPrefix(sub[2], ":-") {
			return sub[2][2:]
		}
		return "test-" + strings.ToLower(sub[1])
	})
}

func TestComposeMountsExistAndPortsAreLoopback(t *testing.T) {
	c := loadCompose(t)
	for _, name := range []string{"clickhouse", "migrate", "jaeger", "otel-collector", "grafana"} {
		require.Contains(t, c.Services, name)
	}
	for name, s := range c.Services {
		assert.NotEmpty(t, s.Image, name)
		for _, v := range s.Volumes {
			src := strings.SplitN(v, ":", 2)[0]
			if strings.HasPrefix(src, ".") {
				_, err := os.Stat(src)
				assert.NoErrorf(t, err, "service %s mounts %s", name, src)
			}
		}
		for _, p := range s.Ports {
			assert.Truef(t, strings.HasPrefix(p, "127.0.0.1:"), "service %s publishes %s beyond loopback", name, p)
		}
	}
	assert.Equal(t, "otel/opentelemetry-collector-contrib:0.161.0", c.Services["otel-collector"].Image,
		"the contrib image must be the release our build uses")

	// Production settings: a required token, an absolute queue directory on
	// a volume, and the writer's password.
	col := c.Services["otel-collector"]
	assert.Contains(t, col.Environment["TOOLGATE_OTLP_TOKEN"], ":?", "the token is required")
	assert.Contains(t, col.Environment, "TOOLGATE_CLICKHOUSE_PASSWORD")
	queue := col.Environment["TOOLGATE_OTELCOL_QUEUE_DIR"]
	assert.True(t, filepath.IsAbs(queue), queue)
	onVolume := false
	for _, v := range col.Volumes {
		parts := strings.Split(v, ":")
		if !strings.HasPrefix(parts[0], ".") && strings.HasPrefix(queue, parts[1]+"/") {
			onVolume = true
		}
	}
	assert.True(t, onVolume, "the queue directory %s is on a named volume", queue)
	env, err := os.ReadFile("env.example")
	require.NoError(t, err)
	for _, k := range []string{"TOOLGATE_OTLP_TOKEN", "TOOLGATE_CLICKHOUSE_WRITER_PASSWORD", "TOOLGATE_CLICKHOUSE_READER_PASSWORD"} {
		assert.Contains(t, string(env), "\n"+k+"=", "env.example lists %s", k)
	}
}

// The collector and Jaeger configs validate with the environment compose gives them.
func TestComposeConfigsValidate(t *testing.T) {
	c := loadCompose(t)
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	for _, tc := range []struct{ service, bin, env string }{
		{"otel-collector", "otelcol-toolgate", "TOOLGATE_OTELCOL"},
		{"jaeger", "jaeger", "TOOLGATE_JAEGER"},
	} {
		t.Run(tc.service, func(t *testing.T) {
			bin := os.Getenv(tc.env)
			if bin == "" {
				bin = filepath.Join(root, "bin", tc.bin)
			}
			if _, err := os.Stat(bin); err != nil {
				if os.Getenv("TOOLGATE_INTEGRATION") == "1" {
					t.Fatalf("%s missing: %v", bin, err)
				}
				t.Skipf("%s missing", bin)
			}
			s := c.Services[tc.service]
			args := []string{"validate"}
			for i := 0; i < len(s.Command); i++ {
				if s.Command[i] == "--config" {
					// /etc/toolgate/X is ./X here.
					args = append(args, "--config", filepath.Base(s.Command[i+1]))
					i++
				}
			}
			require.Len(t, args, 3, "one --config in %v", s.Command)
			cmd := exec.Command(bin, args...)
			cmd.Env = os.Environ()
			for k, v := range s.Environment {
				cmd.Env = append(cmd.Env, k+"="+composeValue(v))
			}
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "%s", out)
		})
	}
}

func TestClickHouseUsersXML(t *testing.T) {
	b, err := os.ReadFile("clickhouse/users.d/toolgate.xml")
	require.NoError(t, err)
	var doc struct {
		Users struct {
			Writer struct {
				Password struct {
					FromEnv string `xml:"from_env,attr"`
				} `xml:"password"`
				Grants []string `xml:"grants>query"`
			} `xml:"writer"`
			Reader struct {
				Password struct {
					FromEnv string `xml:"from_env,attr"`
				} `xml:"password"`
				Profile string   `xml:"profile"`
				Grants  []string `xml:"grants>query"`
			} `xml:"reader"`
			Migrator struct {
				Password struct {
					FromEnv string `xml:"from_env,attr"`
				} `xml:"password"`
				Grants []string `xml:"grants>query"`
			} `xml:"migrator"`
		} `xml:"users"`
		Profiles struct {
			Reader struct {
				Readonly int `xml:"readonly"`
			} `xml:"toolgate_reader"`
		} `xml:"profiles"`
	}
	require.NoError(t, xml.Unmarshal(b, &doc))
	env := loadCompose(t).Services["clickhouse"].Environment
	assert.Contains(t, env, doc.Users.Writer.Password.FromEnv)
	assert.Contains(t, env, doc.Users.Reader.Password.FromEnv)
	assert.Equal(t, "toolgate_reader", doc.Users.Reader.Profile)
	assert.Equal(t, 1, doc.Profiles.Reader.Readonly)
	for _, g := range doc.Users.Reader.Grants {
		assert.NotRegexp(t, `INSERT|CREATE|ALTER|DROP`, g, "reader grant")
	}
	for _, g := range append(doc.Users.Writer.Grants, doc.Users.Reader.Grants...) {
		assert.NotRegexp(t, `ALTER|DROP|TRUNCATE|ALL`, g, "no destructive grant")
	}
	// The collector's writer cannot change the schema (it could stop the
	// view that fills gate_decisions); only the migrator can.
	for _, g := range doc.Users.Writer.Grants {
		assert.NotRegexp(t, `CREATE|ALTER|DROP|TRUNCATE|ALL`, g, "writer grant")
	}
	assert.Contains(t, env, doc.Users.Migrator.Password.FromEnv)
	migrate := loadCompose(t).Services["migrate"].Environment
	assert.Contains(t, migrate["AUDITQ_DSN"], "http://migrator:", "compose's migrate service runs as the migrator")
	// Every statement kind of every migration is granted to the migrator,
	// and nothing destructive is.
	granted := strings.Join(doc.Users.Migrator.Grants, "\n")
	for _, g := range doc.Users.Migrator.Grants {
		assert.NotRegexp(t, `DROP|TRUNCATE|ALL|DELETE|UPDATE`, g, "migrator grant")
	}
	steps, err := audit.Migrations()
	require.NoError(t, err)
	needs := []struct{ stmt, grant string }{
		{`(?i)CREATE DATABASE`, "CREATE DATABASE"},
		{`(?i)CREATE TABLE`, "CREATE TABLE"},
		{`(?i)CREATE MATERIALIZED VIEW`, "CREATE VIEW"},
		{`(?i)\bADD COLUMN\b`, "ALTER ADD COLUMN"},
		{`(?i)\bMODIFY COLUMN\b`, "ALTER MODIFY COLUMN"},
		{`(?i)\bMODIFY QUERY\b`, "ALTER VIEW MODIFY QUERY"},
		{`(?i)\bINSERT INTO\b`, "INSERT"},
		{`(?i)\bDROP\b|\bDELETE\b|\bUPDATE\b|\bTRUNCATE\b|\bRENAME\b|\bEXCHANGE\b`, "(a destructive statement: give migrations a grant review)"},
	}
	for _, m := range steps {
		for _, stmt := range m.Statements {
			for _, n := range needs {
				if regexp.MustCompile(n.stmt).MatchString(stmt) {
					assert.Contains(t, granted, n.grant, "migration %d needs %q:\n%s", m.Version, n.grant, stmt)
				}
			}
		}
	}
}

func TestGrafanaProvisioning(t *testing.T) {
	var ds struct {
		Datasources []struct {
			Type     string         `yaml:"type"`
			UID      string         `yaml:"uid"`
			JSONData map[string]any `yaml:"jsonData"`
		} `yaml:"datasources"`
	}
	b, err := os.ReadFile("grafana/provisioning/datasources/clickhouse.yaml")
	require.NoError(t, err)
	require.NoError(t, yaml.Unmarshal(b, &ds))
	require.Len(t, ds.Datasources, 1)
	assert.Equal(t, "grafana-clickhouse-datasource", ds.Datasources[0].Type)
	assert.Equal(t, "reader", ds.Datasources[0].JSONData["username"])

	var dash struct {
		Providers []struct {
			Options struct {
				Path string `yaml:"path"`
			} `yaml:"options"`
		} `yaml:"providers"`
	}
	b, err = os.ReadFile("grafana/provisioning/dashboards/toolgate.yaml")
	require.NoError(t, err)
	require.NoError(t, yaml.Unmarshal(b, &dash))
	require.Len(t, dash.Providers, 1)
	mounted := false
	for _, v := range loadCompose(t).Services["grafana"].Volumes {
		parts := strings.Split(v, ":")
		if parts[0] == "./grafana/dashboards" && parts[1] == dash.Providers[0].Options.Path {
			mounted = true
		}
	}
	assert.True(t, mounted, "the dashboards directory is mounted where the provider reads")
	_, err = os.Stat("grafana/dashboards/gate-decisions.json")
	require.NoError(t, err)
}

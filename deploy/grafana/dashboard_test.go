package grafana_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/cog/plugins"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolgate/toolgate/deploy/grafana"
)

const provisioned = "../otel-collector/grafana/dashboards/gate-decisions.json"

// The provisioned JSON is exactly what the Go builder generates (run
// `go generate ./deploy/grafana` after changing the dashboard).
func TestProvisionedJSONIsGenerated(t *testing.T) {
	want, err := grafana.JSON()
	require.NoError(t, err)
	got, err := os.ReadFile(provisioned)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got), "stale %s: run go generate ./deploy/grafana", provisioned)
}

// The JSON round-trips through the SDK's own types, with our query variant.
func TestDashboardRoundTrip(t *testing.T) {
	plugins.RegisterDefaultPlugins()
	cog.NewRuntime().RegisterDataqueryVariant(grafana.QueryVariantConfig())
	b, err := os.ReadFile(provisioned)
	require.NoError(t, err)
	var d dashboard.Dashboard
	require.NoError(t, json.Unmarshal(b, &d))
	require.NotNil(t, d.Uid)
	assert.Equal(t, grafana.UID, *d.Uid)
	qs := grafana.PanelQueries(d)
	titles := map[string]bool{}
	for _, q := range qs {
		titles[q.Title] = true
		assert.Contains(t, q.SQL, "gate_decisions FINAL", q.Title)
		assert.Contains(t, q.SQL, "$__timeFilter(Timestamp)", q.Title)
	}
	for _, want := range []string{"Decisions", "Denied", "Deny rate", "Agents", "Decisions over time by action",
		"Top deny reasons", "Decisions by tool and agent", "Denied calls", "variable agent", "variable tool"} {
		assert.True(t, titles[want], "panel %q", want)
	}
	assert.Contains(t, string(b), "${jaeger_url}/trace/${__value.raw}", "trace link per denied call")
}

func TestGateDecisionsRejectsBadDatabase(t *testing.T) {
	_, err := grafana.GateDecisions(grafana.WithDatabase("otel; DROP TABLE x"))
	require.Error(t, err)
	d, err := grafana.GateDecisions(grafana.WithDatabase("audit2"))
	require.NoError(t, err)
	for _, q := range grafana.PanelQueries(d) {
		assert.Contains(t, q.SQL, "audit2.gate_decisions", q.Title)
	}
}

func TestExpandMacros(t *testing.T) {
	env := grafana.MacroEnv{
		From:     time.Unix(1415792726, 0),
		To:       time.Unix(1447328726, 0),
		Interval: 30 * time.Second,
		Vars:     map[string][]string{"agent": {"a", "o'b"}, "tool": {grafana.AllValue}},
	}
	tests := []struct {
		in, want string
		wantErr  bool
	}{
		{"WHERE $__timeFilter(time)", "WHERE time >= toDateTime(1415792726) AND time <= toDateTime(1447328726)", false},
		{"$__timeFilter_ms(t)", "t >= fromUnixTimestamp64Milli(1415792726000) AND t <= fromUnixTimestamp64Milli(1447328726000)", false},
		{"$__dateFilter(d)", "d >= toDate('2014-11-12') AND d <= toDate('2015-11-12')", false},
		{"SELECT $__timeInterval(ts) AS time", "SELECT toStartOfInterval(toDateTime(ts), INTERVAL 30 second) AS time", false},
		{"$__interval_s", "30", false},
		{"$__fromTime AND $__toTime", "toDateTime(1415792726) AND toDateTime(1447328726)", false},
		{"$__conditionalAll(Agent IN (${agent:singlequote}), $agent)", `Agent IN ('a','o\'b')`, false},
		{"$__conditionalAll(ToolName IN (${tool:singlequote}), $tool)", "1=1", false},
		{"x = '${agent}'", "x = 'a,o'b'", false},
		{"$__nope(x)", "", true},
		{"$__timeFilter()", "", true},
		{"$__conditionalAll(x IN (1)", "", true},
		{"${tool:singlequote}", "", true}, // All outside $__conditionalAll
		{"${missing}", "", true},
	}
	for _, tt := range tests {
		got, err := grafana.ExpandMacros(tt.in, env)
		if tt.wantErr {
			assert.ErrorIs(t, err, grafana.ErrMacro, tt.in)
			continue
		}
		require.NoError(t, err, tt.in)
		assert.Equal(t, tt.want, got, tt.in)
	}
}

// Every panel's SQL expands completely: no macro or variable is left.
func TestPanelQueriesExpand(t *testing.T) {
	d, err := grafana.GateDecisions()
	require.NoError(t, err)
	for _, vars := range []map[string][]string{nil, {"agent": {"x"}, "tool": {"bash", "read"}}} {
		for _, q := range grafana.PanelQueries(d) {
			sql, err := grafana.ExpandMacros(q.SQL, grafana.MacroEnv{From: time.Now().Add(-time.Hour), To: time.Now(), Interval: time.Minute, Vars: vars})
			require.NoError(t, err, q.Title)
			assert.NotContains(t, sql, "$", q.Title)
			assert.False(t, strings.Contains(sql, "${"), q.Title)
		}
	}
}

// Package grafana builds toolgate's gate-decisions dashboard for Grafana
// with Grafana's typed Go SDK (github.com/grafana/grafana-foundation-sdk/go
// v0.0.22) over the ClickHouse data source plugin
// (grafana-clickhouse-datasource v4), reading the audit table
// gate_decisions (package audit). cmd/gen-dashboard writes it to
// deploy/otel-collector/grafana/dashboards/gate-decisions.json, which
// compose.yaml provisions.
//
// Every panel is a raw-SQL query; PanelQueries lists them and
// ExpandMacros expands their Grafana macros, so the e2e tests run each
// panel's SQL against the embedded ClickHouse filled with real decisions.
package grafana

//go:generate go run ./cmd/gen-dashboard -o ../otel-collector/grafana/dashboards/gate-decisions.json

import (
	"encoding/json"
	"fmt"

	"github.com/grafana/grafana-foundation-sdk/go/barchart"
	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/stat"
	"github.com/grafana/grafana-foundation-sdk/go/table"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"

	"github.com/toolgate/toolgate/audit"
)

// UID is the dashboard's fixed uid (stable URLs: /d/toolgate-gate-decisions).
const UID = "toolgate-gate-decisions"

type config struct {
	database  string
	jaegerURL string
}

// Option configures GateDecisions.
type Option func(*config)

// WithDatabase sets the ClickHouse database of gate_decisions (default
// audit.DefaultDatabase, "otel").
func WithDatabase(db string) Option { return func(c *config) { c.database = db } }

// WithJaegerURL sets the default of the jaeger_url variable, the base of the
// per-call trace links (default http://localhost:16686).
func WithJaegerURL(u string) Option { return func(c *config) { c.jaegerURL = u } }

// datasource is the panels' data source: the dashboard's datasource variable.
func datasource() common.DataSourceRef {
	t, uid := PluginID, "${datasource}"
	return common.DataSourceRef{Type: &t, Uid: &uid}
}

// GateDecisions builds the dashboard: stat panels (decisions, denied, deny
// rate), decisions over time by action, top deny reasons, decisions by tool
// and agent, the denied calls with a link to each call's trace in Jaeger,
// and the asks by approver and outcome with the time the answers took.
// Variables: datasource, agent and tool (multi-value, with All), jaeger_url.
func GateDecisions(opts ...Option) (dashboard.Dashboard, error) {
	c := config{database: audit.DefaultDatabase, jaegerURL: "http://localhost:16686"}
	for _, o := range opts {
		o(&c)
	}
	if !identifier(c.database) {
		return dashboard.Dashboard{}, fmt.Errorf("grafana: invalid database name %q", c.database)
	}
	q := queries(c.database)
	ds := datasource()
	dsType := PluginID

	b := dashboard.NewDashboardBuilder("toolgate: gate decisions").
		Uid(UID).
		Description("Every gate decision of toolgate's executor (ClickHouse gate_decisions): what was allowed and denied, why, by which agent and tool, with a link to each denied call's trace.").
		Tags([]string{"toolgate", "audit", "gen_ai"}).
		Time("now-6h", "now").
		Refresh("30s").
		Timezone("browser").
		Tooltip(dashboard.DashboardCursorSyncCrosshair).
		WithVariable(dashboard.NewDatasourceVariableBuilder("datasource").Label("ClickHouse").Type(dsType)).
		WithVariable(listVariable("agent", "Agent", q.agents, ds)).
		WithVariable(listVariable("tool", "Tool", q.tools, ds)).
		WithVariable(dashboard.NewTextBoxVariableBuilder("jaeger_url").Label("Jaeger URL").DefaultValue(dashboard.StringOrMap{String: &c.jaegerURL})).
		WithRow(dashboard.NewRowBuilder("Overview").Id(1)).
		WithPanel(stat.NewPanelBuilder().Id(2).Title("Decisions").Datasource(ds).Span(6).Height(4).
			WithTarget(NewQuery(ds, "A", q.total, FormatTable))).
		WithPanel(stat.NewPanelBuilder().Id(3).Title("Denied").Datasource(ds).Span(6).Height(4).
			WithTarget(NewQuery(ds, "A", q.denied, FormatTable))).
		WithPanel(stat.NewPanelBuilder().Id(4).Title("Deny rate").Datasource(ds).Span(6).Height(4).Unit("percentunit").
			WithTarget(NewQuery(ds, "A", q.denyRate, FormatTable))).
		WithPanel(stat.NewPanelBuilder().Id(5).Title("Agents").Datasource(ds).Span(6).Height(4).
			WithTarget(NewQuery(ds, "A", q.agentCount, FormatTable))).
		WithPanel(timeseries.NewPanelBuilder().Id(6).Title("Decisions over time by action").Datasource(ds).Span(24).Height(8).
			Unit("short").
			WithTarget(NewQuery(ds, "A", q.overTime, FormatTimeSeries))).
		WithPanel(barchart.NewPanelBuilder().Id(7).Title("Top deny reasons").Datasource(ds).Span(12).Height(9).
			XField("reason").Orientation(common.VizOrientationHorizontal).
			WithTarget(NewQuery(ds, "A", q.topReasons, FormatTable))).
		WithPanel(table.NewPanelBuilder().Id(8).Title("Decisions by tool and agent").Datasource(ds).Span(12).Height(9).
			WithTarget(NewQuery(ds, "A", q.byToolAgent, FormatTable))).
		WithPanel(table.NewPanelBuilder().Id(9).Title("Denied calls").Datasource(ds).Span(24).Height(10).
			Description("Newest first. The trace_id column links to the call's trace in Jaeger ($jaeger_url).").
			OverrideByName("trace_id", []dashboard.DynamicConfigValue{{Id: "links", Value: []map[string]any{{
				"title":       "Open the trace in Jaeger",
				"url":         "${jaeger_url}/trace/${__value.raw}",
				"targetBlank": true,
			}}}}).
			WithTarget(NewQuery(ds, "A", q.denied200, FormatTable))).
		WithPanel(table.NewPanelBuilder().Id(10).Title("Approvals by approver").Datasource(ds).Span(24).Height(8).
			Description("Who let what through: the asks by who answered (gate.approver) and how (approved, declined, timeout, invalid, pending), with the time from ask to answer (gate.approval.wait_ms) over the asks that recorded one.").
			WithTarget(NewQuery(ds, "A", q.byApprover, FormatTable)))
	return b.Build()
}

// JSON returns the dashboard as indented JSON, ready for provisioning.
func JSON(opts ...Option) ([]byte, error) {
	d, err := GateDecisions(opts...)
	if err != nil {
		return nil, err
	}
	out, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("grafana: marshal dashboard: %w", err)
	}
	return append(out, '\n'), nil
}

func listVariable(name, label, sql string, ds common.DataSourceRef) *dashboard.QueryVariableBuilder {
	return dashboard.NewQueryVariableBuilder(name).Label(label).
		Datasource(ds).
		Query(dashboard.StringOrMap{String: &sql}).
		Definition(sql).
		Refresh(dashboard.VariableRefreshOnTimeRangeChanged).
		Sort(dashboard.VariableSortAlphabeticalAsc).
		Multi(true).IncludeAll(true)
}

// PanelQuery is one panel's (or variable's) SQL.
type PanelQuery struct {
	Title string
	SQL   string
}

// PanelQueries returns the SQL of every panel target of d (queries of type
// Query) and of its query variables, in dashboard order.
func PanelQueries(d dashboard.Dashboard) []PanelQuery {
	var out []PanelQuery
	for _, v := range d.Templating.List {
		if v.Type == "query" && v.Query != nil && v.Query.String != nil {
			out = append(out, PanelQuery{Title: "variable " + v.Name, SQL: *v.Query.String})
		}
	}
	for _, p := range d.Panels {
		if p.Panel == nil {
			continue
		}
		title := ""
		if p.Panel.Title != nil {
			title = *p.Panel.Title
		}
		for _, t := range p.Panel.Targets {
			if q, ok := t.(Query); ok {
				out = append(out, PanelQuery{Title: title, SQL: q.RawSQL})
			}
		}
	}
	return out
}

var _ cog.Builder[dashboard.Dashboard] = (*dashboard.DashboardBuilder)(nil)

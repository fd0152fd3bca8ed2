package grafana

import (
	"encoding/json"
	"fmt"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/cog/variants"
	"github.com/grafana/grafana-foundation-sdk/go/common"
)

// PluginID is the Grafana ClickHouse data source plugin
// (grafana/clickhouse-datasource, v4).
const PluginID = "grafana-clickhouse-datasource"

// Format is the ClickHouse plugin's result format (its Format enum).
type Format int

// Result formats of the ClickHouse plugin.
const (
	FormatTimeSeries Format = 0
	FormatTable      Format = 1
)

// Query is a raw-SQL target of the ClickHouse data source plugin, as the
// plugin stores it in a dashboard: {"editorType":"sql","rawSql":...}. The SDK
// has no type for this third-party plugin, so it is defined here as a
// dataquery variant (the SDK's documented extension point).
type Query struct {
	RefID      string               `json:"refId"`
	Datasource common.DataSourceRef `json:"datasource"`
	EditorType string               `json:"editorType"`
	QueryType  string               `json:"queryType"`
	Format     Format               `json:"format"`
	RawSQL     string               `json:"rawSql"`
}

// ImplementsDataqueryVariant marks Query as a dashboard target.
func (Query) ImplementsDataqueryVariant() {}

// DataqueryType is the plugin ID.
func (Query) DataqueryType() string { return PluginID }

// Equals reports whether other is the same query.
func (q Query) Equals(other variants.Dataquery) bool {
	o, ok := other.(Query)
	return ok && o.RefID == q.RefID && o.RawSQL == q.RawSQL && o.Format == q.Format && o.QueryType == q.QueryType
}

// Validate rejects a query without SQL.
func (q Query) Validate() error {
	if q.RawSQL == "" {
		return fmt.Errorf("grafana: query %s has no SQL", q.RefID)
	}
	return nil
}

// QueryVariantConfig lets cog unmarshal dashboards holding Query targets
// (register with cog.NewRuntime().RegisterDataqueryVariant).
func QueryVariantConfig() variants.DataqueryConfig {
	return variants.DataqueryConfig{
		Identifier: PluginID,
		DataqueryUnmarshaler: func(raw []byte) (variants.Dataquery, error) {
			var q Query
			if err := json.Unmarshal(raw, &q); err != nil {
				return nil, err
			}
			return q, nil
		},
	}
}

// QueryBuilder builds a Query; it is a cog.Builder[variants.Dataquery].
type QueryBuilder struct{ q Query }

var _ cog.Builder[variants.Dataquery] = (*QueryBuilder)(nil)

// NewQuery starts a raw-SQL query on the data source ds.
func NewQuery(ds common.DataSourceRef, refID, sql string, format Format) *QueryBuilder {
	qt := "table"
	if format == FormatTimeSeries {
		qt = "timeseries"
	}
	return &QueryBuilder{q: Query{RefID: refID, Datasource: ds, EditorType: "sql", QueryType: qt, Format: format, RawSQL: sql}}
}

// Build returns the query.
func (b *QueryBuilder) Build() (variants.Dataquery, error) {
	if err := b.q.Validate(); err != nil {
		return nil, err
	}
	return b.q, nil
}

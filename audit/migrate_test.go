package audit_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/audit/audittest"
	"github.com/toolgate/toolgate/gate"
)

func TestMigrationsGeneratedSQL(t *testing.T) {
	tests := []struct {
		name    string
		opts    []audit.Option
		want    []string // substrings of the whole script
		notWant []string
	}{
		{
			name: "single server",
			want: []string{
				"CREATE TABLE IF NOT EXISTS `otel`.`otel_traces` (",
				"ENGINE = MergeTree()",
				"ENGINE = ReplacingMergeTree(Version)",
				"ORDER BY (toStartOfHour(Timestamp), Action, Agent, ToolName, Timestamp, SpanId)",
				"CREATE MATERIALIZED VIEW IF NOT EXISTS `otel`.`gate_decisions_mv` TO `otel`.`gate_decisions`",
				"INSERT INTO `otel`.`gate_decisions` (",
			},
			notWant: []string{"ON CLUSTER", "Replicated", "TTL"},
		},
		{
			name: "cluster",
			opts: []audit.Option{audit.WithCluster("audit_cluster")},
			want: []string{
				"CREATE TABLE IF NOT EXISTS `otel`.`otel_traces` ON CLUSTER `audit_cluster` (",
				"ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/{database}/{table}', '{replica}')",
				"CREATE TABLE IF NOT EXISTS `otel`.`gate_decisions` ON CLUSTER `audit_cluster` (",
				"ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/{database}/{table}', '{replica}', Version)",
				"CREATE MATERIALIZED VIEW IF NOT EXISTS `otel`.`gate_decisions_mv` ON CLUSTER `audit_cluster` TO",
			},
			notWant: []string{"ENGINE = MergeTree()", "ENGINE = ReplacingMergeTree("},
		},
		{
			name: "database, traces table and retention",
			opts: []audit.Option{audit.WithDatabase("audit"), audit.WithTracesTable("spans"), audit.WithRetention(90 * 24 * time.Hour)},
			want: []string{
				"CREATE TABLE IF NOT EXISTS `audit`.`spans` (",
				"FROM `audit`.`spans`",
				"TTL toDateTime(Timestamp) + toIntervalDay(90)",
			},
			notWant: []string{"`otel`"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ms, err := audit.Migrations(tc.opts...)
			require.NoError(t, err)
			require.Len(t, ms, 3)
			var all strings.Builder
			for i, m := range ms {
				assert.Equal(t, i+1, m.Version)
				assert.Len(t, m.Checksum(), 64)
				for _, s := range m.Statements {
					all.WriteString(s + ";\n")
				}
			}
			for _, w := range tc.want {
				assert.Contains(t, all.String(), w)
			}
			for _, w := range tc.notWant {
				assert.NotContains(t, all.String(), w)
			}
			// Every DDL statement carries the cluster clause when a cluster is set.
			for _, m := range ms {
				for _, s := range m.Statements {
					if strings.HasPrefix(s, "CREATE") {
						assert.Equal(t, strings.Contains(all.String(), "ON CLUSTER"), strings.Contains(s, "ON CLUSTER"), s)
					}
				}
			}
		})
	}
}

func TestMigrationsUseAttributeConstants(t *testing.T) {
	ms, err := audit.Migrations()
	require.NoError(t, err)
	view := ms[2].Statements[0]
	for _, k := range []string{
		string(gate.AttrAction), string(gate.AttrReason), string(gate.AttrSource), string(gate.AttrRiskLevel),
		string(gate.AttrApproval), string(gate.AttrApprover), string(gate.AttrError), string(gate.AttrGated),
		string(gate.AttrOptOut), string(gate.AttrDuration), string(gate.AttrRunID), string(gate.AttrTaskID),
		string(semconv.GenAIToolNameKey), string(semconv.GenAIToolCallIDKey), string(semconv.GenAIAgentNameKey),
		string(semconv.ErrorTypeKey), string(semconv.GenAIToolCallArgumentsKey),
	} {
		assert.Contains(t, view, "SpanAttributes['"+k+"']", k)
	}
}

func TestMigrationsRejectBadNames(t *testing.T) {
	for _, opt := range []audit.Option{
		audit.WithDatabase("otel; DROP TABLE x"), audit.WithTracesTable("a.b"), audit.WithCluster("c`"),
		audit.WithDatabase(""), audit.WithRetention(-time.Hour),
	} {
		_, err := audit.Migrations(opt)
		assert.Error(t, err)
	}
}

func TestMigrateIdempotentAndStatus(t *testing.T) {
	env := audittest.Start(t) // applies every migration once
	ctx := context.Background()
	res, err := audit.Migrate(ctx, env.Writer)
	require.NoError(t, err)
	assert.Empty(t, res.Applied, "second run applies nothing")
	assert.Equal(t, 3, res.Current)
	st, err := audit.Status(ctx, env.Writer)
	require.NoError(t, err)
	for _, s := range st {
		assert.True(t, s.Applied, s.Name)
		assert.False(t, s.Changed, s.Name)
	}
	// The read-only user cannot change the schema.
	_, err = env.Store.Migrate(ctx)
	require.Error(t, err)
}

func TestMigrateBackfillsSpansWrittenBeforeTheView(t *testing.T) {
	env := audittest.Start(t)
	ctx := context.Background()
	// A second database where the exporter got there first: otel_traces
	// exists and holds decisions before any migration ran.
	opts := []audit.Option{audit.WithDatabase("early")}
	ms, err := audit.Migrations(opts...)
	require.NoError(t, err)
	require.NoError(t, env.Writer.Exec(ctx, "CREATE DATABASE early"))
	for _, s := range ms[0].Statements {
		require.NoError(t, env.Writer.Exec(ctx, s))
	}
	require.NoError(t, audittest.InsertSpans(ctx, env.Writer, "early", audittest.Fixture()))
	res, err := audit.Migrate(ctx, env.Writer, opts...)
	require.NoError(t, err)
	// Step 1 finds the exporter's table and leaves it (and its rows) alone.
	assert.Equal(t, []int{1, 2, 3}, res.Applied)
	st, err := audit.Open(ctx, env.CH.ReaderDSN, opts...)
	require.NoError(t, err)
	defer st.Close()
	s, err := st.Stats(ctx, audit.StatsQuery{})
	require.NoError(t, err)
	assert.EqualValues(t, audittest.FixtureDecisions, s.Total)
	assert.EqualValues(t, audittest.FixtureDenied, s.TotalDenied)
}

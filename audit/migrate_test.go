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
				"ALTER TABLE `otel`.`gate_decisions`\n    ADD COLUMN IF NOT EXISTS Rewritten Bool,",
				"ADD COLUMN IF NOT EXISTS Verdicts Array(String) CODEC(ZSTD(1))",
				"ADD COLUMN IF NOT EXISTS VerdictGates Array(LowCardinality(String)) DEFAULT arrayMap(",
				"ALTER TABLE `otel`.`gate_decisions_mv` MODIFY QUERY\nSELECT",
				") AS repaired USING (SpanId)",
				"ADD COLUMN IF NOT EXISTS Stage LowCardinality(String) DEFAULT 'gate' CODEC(ZSTD(1))",
				"MODIFY COLUMN VerdictGates DEFAULT arrayMap(",
				"if(SpanAttributes['gate.stage'] = '', 'gate', SpanAttributes['gate.stage']) AS Stage",
				"AND (SpanAttributes['gate.stage'] NOT IN ('', 'gate'))",
				"ADD COLUMN IF NOT EXISTS Rule LowCardinality(String) CODEC(ZSTD(1))",
				"SpanAttributes['gate.rule'] AS Rule\nFROM",
				"AND (mapContains(SpanAttributes, 'gate.rule'))",
				"ADD COLUMN IF NOT EXISTS ApprovalId String CODEC(ZSTD(1)),\n    ADD COLUMN IF NOT EXISTS ApprovalWaitMs UInt64 CODEC(ZSTD(1))",
				"SpanAttributes['gate.approval.id'] AS ApprovalId,\n    toUInt64OrZero(SpanAttributes['gate.approval.wait_ms']) AS ApprovalWaitMs\nFROM",
				"AND (mapContains(SpanAttributes, 'gate.approval.id') OR mapContains(SpanAttributes, 'gate.approval.wait_ms'))",
				"ADD INDEX IF NOT EXISTS idx_approval_id ApprovalId TYPE bloom_filter(0.01) GRANULARITY 1",
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
				"ALTER TABLE `otel`.`gate_decisions` ON CLUSTER `audit_cluster`\n    ADD COLUMN IF NOT EXISTS",
				"ALTER TABLE `otel`.`gate_decisions_mv` ON CLUSTER `audit_cluster` MODIFY QUERY",
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
			require.Len(t, ms, 12)
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
					if strings.HasPrefix(s, "CREATE") || strings.HasPrefix(s, "ALTER") {
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
	require.Len(t, ms, 12)
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
	// The last version that changes the view (the roll-ups' and arrivals'
	// versions from 10 on do not) reads every field of the decision record.
	var modify string
	for _, m := range ms {
		for _, s := range m.Statements {
			if strings.Contains(s, "`gate_decisions_mv` MODIFY QUERY") {
				modify = s
			}
		}
	}
	require.True(t, strings.HasPrefix(modify, "ALTER TABLE `otel`.`gate_decisions_mv` MODIFY QUERY"), modify)
	lines := map[string]string{} // column → its line of the SELECT
	for _, l := range strings.Split(modify, "\n") {
		if i := strings.LastIndex(l, " AS "); i > 0 {
			lines[strings.TrimSuffix(l[i+4:], ",")] = l
		}
	}
	for _, f := range gate.Fields() {
		assert.Contains(t, lines[f.Name], "SpanAttributes['"+string(f.Key)+"']", f.Key)
	}
}

// A released migration's SQL never changes: databases record its checksum
// (auditq migrate --status shows "applied (with different SQL)" otherwise).
// Versions 1–3 are the checksums of the first release, version 4 of the
// verdict columns', version 5 of gate.stage's, version 6 of gate.rule's, version 7 of gate.calls', version 8 of gate.chain.*' (version 9 is new with gate.approval.id and gate.approval.wait_ms); a change to a column of gate.Fields() that an
// earlier migration created fails here. A schema change is a new migration.
func TestMigrationChecksumsAreFrozen(t *testing.T) {
	tests := []struct {
		name string
		opts []audit.Option
		want []string
	}{
		{"default", nil, []string{
			"6e741041582de4b794169080605541e87c4b4e4f415b40e438da86c85a39e71a",
			"65b3582c89a4bf9c940c48a30c7bee516e9550d4abfb16bbcdec9b00531d42ea",
			"a5e5ad79cd35f9082b9de22ad92bc042d92529d742a6636f0da370d9986b939d",
			"f680a989a413d2114292879f794bef4ef3499a03f7621f5e64117e0a7758db6d",
			"2aa419473307f4a2a7b09122ec8cb2ddc0597313b5e2655915617d67ea18ad25",
			"7d36296989a88d7f59656f014b913bd40ce471645a5486dfb17e2863e4577f39",
			"0534b3b766b535bd050a37ba9819cbcd4f2ecbba9d2b9946054e8b9906e1b654",
			"b03c1a0c8cfaf67802d2c2faec4afbc8adb2eec9219435e48e4524890bb9bbf0",
			"7aa0b9db3f0a7dfd0a8635c862fc3ace65fcf2de6205e02981634b433e49f933",
			"e59076cce218fcbf98bb7be9ab06e669e519d39009a1b98465fdd4f986ef1e18",
			"68c4f8e786d514dfdf3cfd00f9c34bb2a76da79ebbff3cb81213515c6e2b7506",
			"1a1532350a781e931386a99c0ada5803b5f9da50ca54669efbf85f4323c0c5f5",
		}},
		{"cluster and retention", []audit.Option{audit.WithCluster("audit"), audit.WithRetention(365 * 24 * time.Hour)}, []string{
			"b32e2bc80f1d1de70895e626115cde86c56c7ddfe476e4cad68341ef31ffd22e",
			"09b89663f972b5b94a5816e1c55fae3b00d5cbe4ee13d6a180de9532a313cbe4",
			"0c33160ee0a28aebb77c80754cf08de4d9dc6da4b440ee95bbb1f0db3735c8f5",
			"170927fc785735f20bec838a98949d334171c2b48dc59391c53debd5ca74f3d7",
			"5f28acc0784e297476122827a7e1cda7f4f7cd0098488f4a728dda5d0d36490d",
			"11d91f87f5f07722b90bd83d3be32c30febde0e6b1bc482c695cd334cfeafb28",
			"81c79e05b297f52a693faff62d129a29db5b76e69e14729f345e2e5b999a0751",
			"ae3d6acfcc3523d310ebeb3d2acbe31b8c930ec297bee1c406b0a00845cb8ab7",
			"625639f591166d8e94964edb7bede87e7273679b53e00ac86385e0f869110192",
			"bed67dd4a6d4c02b9d474b5247a794ebdb97fc73d2f5b5b49938b57f09bee99b",
			"aee47f1299d0589ad57d09a96d2fac2172e5a03860bf1ab67817594be3ef1951",
			"ecdd599d9c21b0a7a47b70c15381f848dd98cd57a6c25edc9a36a9a161111eec",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ms, err := audit.Migrations(tc.opts...)
			require.NoError(t, err)
			var got []string
			for _, m := range ms {
				got = append(got, m.Checksum())
			}
			assert.Equal(t, tc.want, got)
		})
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
	ms, err := audit.Migrations()
	require.NoError(t, err)
	assert.Equal(t, len(ms), res.Current)
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
	assert.Equal(t, []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, res.Applied)
	st, err := audit.Open(ctx, env.ReaderDSN, opts...)
	require.NoError(t, err)
	defer st.Close()
	s, err := st.Stats(ctx, audit.StatsQuery{})
	require.NoError(t, err)
	assert.EqualValues(t, audittest.FixtureDecisions, s.Total)
	assert.EqualValues(t, audittest.FixtureDenied, s.TotalDenied)
	// Step 3's backfill copied the spans with version 3's columns; step 4
	// repaired the ones that carry the newer attributes.
	page, err := st.Decisions(ctx, audit.Filter{TraceID: audittest.TraceOps, Tool: "bash"}, audit.Page{})
	require.NoError(t, err)
	require.Len(t, page.Decisions, 1)
	d := page.Decisions[0]
	assert.True(t, d.Rewritten)
	assert.EqualValues(t, 2, d.Rounds)
	assert.Len(t, d.Verdicts, 4)
}

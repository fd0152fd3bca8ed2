package exportertest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/open-telemetry/opentelemetry-collector-contrib/exporter/clickhouseexporter"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/audit/audittest"
	"github.com/toolgate/toolgate/gate"
	"github.com/toolgate/toolgate/internal/testenv"
)

// newExporter starts the contrib clickhouse exporter against ch, writing
// into database with create_schema: true. The queue and retries are off so
// that ConsumeTraces returns only once the insert is done (or failed).
func newExporter(t *testing.T, ch *testenv.ClickHouse, database, compress string) exporter.Traces {
	t.Helper()
	f := clickhouseexporter.NewFactory()
	cfg := f.CreateDefaultConfig().(*clickhouseexporter.Config)
	cfg.Endpoint = ch.URL
	cfg.Username = ch.Writer.Name
	cfg.Password = configopaque.String(ch.Writer.Password)
	cfg.Database = database
	cfg.CreateSchema = true
	cfg.Compress = compress
	cfg.QueueSettings = configoptional.None[exporterhelper.QueueBatchConfig]()
	cfg.BackOffConfig.Enabled = false
	cfg.TimeoutSettings.Timeout = 30 * time.Second
	require.NoError(t, cfg.Validate())
	exp, err := f.CreateTraces(context.Background(), exportertest.NewNopSettings(f.Type()), cfg)
	require.NoError(t, err)
	require.NoError(t, exp.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { assert.NoError(t, exp.Shutdown(context.Background())) })
	return exp
}

// toolCall is one execute_tool span of a run.
type toolCall struct {
	span   [8]byte
	tool   string
	action gate.Action
	reason string
	risk   gate.RiskLevel
	// record, when set, adds its attributes as the executor encodes them
	// (gate.Record.Attributes), replacing the gate attributes above.
	record *gate.Record
}

// putAttrs puts OTel attributes into a pdata map with their types, as the
// OTLP receiver does with what the SDK sends (string slices as slices).
func putAttrs(m pcommon.Map, kvs []attribute.KeyValue) {
	for _, kv := range kvs {
		k := string(kv.Key)
		switch kv.Value.Type() {
		case attribute.BOOL:
			m.PutBool(k, kv.Value.AsBool())
		case attribute.INT64:
			m.PutInt(k, kv.Value.AsInt64())
		case attribute.FLOAT64:
			m.PutDouble(k, kv.Value.AsFloat64())
		case attribute.STRINGSLICE:
			sl := m.PutEmptySlice(k)
			for _, v := range kv.Value.AsStringSlice() {
				sl.AppendEmpty().SetStr(v)
			}
		default:
			m.PutStr(k, kv.Value.Emit())
		}
	}
}

// agentRun builds one trace the way the executor records it: an
// invoke_agent span and its execute_tool children, with typed attributes
// (bool gate.gated, int gate.duration_ns) that the exporter stringifies.
func agentRun(trace [16]byte, root [8]byte, agent string, start time.Time, calls []toolCall) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "toolgate-exportertest")
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName("github.com/toolgate/toolgate/executor")
	sp := ss.Spans().AppendEmpty()
	sp.SetTraceID(pcommon.TraceID(trace))
	sp.SetSpanID(pcommon.SpanID(root))
	sp.SetName("invoke_agent " + agent)
	sp.SetKind(ptrace.SpanKindInternal)
	sp.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
	sp.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(time.Second)))
	sp.Attributes().PutStr(string(semconv.GenAIOperationNameKey), "invoke_agent")
	sp.Attributes().PutStr(string(semconv.GenAIAgentNameKey), agent)
	for i, c := range calls {
		s := ss.Spans().AppendEmpty()
		s.SetTraceID(pcommon.TraceID(trace))
		s.SetSpanID(pcommon.SpanID(c.span))
		s.SetParentSpanID(pcommon.SpanID(root))
		s.SetName("execute_tool " + c.tool)
		s.SetKind(ptrace.SpanKindInternal)
		at := start.Add(time.Duration(i+1) * 100 * time.Millisecond)
		s.SetStartTimestamp(pcommon.NewTimestampFromTime(at))
		s.SetEndTimestamp(pcommon.NewTimestampFromTime(at.Add(7 * time.Millisecond)))
		a := s.Attributes()
		a.PutStr(string(semconv.GenAIOperationNameKey), "execute_tool")
		a.PutStr(string(semconv.GenAIToolNameKey), c.tool)
		a.PutStr(string(semconv.GenAIToolCallIDKey), "call_"+c.tool)
		a.PutStr(string(semconv.GenAIAgentNameKey), agent)
		a.PutStr(string(gate.AttrRunID), "run-"+agent)
		a.PutBool(string(gate.AttrGated), true)
		a.PutStr(string(gate.AttrAction), string(c.action))
		a.PutInt(string(gate.AttrDuration), 1500)
		if c.reason != "" {
			a.PutStr(string(gate.AttrReason), c.reason)
		}
		if c.risk != "" {
			a.PutStr(string(gate.AttrRiskLevel), string(c.risk))
		}
		if c.record != nil {
			putAttrs(a, c.record.Attributes(nil, 0))
		}
		if c.action == gate.ActionDeny {
			a.PutStr(string(semconv.ErrorTypeKey), gate.ErrorTypeGateDenied)
			s.Status().SetCode(ptrace.StatusCodeError)
			s.Status().SetMessage(c.reason)
		}
	}
	return td
}

var (
	trace1 = [16]byte{0x0a, 0xf7, 0x65, 0x19, 0x16, 0xcd, 0x43, 0xdd, 0x84, 0x48, 0xeb, 0x21, 0x1c, 0x80, 0x31, 0x9c}
	trace2 = [16]byte{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36}
)

// rewrittenDeny is a decision with every field of the record: a rewrite
// judged again in a second round, then denied; a rule with the verdict
// separator, quotes, <&> and non-ASCII text.
var rewrittenDeny = gate.Record{
	Gated: true, Action: gate.ActionDeny, Reason: "rm -rf outside the workspace", Source: "classify.bash",
	Rule: "delete.root", Risk: gate.RiskHigh, Approval: gate.ApprovalInvalid, Approver: "channel", Rewritten: true, RewrittenBy: "sandbox",
	OriginalInputHash: "05239f897663e2de54bf775f59125ecc5644bc267fc47614a42b84b68c75ce2c", Rounds: 2, Duration: 1500,
	// Migration 9's approval columns (gate.approval.wait_ms an int
	// attribute, stored by the exporter as text).
	ApprovalID: `apr-"q" <&> é|1`, ApprovalWait: 2500 * time.Millisecond,
	Verdicts: []gate.Verdict{
		{Gate: "sandbox", Action: gate.ActionAllow, Rewrote: true, Rule: `strip|"pipe" <&> é`},
		{Gate: "classify.bash", Action: gate.ActionDeny, Risk: gate.RiskHigh, Rule: "delete.root"},
	},
}

// groupedRefusal is the executor's record of refused calls it grouped
// past a run's refusal budget: one span for 64 calls (gate.calls).
var groupedRefusal = gate.Record{
	Stage: gate.StageRun, Action: gate.ActionDeny, Source: gate.SourceExecutor, ErrorKind: "run_aborted",
	Reason: "the run was aborted: calls refused past its refusal budget, aggregated", Calls: 64,
	// Migration 8's chain columns, as the executor records them
	// (gate.chain.seq an int attribute, stored by the exporter as text).
	Chain: gate.Link{ID: "5f0c9a1e2d3b4c5d6e7f8091a2b3c4d5", Seq: 2, Prev: strings.Repeat("ab", 32), Hash: strings.Repeat("cd", 32)},
}

// rewrittenDenyVerdicts is gate.verdicts of rewrittenDeny as the exporter
// stores it in SpanAttributes: a JSON array, '|' in a rule replaced by
// gate.EncodeVerdicts, no HTML escaping, UTF-8 as is.
const rewrittenDenyVerdicts = `["sandbox|rewrite||strip/\"pipe\" <&> é","classify.bash|deny|high|delete.root"]`

func batches(start time.Time) (first, second ptrace.Traces) {
	first = agentRun(trace1, [8]byte{1, 1, 1, 1, 1, 1, 1, 1}, "coder", start, []toolCall{
		{span: [8]byte{1, 0, 0, 0, 0, 0, 0, 1}, tool: "bash", action: gate.ActionAllow, risk: gate.RiskSafe},
		{span: [8]byte{1, 0, 0, 0, 0, 0, 0, 2}, tool: "bash", action: gate.ActionDeny, reason: "rm -rf outside the workspace", risk: gate.RiskHigh,
			record: &rewrittenDeny},
		{span: [8]byte{1, 0, 0, 0, 0, 0, 0, 3}, tool: "nosuch", action: gate.ActionDeny, reason: groupedRefusal.Reason, record: &groupedRefusal},
	})
	second = agentRun(trace2, [8]byte{2, 2, 2, 2, 2, 2, 2, 2}, "reviewer", start.Add(time.Minute), []toolCall{
		{span: [8]byte{2, 0, 0, 0, 0, 0, 0, 1}, tool: "http_get", action: gate.ActionDeny, reason: "network egress blocked", risk: gate.RiskHigh},
		{span: [8]byte{2, 0, 0, 0, 0, 0, 0, 2}, tool: "read_file", action: gate.ActionAllow, risk: gate.RiskSafe},
		{span: [8]byte{2, 0, 0, 0, 0, 0, 0, 3}, tool: "grep", action: gate.ActionAllow},
	})
	return first, second
}

func TestExporterWritesDecisions(t *testing.T) {
	ch := testenv.StartClickHouse(t)
	ctx := context.Background()
	wopts, err := clickhouse.ParseDSN(ch.WriterDSN)
	require.NoError(t, err)
	writer, err := clickhouse.Open(wopts)
	require.NoError(t, err)
	defer writer.Close()
	start := time.Now().Add(-time.Hour).Truncate(time.Millisecond)

	tests := []struct {
		name     string
		database string
		compress string
		// migrateFirst runs the migrations before the exporter creates
		// its schema; otherwise the exporter's spans of the first batch
		// exist before the view and reach gate_decisions by the backfill.
		migrateFirst bool
	}{
		{name: "exporter first, backfill", database: "otel_exporter_first", compress: "lz4"},
		{name: "migrations first", database: "otel_migrations_first", compress: "zstd", migrateFirst: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			opts := []audit.Option{audit.WithDatabase(tc.database)}
			if tc.migrateFirst {
				_, err := audit.Migrate(ctx, writer, opts...)
				require.NoError(t, err)
			}
			exp := newExporter(t, ch, tc.database, tc.compress)
			first, second := batches(start)
			require.NoError(t, exp.ConsumeTraces(ctx, first))
			if !tc.migrateFirst {
				res, err := audit.Migrate(ctx, writer, opts...)
				require.NoError(t, err)
				steps, err := audit.Migrations(opts...)
				require.NoError(t, err)
				want := make([]int, len(steps)) // every step, in order
				for i, m := range steps {
					want[i] = m.Version
				}
				assert.Equal(t, want, res.Applied)
				assert.Len(t, want, 12, "a new migration: check the exporter still writes what it adds (10, the hourly roll-up, 11, the daily roll-ups built from it, and 12, the arrivals, read no new attribute)")
			}
			require.NoError(t, exp.ConsumeTraces(ctx, second))
			// The exporter retries a batch it believes failed: the same
			// spans arrive again.
			require.NoError(t, exp.ConsumeTraces(ctx, second))

			var spans uint64
			require.NoError(t, writer.QueryRow(ctx, "SELECT count() FROM `"+tc.database+"`.otel_traces").Scan(&spans))
			assert.EqualValues(t, 4+4+4, spans, "the exporter wrote every span, the re-sent batch twice")

			// Migration 12: the exporter's inserts (and, exporter first,
			// the backfills and repairs) reach the arrivals, every hour
			// with its newest InsertedAt.
			var missing uint64
			require.NoError(t, writer.QueryRow(ctx, "SELECT count() FROM (SELECT toStartOfHour(toDateTime(Timestamp, 'UTC')) AS Hour, max(InsertedAt) AS m FROM `"+tc.database+"`.gate_decisions GROUP BY Hour) AS d"+
				" LEFT JOIN (SELECT Hour, max(LastInsertedAt) AS a FROM `"+tc.database+"`.gate_decisions_arrivals GROUP BY Hour) AS x USING Hour WHERE x.a < d.m").Scan(&missing))
			assert.Zero(t, missing, "hours of gate_decisions whose newest arrival the arrivals miss")

			st, err := audit.Open(ctx, ch.ReaderDSN, opts...)
			require.NoError(t, err)
			defer st.Close()
			page, err := st.Decisions(ctx, audit.Filter{Since: start.Add(-time.Minute)}, audit.Page{})
			require.NoError(t, err)
			require.Len(t, page.Decisions, 6, "one decision per gated span, the re-sent ones once")
			byTool := map[string]audit.Decision{}
			for _, d := range page.Decisions {
				byTool[d.ToolName+"/"+d.Action] = d
			}
			g := byTool["nosuch/deny"]
			assert.Equal(t, groupedRefusal.Chain.ID, g.ChainID, "migration 8: gate.chain.id")
			assert.EqualValues(t, groupedRefusal.Chain.Seq, g.ChainSeq, "gate.chain.seq, an int attribute")
			assert.Equal(t, groupedRefusal.Chain.Prev, g.ChainPrev)
			assert.Equal(t, groupedRefusal.Chain.Hash, g.ChainHash)
			d := byTool["http_get/deny"]
			assert.Equal(t, "4bf92f3577b34da6a3ce929d0e0e4736", d.TraceID, "lowercase hex trace ID")
			assert.Equal(t, "0200000000000001", d.SpanID)
			assert.Equal(t, "0202020202020202", d.ParentSpanID)
			assert.Equal(t, "toolgate-exportertest", d.ServiceName)
			assert.Equal(t, "reviewer", d.Agent)
			assert.Equal(t, "run-reviewer", d.RunID)
			assert.Equal(t, "network egress blocked", d.Reason)
			assert.Equal(t, "high", d.RiskLevel)
			assert.True(t, d.Gated, "bool attribute stored as 'true'")
			assert.EqualValues(t, 1500, d.GateDuration, "int attribute stored as a decimal string")
			assert.EqualValues(t, 7*time.Millisecond, d.DurationNs)
			assert.True(t, d.IsError)
			assert.Equal(t, gate.ErrorTypeGateDenied, d.ErrorType)
			assert.True(t, d.Timestamp.Equal(start.Add(time.Minute+100*time.Millisecond)), d.Timestamp)
			assert.Equal(t, []string{"|deny|high|"}, d.Verdicts, "recorded without gate.verdicts (nor gate.source)")

			// The record's fields, through the exporter (and, exporter
			// first, through the backfill and version 4's repair).
			rd := byTool["bash/deny"]
			assert.Equal(t, []string{`sandbox|rewrite||strip/"pipe" <&> é`, "classify.bash|deny|high|delete.root"}, rd.Verdicts)
			assert.True(t, rd.Rewritten)
			assert.Equal(t, "sandbox", rd.RewrittenBy)
			assert.Equal(t, rewrittenDeny.OriginalInputHash, rd.OriginalInputHash)
			assert.EqualValues(t, 2, rd.Rounds)
			assert.Equal(t, "invalid", rd.Approval)
			assert.Equal(t, "delete.root", rd.Rule, "gate.rule (and, exporter first, version 6's repair)")
			assert.EqualValues(t, 1, rd.Calls)
			assert.Equal(t, rewrittenDeny.ApprovalID, rd.ApprovalID, "migration 9: gate.approval.id (and, exporter first, its repair)")
			assert.EqualValues(t, 2500, rd.ApprovalWaitMs, "gate.approval.wait_ms, an int attribute")
			gd := byTool["nosuch/deny"]
			assert.EqualValues(t, 64, gd.Calls, "gate.calls (and, exporter first, version 7's repair)")
			assert.Equal(t, "run", gd.Stage)
			s, err := st.Stats(ctx, audit.StatsQuery{By: []audit.Dimension{audit.ByRule}, Filter: audit.Filter{Agent: "coder", Action: "deny", Stage: "gate"}})
			require.NoError(t, err)
			// The denied bash call's ask took 2.5s to answer (migration 9).
			assert.Equal(t, []audit.StatsRow{{Keys: []string{"delete.root"}, Count: 1, Denied: 1, Waited: 1, WaitSumMs: 2500, WaitMaxMs: 2500}}, s.Rows,
				"the rule recorded, though the reason names none in brackets")
			s, err = st.Stats(ctx, audit.StatsQuery{By: []audit.Dimension{audit.ByGate}, Filter: audit.Filter{Agent: "coder"}})
			require.NoError(t, err)
			assert.Equal(t, []audit.StatsRow{
				{Keys: []string{""}, Count: 1}, // the allowed bash call: no verdicts, no source
				{Keys: []string{"classify.bash"}, Count: 1, Denied: 1, Waited: 1, WaitSumMs: 2500, WaitMaxMs: 2500},
				{Keys: []string{"sandbox"}, Count: 1, Denied: 1, Waited: 1, WaitSumMs: 2500, WaitMaxMs: 2500},
			}, s.Rows)

			s, err = st.Stats(ctx, audit.StatsQuery{By: []audit.Dimension{audit.ByAction}})
			require.NoError(t, err)
			assert.EqualValues(t, 5+64, s.Total, "calls: the grouped span counts its 64")
			assert.EqualValues(t, 2+64, s.TotalDenied)

			tree, err := st.Trace(ctx, "0af7651916cd43dd8448eb211c80319c")
			require.NoError(t, err)
			require.Len(t, tree.Roots, 1)
			assert.Equal(t, "invoke_agent coder", tree.Roots[0].Name)
			assert.Equal(t, "Internal", tree.Roots[0].Kind)
			require.Len(t, tree.Roots[0].Children, 3)
			for _, c := range tree.Roots[0].Children {
				require.NotNil(t, c.Decision, c.Name)
			}
			assert.Equal(t, "Error", tree.Roots[0].Children[1].StatusCode)
		})
	}
}

// How the exporter stores each attribute shape of the decision record in
// SpanAttributes (every value a string): measured here, and the same as
// audittest.AttrString, which the audit tests write spans with.
func TestExporterAttributeStrings(t *testing.T) {
	ch := testenv.StartClickHouse(t)
	ctx := context.Background()
	wopts, err := clickhouse.ParseDSN(ch.WriterDSN)
	require.NoError(t, err)
	writer, err := clickhouse.Open(wopts)
	require.NoError(t, err)
	defer writer.Close()
	exp := newExporter(t, ch, "otel_attrs", "lz4")
	kvs := append(rewrittenDeny.Attributes(nil, 0),
		attribute.StringSlice("empty.list", []string{}), attribute.StringSlice("one.list", []string{"x"}))
	td := agentRun(trace1, [8]byte{3, 3, 3, 3, 3, 3, 3, 3}, "coder", time.Now(), nil)
	putAttrs(td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Attributes(), kvs)
	require.NoError(t, exp.ConsumeTraces(ctx, td))

	var stored map[string]string
	require.NoError(t, writer.QueryRow(ctx, "SELECT SpanAttributes FROM otel_attrs.otel_traces").Scan(&stored))
	tests := []struct {
		key  attribute.Key
		want string
	}{
		{gate.AttrVerdicts, rewrittenDenyVerdicts},
		{"empty.list", "[]"},
		{"one.list", `["x"]`},
		{gate.AttrGated, "true"},
		{gate.AttrRewritten, "true"},
		{gate.AttrRounds, "2"},
		{gate.AttrDuration, "1500"},
		{gate.AttrApproval, "invalid"},
		{gate.AttrApprovalID, `apr-"q" <&> é|1`},
		{gate.AttrApprovalWait, "2500"},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, stored[string(tc.key)], tc.key)
	}
	for _, kv := range kvs {
		assert.Equal(t, stored[string(kv.Key)], audittest.AttrString(kv.Value), kv.Key)
	}
}

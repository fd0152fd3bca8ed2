package audit

// A decision's identity in gate_decisions is its sorting key: (hour,
// Action, Agent, ToolName, Timestamp, SpanId), the key ReplacingMergeTree
// collapses duplicates by (migration 2). Two rows may share a span ID and
// a Timestamp and still be two decisions (a producer that reuses span
// IDs: a bug or a hostile exporter), so every order that pages or resumes
// — Decisions' pages, Export, Follow — breaks ties by the rest of the key,
// and every cursor carries the whole key: a cursor on (Timestamp, SpanId)
// alone would skip the second of two such rows.

// newestFirst is the order of Decisions and Export: Timestamp DESC, then
// the rest of the sorting key, descending.
const newestFirst = "Timestamp DESC, SpanId DESC, Action DESC, Agent DESC, ToolName DESC"

// arrivalOrder is Follow's order: InsertedAt, then the sorting key.
const arrivalOrder = "InsertedAt, SpanId, Timestamp, Action, Agent, ToolName"

// afterCursor is the condition "after c in newestFirst": the bound on
// Timestamp alone is what the day partitions and the parts' minmax index
// prune by, so a read deep in the range skips every part after the
// cursor; the tuple orders ties. Inside a part the primary key,
// (toStartOfHour(Timestamp), …), is not searched by a bound on Timestamp:
// Export's windows bound the key itself (keybound.go). A cursor without
// Action, Agent and ToolName (a token from before they were recorded)
// compares as the smallest of its (Timestamp, SpanId): every row sharing
// both is behind it, as its order then had it.
func (c *Cursor) afterCursor(p *Params) []string {
	p.Int64("after_ts", c.Timestamp.UnixNano())
	p.String("after_span", c.SpanID).String("after_action", c.Action).String("after_agent", c.Agent).String("after_tool", c.ToolName)
	return []string{
		"Timestamp <= fromUnixTimestamp64Nano({after_ts:Int64})",
		"(Timestamp, SpanId, Action, Agent, ToolName) < (fromUnixTimestamp64Nano({after_ts:Int64}), {after_span:String}, {after_action:String}, {after_agent:String}, {after_tool:String})",
	}
}

// key is a decision's identity (see the top of this file).
type key struct {
	ts                  int64
	span, action, agent string
	tool                string
}

func (d *Decision) key() key {
	return key{d.Timestamp.UnixNano(), d.SpanID, d.Action, d.Agent, d.ToolName}
}

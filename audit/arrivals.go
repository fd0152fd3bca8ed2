package audit

import (
	"context"
	"fmt"
)

// Arrival tables (schema version 12).
const (
	// ArrivalsTable records, per hour (UTC, of the decisions' Timestamp),
	// the newest InsertedAt that an insert into gate_decisions brought to
	// it: one row per insert and hour, kept per hour with the newest
	// InsertedAt on merge. The roll-ups' readers ask it which hours a
	// decision reached after a watermark (dirtyHours), which reads a few
	// rows per hour instead of the InsertedAt index of every part of
	// gate_decisions.
	ArrivalsTable = "gate_decisions_arrivals"
	// ArrivalsView is the materialized view (incremental: it runs on every
	// insert block of gate_decisions, also the inserts of gate_decisions'
	// own view and of the migrations' backfills) that fills ArrivalsTable.
	ArrivalsView = "gate_decisions_arrivals_mv"
)

// arrivalsSelect groups rows of gate_decisions (an insert block, for the
// view; the whole table, for the backfill) by hour, with each hour's
// newest InsertedAt.
func (c config) arrivalsSelect() string {
	return "SELECT " + hourExpr + " AS Hour, max(InsertedAt) AS LastInsertedAt\nFROM " + c.table(DecisionsTable) + "\nGROUP BY Hour"
}

// arrivalsVersion is the schema version that creates and fills the
// arrivals.
const arrivalsVersion = 12

// arrivals is migration 12: ArrivalsTable (with a retention, kept a day
// longer than the decisions of its hour, whose day parts are dropped
// whole), its view, then its backfill from gate_decisions (in this
// order, so that every insert is seen by the view or by the backfill,
// some by both: a row's LastInsertedAt is a maximum, so a second row for
// an hour changes nothing); on a cluster also its Distributed table.
//
// Why a row per insert needs no FINAL: an hour holds a decision inserted
// after w exactly when the insert that brought it wrote a row for that
// hour with LastInsertedAt > w, and merges of ArrivalsTable keep each
// hour's newest row, so `LastInsertedAt > w` finds the same hours in any
// state of its merges. (A merge of gate_decisions, which keeps a span's
// first copy, can hide a copy's later arrival there but not here: the
// arrivals are then a superset, which only makes more hours read raw.)
func (c config) arrivals() Migration {
	m := Migration{Version: arrivalsVersion, Name: "arrivals", Statements: []string{
		"CREATE TABLE IF NOT EXISTS " + c.table(ArrivalsTable) + c.onCluster() + " (\n" +
			"    Hour DateTime('UTC'),\n" +
			"    LastInsertedAt DateTime64(9)\n" +
			") ENGINE = " + c.engine("ReplacingMergeTree", "LastInsertedAt") + "\nORDER BY Hour" + c.ttl("Hour + toIntervalDay(1)"),
		"CREATE MATERIALIZED VIEW IF NOT EXISTS " + c.table(ArrivalsView) + c.onCluster() + " TO " + c.table(ArrivalsTable) + " AS\n" + c.arrivalsSelect(),
		"INSERT INTO " + c.table(ArrivalsTable) + "\n" + c.arrivalsSelect(),
	}}
	if c.cluster != "" {
		m.Statements = append(m.Statements, "CREATE TABLE IF NOT EXISTS "+c.table(ArrivalsTable+distributedSuffix)+c.onCluster()+" AS "+c.table(ArrivalsTable)+
			"\nENGINE = Distributed(`"+c.cluster+"`, `"+c.database+"`, `"+ArrivalsTable+"`)")
	}
	return m
}

// arrivalsReady reports whether schema_migrations records
// arrivalsVersion: Migrate records a version after its last statement,
// here the backfill. Until then (or when schema_migrations cannot be
// read) dirtyHours reads gate_decisions, which is always exact.
func (s *Store) arrivalsReady(ctx context.Context) bool {
	if s.arrivals.Load() {
		return true
	}
	var n uint64
	var p Params
	p.Int64("v", arrivalsVersion)
	if err := s.conn.QueryRow(p.Context(ctx), "SELECT count() FROM "+s.cfg.table(MigrationsTable)+" WHERE Version = {v:UInt32}").Scan(&n); err != nil || n == 0 {
		return false
	}
	s.arrivals.Store(true)
	return true
}

// arrivedHoursSQL lists the hours of ArrivalsTable that a decision
// inserted after {rolled:Int64} (Unix nanoseconds) reached, as Unix
// seconds, ascending, at most limit+1 of them.
func (s *Store) arrivedHoursSQL(limit int) string {
	return "SELECT DISTINCT toInt64(toUnixTimestamp(Hour)) AS h FROM " + s.cfg.read(ArrivalsTable) +
		" WHERE LastInsertedAt > fromUnixTimestamp64Nano({rolled:Int64}) ORDER BY h LIMIT " + fmt.Sprint(limit+1)
}

// scanHours runs sql (rows of one Int64) with p. The rows come back as
// one array in one row: an answer is never empty (usually no hour is
// dirty), and an empty result costs the embedded server a DESCRIBE for
// its header (chserve), a second engine query. Ascending, as sql.
func (s *Store) scanHours(ctx context.Context, sql string, p *Params) ([]int64, error) {
	rows, err := s.query(ctx, "stats", "SELECT arraySort(groupArray(h)) FROM (\n"+sql+"\n)", p)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var hours []int64
	for rows.Next() {
		if err := rows.Scan(&hours); err != nil {
			return nil, s.wrap("stats", err)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, s.wrap("stats", err)
	}
	return hours, nil
}

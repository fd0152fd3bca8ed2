// Package audittest is the test helper for code that records or reads
// toolgate's audit trail, usable from any module, the way the OTel SDK's
// sdk/trace/tracetest is: [Start] runs the embedded ClickHouse server in
// the test process, applies the audit migrations and returns an [Env] with
// a writer connection, a read-only [audit.Store] and the DSNs of both
// accounts; [Exporter] is an OpenTelemetry span exporter that writes a
// real executor's spans into that server as the collector would; and
// [InsertSpans], [Fixture] and friends write otel_traces rows shaped
// exactly like the collector's clickhouse exporter (contrib v0.161.0)
// writes them: the same columns, every attribute value a string, SpanKind
// and StatusCode as pdata names (Internal, Error), IDs as lowercase hex.
//
// Typical use, in a _test.go file of any module:
//
//	env := audittest.Start(t) // skips without libchdb.so (fails under TOOLGATE_INTEGRATION=1)
//	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(audittest.NewExporter(env.Writer, env.Database)))
//	ex, _ := executor.New(reg, executor.WithTracerProvider(tp))
//	… run tool calls …
//	page, err := env.Store.Decisions(ctx, audit.Filter{…}, audit.Page{})
//
// # What it needs
//
// Only libchdb.so, the ClickHouse engine as a shared library (chDB 26.5,
// Linux x86-64 glibc); nothing is built and no binary of this repository
// runs. [Start] looks for it at [WithLibchdb], then $TOOLGATE_LIBCHDB,
// then .cache/chdb/libchdb.so in the working directory or one of its
// parents (where this repository's `make deps` puts it). To install it:
//
//	npm pack @chdb/lib-linux-x64-gnu@26.5.3     # about 170 MB
//	tar -xzf chdb-lib-linux-x64-gnu-26.5.3.tgz package/libchdb.so
//	export TOOLGATE_LIBCHDB=$PWD/package/libchdb.so
//
// or, in a checkout of this repository, scripts/install-libchdb.sh (which
// does the same into .cache/chdb). Without the library [Start] skips the
// test, naming these steps; with TOOLGATE_INTEGRATION=1 it fails instead,
// so that a CI job that means to run the integration tests cannot pass by
// skipping them.
//
// # One engine per process
//
// chDB runs one ClickHouse engine per process, with one data path at a
// time: a second data path cannot be opened while a connection to the
// first is open, and the engine can be reopened on another path once
// every connection is closed (tens of milliseconds). That is process-wide
// state of the library, not of this package, and the package mirrors it
// with the one piece of package-level state it has: a lock that an [Env]
// holds from [Start] until the test's cleanup. So:
//
//   - every [Env] is a fresh server with its own data directory, ports and
//     accounts, like httptest.NewServer; tests cannot see each other's rows;
//   - Envs in one test binary are open one at a time: a parallel test's
//     [Start] waits until the Env before it is cleaned up, and a test (or
//     one of its subtests) that calls [Start] while it holds an Env fails
//     at once rather than deadlock — open one Env and use several
//     databases in it instead ([audit.WithDatabase]);
//   - other code in the same test binary that opens chDB itself (package
//     chdb, an in-process `auditq serve`) must not run while an Env is
//     open; separate processes (go test runs one per package) are
//     independent.
//
// A shared server per binary (a sync.Once) would have been cheaper but
// would leak rows, databases and settings from one test into the next;
// reopening the engine costs less than a typical test's migrations.
//
// The server listens on 127.0.0.1 only, on a port the kernel picks, with
// two accounts with random passwords: a writer (inserts, DDL) and a
// read-only reader. It speaks ClickHouse's HTTP interface (package
// chserve), so clickhouse-go/v2 with the http:// DSNs, the collector's
// clickhouse exporter and curl work against it.
package audittest

// Package otelbridge connects toolgate to OpenTelemetry: it sets up an OTLP
// (gRPC) trace pipeline, keeps or drops finished spans by their gate
// decision, counts every span the pipeline loses, and turns after-the-fact
// agent-framework trace events (open-multi-agent's onTrace) into OTel spans.
//
// The pieces, one file each:
//
//   - [Setup] (setup.go, config.go, resource.go): a [Provider] that wraps an
//     sdktrace.TracerProvider exporting through otlptracegrpc with a batch
//     span processor; the standard OTEL_* environment variables work and
//     explicit [Config] fields override them.
//   - [Check] (check.go, auth.go, diagnose.go): one connection to the
//     collector that finds a TLS/plaintext mismatch, an untrusted
//     certificate or a non-gRPC port, then one empty OTLP export that finds
//     a missing or wrong bearer token (ErrUnauthenticated), and names the
//     fix; Setup runs it and refuses to start on such a configuration, and
//     failed exports carry its diagnosis.
//   - [Sampling] (sampling.go) and [SamplingProcessor] (processor.go): the
//     one sampling setting ("all", "decisions", "deny-only", "ratio:R") and
//     the span processor that applies it at span end, by the gate.*
//     attributes of package gate.
//   - [BatchProcessor] (batch.go): the SDK's batch span processor behind a
//     bounded hand-off and with a counting exporter wrapper, so that spans
//     dropped on a full queue and spans whose export failed are counted
//     ([Stats]) and recorded as OTel metrics ([RegisterMetrics], metrics.go).
//   - the spool (package otelbridge/spool; spoolsetup.go): with
//     Config.Spool.Dir set, a durable on-disk log replaces the batch
//     processor, so that a collector outage or a killed agent loses no
//     decision, and [Provider.Commit] records a call before its tool runs
//     (docs/durability.md).
//   - [Bridge] (bridge.go, event.go, idgen.go, toolcalls.go): after-the-fact
//     events become spans with their real start and end times and the
//     parentage invoke_agent {agent} -> chat {model} | execute_tool {tool},
//     without duplicating the execute_tool spans the executor already made.
//
// Typical use:
//
//	p, err := otelbridge.Setup(ctx, otelbridge.Config{
//		Endpoint: "127.0.0.1:4317", Insecure: true,
//		ServiceName: "agent-runner", ServiceVersion: version,
//		Sampling: otelbridge.MustParseSampling("decisions"),
//	})
//	if err != nil { ... } // e.g. a TLS/plaintext mismatch, with its fix
//	defer func() { // flushes: without it, a short-lived program loses its queued spans
//		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
//		defer cancel()
//		if err := p.Shutdown(ctx); err != nil { log.Print(err) }
//	}()
//	ex, _ := executor.New(reg, executor.WithTracerProvider(p), ...)
//	b := otelbridge.NewBridge(p)           // for framework events
//	ctx = b.AgentContext(ctx, runID, agent, taskID) // live calls join the bridged agent span
//	_ = b.Handle(ctx, event)               // or b.HandleJSON(ctx, line)
//	log.Printf("lost %d spans", p.Stats().Lost())
//
// See docs/sampling.md for which sampling mode to use where.
//
// Attribute names: GenAI keys come from go.opentelemetry.io/otel/semconv/v1.41.0
// (the last semconv release with GenAI constants); gate keys come only from
// package gate (gate/attributes.go); keys of our own are in attributes.go.
package otelbridge

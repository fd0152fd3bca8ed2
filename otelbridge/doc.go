// Package otelbridge connects toolgate to OpenTelemetry: it sets up an OTLP
// (gRPC) trace pipeline that keeps or drops finished spans by their gate
// decision and counts every span it loses. It is the setup part of a
// package tree modelled on the OTel Go SDK (sdk/trace and its
// subpackages), one job per package:
//
//   - otelbridge (this package): [Setup] builds the pipeline from one
//     [Config] and returns a [Provider] (setup.go, config.go, resource.go);
//     [Check] diagnoses the collector connection (check.go, auth.go,
//     diagnose.go); [BatchProcessor] is the export stage — the SDK's batch
//     span processor behind a bounded, prioritised hand-off, with a
//     counting exporter wrapper so that spans dropped on a full queue and
//     spans whose export failed are counted ([BatchStats]) and recorded as
//     OTel metrics ([RegisterMetrics], metrics.go).
//   - otelbridge/sampling: the one sampling setting ("all", "decisions",
//     "deny-only", "ratio:R") and the span processor that applies it at
//     span end, by the gate.* attributes of package gate.
//   - otelbridge/bridge: after-the-fact agent-framework trace events
//     (open-multi-agent's onTrace) become spans with their real start and
//     end times and the parentage invoke_agent {agent} -> chat {model} |
//     execute_tool {tool}, without duplicating the execute_tool spans the
//     executor already made (its ID generator and tool-call index are
//     installed by Setup).
//   - otelbridge/spool: the durable on-disk spool between the pipeline and
//     the collector. With Config.Spool.Dir set (spoolsetup.go) it replaces
//     the batch processor, so that a collector outage or a killed agent
//     loses no decision, and [Provider.Commit] records a call before its
//     tool runs (docs/durability.md).
//
// # One way to configure
//
// Each part has one config struct whose zero fields mean "not set here":
// the part's environment variables apply (OTEL_* for the SDK's settings,
// TOOLGATE_* for ours), then the defaults. The same struct configures the
// part standalone (sampling.NewProcessor(next, sampling.Config{...}),
// [NewBatchProcessor](exp, [BatchConfig]{...}), bridge.New(tp,
// bridge.Config{...}), spool.Open(ctx, spool.Config{...}, client)) and,
// nested in [Config] (Config.Sampling, Config.Batch, Config.Spool), the
// pipeline Setup builds. Objects that are not settings (an exporter of
// your own, the spool's upload client, extra span processors, a meter
// provider, a head sampler, resource attributes, the error handler) are
// fields of Config too; there are no option functions.
//
// Typical use:
//
//	p, err := otelbridge.Setup(ctx, otelbridge.Config{
//		Endpoint: "127.0.0.1:4317", Insecure: true,
//		ServiceName: "agent-runner", ServiceVersion: version,
//		Sampling: sampling.Config{Setting: sampling.MustParse("decisions")}, // unset: TOOLGATE_SAMPLING
//		Batch:    otelbridge.BatchConfig{QueueSize: 8192},                    // unset: OTEL_BSP_MAX_QUEUE_SIZE
//	})
//	if err != nil { ... } // e.g. a TLS/plaintext mismatch, with its fix
//	defer func() { // flushes: without it, a short-lived program loses its queued spans
//		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
//		defer cancel()
//		if err := p.Shutdown(ctx); err != nil { log.Print(err) }
//	}()
//	ex, _ := executor.New(reg, executor.WithTracerProvider(p), ...)
//	b := bridge.New(p, bridge.Config{})              // for framework events
//	ctx = b.AgentContext(ctx, runID, agent, taskID) // live calls join the bridged agent span
//	_ = b.Handle(ctx, event)                        // or b.HandleJSON(ctx, line)
//	log.Printf("lost %d spans", p.Stats().Lost())
//
// See docs/configuration.md for every field and variable, and
// docs/sampling.md for which sampling mode to use where.
//
// Attribute names: GenAI keys come from go.opentelemetry.io/otel/semconv/v1.41.0
// (the last semconv release with GenAI constants); gate keys come only from
// package gate (gate/attributes.go); the bridge's own keys are in
// bridge/attributes.go.
package otelbridge

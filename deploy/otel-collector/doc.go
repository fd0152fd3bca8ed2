// Package otelcollector holds toolgate's OpenTelemetry Collector deployment:
// the builder manifest (builder.yaml) for the otelcol-toolgate distribution,
// the single-node production configuration (config.yaml), audit-mode
// overlays (modes/), the TLS/mTLS overlay for the receivers (tls.yaml),
// the cluster variant (cluster/), the Jaeger v2 configuration used beside it
// (jaeger.yaml), compose.yaml for container deployments and Grafana
// provisioning (grafana/).
//
// The Go API only embeds those files, so that tests and tools run exactly the
// configuration that ships: see Config, Overlay and JaegerConfig. The files
// read their endpoints, credentials and directories from TOOLGATE_*
// environment variables (see docs/deployment.md), with the local stack's
// loopback ports as defaults.
package otelcollector

package otelbridge

import (
	"context"
	"errors"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
)

// newResource builds the resource, later sources overriding earlier ones:
// SDK defaults (telemetry.sdk.*) and DefaultServiceName, host (host.name),
// process (process.pid, runtime), OTEL_RESOURCE_ATTRIBUTES and
// OTEL_SERVICE_NAME, extra attributes, then Config's service name and
// version.
func newResource(ctx context.Context, cfg Config, extra []attribute.KeyValue) (*resource.Resource, error) {
	var explicit []attribute.KeyValue
	explicit = append(explicit, extra...)
	if cfg.ServiceName != "" {
		explicit = append(explicit, semconv.ServiceName(cfg.ServiceName))
	}
	if cfg.ServiceVersion != "" {
		explicit = append(explicit, semconv.ServiceVersion(cfg.ServiceVersion))
	}
	r, err := resource.New(ctx,
		resource.WithTelemetrySDK(),
		resource.WithAttributes(semconv.ServiceName(DefaultServiceName)),
		resource.WithHost(),
		resource.WithProcessPID(),
		resource.WithProcessRuntimeName(),
		resource.WithProcessRuntimeVersion(),
		resource.WithFromEnv(),
		resource.WithAttributes(explicit...),
	)
	// A partial resource (a detector failed, or schema URLs differ) is
	// still usable; anything else is not.
	if err != nil && !errors.Is(err, resource.ErrPartialResource) && !errors.Is(err, resource.ErrSchemaURLConflict) {
		return nil, fmt.Errorf("otelbridge: resource: %w", err)
	}
	return r, nil
}

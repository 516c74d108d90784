package tracing

import (
	"context"
	"fmt"
	"os"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// ProviderFromEnv returns an SDK TracerProvider exporting over OTLP as the
// standard OTEL_* environment variables say, or nil when they turn tracing
// off: OTEL_SDK_DISABLED=true, OTEL_TRACES_EXPORTER=none, or neither
// OTEL_TRACES_EXPORTER=otlp nor an OTEL_EXPORTER_OTLP_ENDPOINT /
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT set. The protocol is
// OTEL_EXPORTER_OTLP_TRACES_PROTOCOL or OTEL_EXPORTER_OTLP_PROTOCOL:
// "http/protobuf" (the default) or "grpc"; the exporter reads the
// endpoint, headers, timeout and TLS variables itself, the SDK the
// sampler (OTEL_TRACES_SAMPLER). serviceName is service.name unless
// OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES set it. The caller shuts
// the provider down (Shutdown flushes the spans still queued).
//
// Errors: an exporter or protocol other than these, an invalid resource.
func ProviderFromEnv(ctx context.Context, serviceName string) (*sdktrace.TracerProvider, error) {
	if strings.EqualFold(os.Getenv("OTEL_SDK_DISABLED"), "true") {
		return nil, nil
	}
	switch exp := strings.TrimSpace(os.Getenv("OTEL_TRACES_EXPORTER")); exp {
	case "none":
		return nil, nil
	case "":
		if os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") == "" && os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") == "" {
			return nil, nil
		}
	case "otlp":
	default:
		return nil, fmt.Errorf("tracing: OTEL_TRACES_EXPORTER %q is not supported (otlp or none)", exp)
	}
	protocol := os.Getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if protocol == "" {
		protocol = os.Getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	var exp sdktrace.SpanExporter
	var err error
	switch protocol {
	case "", "http/protobuf":
		exp, err = otlptracehttp.New(ctx)
	case "grpc":
		exp, err = otlptracegrpc.New(ctx)
	default:
		return nil, fmt.Errorf("tracing: OTLP protocol %q is not supported (http/protobuf or grpc)", protocol)
	}
	if err != nil {
		return nil, fmt.Errorf("tracing: OTLP exporter: %w", err)
	}
	// Later options win: the environment overrides the default name.
	res, err := resource.New(ctx, resource.WithTelemetrySDK(),
		resource.WithAttributes(attribute.String("service.name", serviceName)), resource.WithFromEnv())
	if err != nil {
		exp.Shutdown(ctx)
		return nil, fmt.Errorf("tracing: resource: %w", err)
	}
	return sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res)), nil
}

// PropagatorFromEnv returns the propagators OTEL_PROPAGATORS names, of
// "tracecontext", "baggage" and "none"; unset means both W3C ones.
// Errors: another name (b3 and jaeger are not built in).
func PropagatorFromEnv() (propagation.TextMapPropagator, error) {
	v := strings.TrimSpace(os.Getenv("OTEL_PROPAGATORS"))
	if v == "" {
		v = "tracecontext,baggage"
	}
	var list []propagation.TextMapPropagator
	for _, name := range strings.Split(v, ",") {
		switch strings.TrimSpace(name) {
		case "tracecontext":
			list = append(list, propagation.TraceContext{})
		case "baggage":
			list = append(list, propagation.Baggage{})
		case "none":
			return propagation.NewCompositeTextMapPropagator(), nil
		default:
			return nil, fmt.Errorf("tracing: OTEL_PROPAGATORS %q: %q is not supported (tracecontext, baggage, none)", v, name)
		}
	}
	return propagation.NewCompositeTextMapPropagator(list...), nil
}

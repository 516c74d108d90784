package tracing

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestProviderFromEnv(t *testing.T) {
	ctx := context.Background()
	for _, env := range []map[string]string{
		{},
		{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"},
		{"OTEL_SDK_DISABLED": "true", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"},
	} {
		t.Run("off", func(t *testing.T) {
			for _, k := range []string{"OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_SDK_DISABLED"} {
				t.Setenv(k, env[k])
			}
			tp, err := ProviderFromEnv(ctx, "text2sql")
			require.NoError(t, err)
			assert.Nil(t, tp, "%v", env)
		})
	}
	for _, protocol := range []string{"http/protobuf", "grpc"} {
		t.Run(protocol, func(t *testing.T) {
			t.Setenv("OTEL_SDK_DISABLED", "")
			t.Setenv("OTEL_TRACES_EXPORTER", "")
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
			t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", protocol)
			t.Setenv("OTEL_SERVICE_NAME", "quiz")
			tp, err := ProviderFromEnv(ctx, "text2sql")
			require.NoError(t, err)
			require.NotNil(t, tp)
			_, span := tp.Tracer("t").Start(ctx, "x")
			span.End()
			// Shutdown tries the unreachable collector; it must return.
			sctx, cancel := context.WithTimeout(ctx, 2e9)
			defer cancel()
			tp.Shutdown(sctx)
		})
	}
	t.Setenv("OTEL_TRACES_EXPORTER", "zipkin")
	_, err := ProviderFromEnv(ctx, "text2sql")
	assert.ErrorContains(t, err, "zipkin")
	t.Setenv("OTEL_TRACES_EXPORTER", "otlp")
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
	_, err = ProviderFromEnv(ctx, "text2sql")
	assert.ErrorContains(t, err, "http/json")
}

func TestPropagatorFromEnv(t *testing.T) {
	t.Setenv("OTEL_PROPAGATORS", "")
	p, err := PropagatorFromEnv()
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"traceparent", "tracestate", "baggage"}, p.Fields())
	t.Setenv("OTEL_PROPAGATORS", "tracecontext")
	p, err = PropagatorFromEnv()
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"traceparent", "tracestate"}, p.Fields())
	t.Setenv("OTEL_PROPAGATORS", "b3")
	_, err = PropagatorFromEnv()
	assert.ErrorContains(t, err, "b3")
}

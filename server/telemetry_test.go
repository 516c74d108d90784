package server_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/text2sql-go/text2sql/server"
	"github.com/text2sql-go/text2sql/server/metrics"
	"github.com/text2sql-go/text2sql/server/tracing"
)

const question = "List two course codes"

func TestTracingSpans(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { tp.Shutdown(context.Background()) })
	tr := tracing.New(tracing.Options{TracerProvider: tp, Propagator: propagation.TraceContext{}, Provider: "scripted"})
	srv := server.ServerForTest(t, server.Config{Observers: []server.Observer{tr}})

	// The caller's trace is continued.
	const parentTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	req, err := http.NewRequest("POST", srv.URL+"/v1/ask", strings.NewReader(`{"question":"`+question+`"}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+server.TokenForTest)
	req.Header.Set("traceparent", "00-"+parentTrace+"-00f067aa0ba902b7-01")
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode, "%s", body)
	status, _ := server.DoForTest(t, srv, "POST", "/v1/run", server.TokenForTest, map[string]string{"sql": "DROP TABLE students"})
	require.Equal(t, 200, status)

	spans := exp.GetSpans()
	byName := map[string][]tracetest.SpanStub{}
	for _, s := range spans {
		byName[s.Name] = append(byName[s.Name], s)
	}
	require.Len(t, byName["POST /v1/ask"], 1, "spans: %v", names(spans))
	reqSpan := byName["POST /v1/ask"][0]
	assert.Equal(t, trace.SpanKindServer, reqSpan.SpanKind)
	assert.Equal(t, parentTrace, reqSpan.SpanContext.TraceID().String())
	assert.Equal(t, "00f067aa0ba902b7", reqSpan.Parent.SpanID().String())
	assert.Equal(t, int64(200), attr(reqSpan, "http.response.status_code").AsInt64())
	assert.Equal(t, "/v1/ask", attr(reqSpan, "http.route").AsString())

	require.Len(t, byName["text2sql.pipeline"], 1)
	run := byName["text2sql.pipeline"][0]
	assert.Equal(t, reqSpan.SpanContext.SpanID(), run.Parent.SpanID())
	assert.Equal(t, "answered", attr(run, "text2sql.status").AsString())
	assert.Equal(t, int64(1), attr(run, "text2sql.model_calls").AsInt64())

	for _, stage := range []string{"retrieval", "sql", "execution"} {
		ss := byName["text2sql.stage "+stage]
		require.Len(t, ss, 1, "stage %s in %v", stage, names(spans))
		assert.Equal(t, run.SpanContext.SpanID(), ss[0].Parent.SpanID(), stage)
		assert.Equal(t, stage, attr(ss[0], "text2sql.stage").AsString())
		assert.Equal(t, "ok", attr(ss[0], "text2sql.outcome").AsString())
		assert.False(t, ss[0].StartTime.Before(run.StartTime), "stage %s starts before its run", stage)
		assert.False(t, ss[0].EndTime.After(run.EndTime), "stage %s ends after its run", stage)
	}
	assert.Equal(t, int64(1), attr(byName["text2sql.stage sql"][0], "text2sql.attempt").AsInt64())

	var calls []tracetest.SpanStub
	for _, s := range spans {
		if strings.HasPrefix(s.Name, "chat ") {
			calls = append(calls, s)
		}
	}
	require.Len(t, calls, 1, "spans: %v", names(spans))
	assert.Equal(t, byName["text2sql.stage sql"][0].SpanContext.SpanID(), calls[0].Parent.SpanID())
	assert.Equal(t, "scripted", attr(calls[0], "gen_ai.provider.name").AsString())
	assert.NotEmpty(t, attr(calls[0], "gen_ai.response.model").AsString())
	assert.Positive(t, attr(calls[0], "gen_ai.usage.input_tokens").AsInt64())

	// The refused statement is an event with its kind, not its text.
	require.Len(t, byName["POST /v1/run"], 1)
	var events []string
	for _, e := range byName["POST /v1/run"][0].Events {
		events = append(events, e.Name)
		if e.Name == "text2sql.statement" {
			assert.Contains(t, e.Attributes, attribute.String("text2sql.outcome", "not_read_only"))
		}
	}
	assert.Contains(t, events, "text2sql.statement")

	// Nothing secret anywhere: no question, prompt, SQL or token.
	for _, s := range spans {
		kvs := append([]attribute.KeyValue{}, s.Attributes...)
		for _, e := range s.Events {
			kvs = append(kvs, e.Attributes...)
		}
		for _, kv := range kvs {
			v := kv.Value.String()
			for _, secret := range []string{question, "course", "SELECT", "DROP", server.TokenForTest, "Bearer", "Scripted"} {
				assert.NotContains(t, v, secret, "span %s attribute %s", s.Name, kv.Key)
			}
		}
		assert.NotContains(t, s.Status.Description, "SELECT", s.Name)
	}
}

func names(spans tracetest.SpanStubs) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name)
	}
	return out
}

func attr(s tracetest.SpanStub, key string) attribute.Value {
	for _, kv := range s.Attributes {
		if string(kv.Key) == key {
			return kv.Value
		}
	}
	return attribute.Value{}
}

func TestMetrics(t *testing.T) {
	m, err := metrics.New(metrics.Options{Provider: "scripted", Registry: prometheus.NewRegistry()})
	require.NoError(t, err)
	srv := server.ServerForTest(t, server.Config{Observers: []server.Observer{m}, Metrics: m.Handler(),
		RateLimit: server.RateLimit{Requests: 5, Window: 3600e9}, Cache: server.Cache{Store: server.NewMapStoreForTest()}})
	scrape := func() string {
		status, body := server.DoForTest(t, srv, "GET", "/metrics", server.TokenForTest, nil)
		require.Equal(t, 200, status, "%s", body)
		return string(body)
	}
	before := scrape()
	assert.NotContains(t, before, `text2sql_requests_total{method="POST"`)

	q := map[string]string{"question": question}
	for range 2 { // the second is answered from the cache
		status, _ := server.DoForTest(t, srv, "POST", "/v1/ask", server.TokenForTest, q)
		require.Equal(t, 200, status)
	}
	status, _ := server.DoForTest(t, srv, "POST", "/v1/run", server.TokenForTest, map[string]string{"sql": "DROP TABLE students"})
	require.Equal(t, 200, status)
	status, _ = server.DoForTest(t, srv, "GET", "/no/such/path", server.TokenForTest, nil)
	require.Equal(t, 404, status)
	// The budget of 5 is spent by two asks, run and two generates (the
	// second from the cache): the third generate is refused.
	for range 3 {
		status, _ = server.DoForTest(t, srv, "POST", "/v1/generate", server.TokenForTest, q)
	}
	require.Equal(t, 429, status)

	after := scrape()
	for _, want := range []string{
		`text2sql_requests_total{method="POST",route="POST /v1/ask",status="200"} 2`,
		`text2sql_requests_total{method="POST",route="POST /v1/generate",status="429"} 1`,
		`text2sql_requests_total{method="other",route="unmatched",status="404"} 1`,
		`text2sql_requests_total{method="GET",route="GET /metrics",status="200"} 1`,
		`text2sql_request_duration_seconds_count{route="POST /v1/ask"} 2`,
		`text2sql_cache_lookups_total{result="miss",route="POST /v1/ask"} 1`,
		`text2sql_cache_lookups_total{result="hit",route="POST /v1/ask"} 1`,
		`text2sql_cache_lookups_total{result="hit",route="POST /v1/generate"} 1`,
		`text2sql_pipeline_runs_total{route="POST /v1/ask",status="answered"} 1`,
		`text2sql_pipeline_runs_total{route="POST /v1/generate",status="generated"} 1`,
		`text2sql_stage_duration_seconds_count{stage="sql"} 2`,
		`text2sql_stage_duration_seconds_count{stage="execution"} 1`,
		`text2sql_model_calls_total{provider="scripted",stage="sql"} 2`,
		`text2sql_model_tokens_total{direction="input",provider="scripted",stage="sql"}`,
		`text2sql_statements_total{outcome="ok",source="POST /v1/ask"} 1`,
		`text2sql_statements_total{outcome="not_read_only",source="POST /v1/run"} 1`,
		`text2sql_refusals_total{kind="not_read_only"} 1`,
		`text2sql_rate_limited_total{code="rate_limited",route="POST /v1/generate"} 1`,
	} {
		assert.True(t, strings.Contains(after, want), "no %s", want)
	}
	assert.NotContains(t, after, "/no/such/path")
	assert.NotContains(t, after, question)
}

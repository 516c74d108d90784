// Package tracing exports what the text2sql service does as OpenTelemetry
// traces (go.opentelemetry.io/otel).
//
// Add a *Tracer to server.Config.Observers. Each HTTP request gets a
// server span (continuing the caller's trace from its traceparent header);
// each pipeline run gets a span under it, with one child span per stage
// run and, under those, one per model call. The run's spans are derived
// from the answer's text2sql.Trace once the run ends, placed at the
// recorded start times with the recorded durations: the Trace stays the
// one record of what the pipeline did.
//
// Attributes hold stages, attempts, outcome classes ("ok", "error",
// "rejected", "declined"), token counts, model names, routes and codes;
// never questions, prompts, SQL, rows, keys or tokens of authentication.
package tracing

import (
	"context"
	"net/http"
	"strings"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/server"
)

// instrumentation is the tracer's name, the importing package's path as
// OpenTelemetry asks.
const instrumentation = "github.com/text2sql-go/text2sql/server/tracing"

// Options configures New.
type Options struct {
	// TracerProvider makes the spans; nil means otel.GetTracerProvider().
	TracerProvider trace.TracerProvider
	// Propagator reads the caller's trace context from request headers;
	// nil means otel.GetTextMapPropagator().
	Propagator propagation.TextMapPropagator
	// Provider is the model provider ("gemini", "openai") put on model
	// call spans as gen_ai.provider.name; "" leaves it out.
	Provider string
}

// Tracer is a server.Observer that makes spans.
type Tracer struct {
	server.NopObserver
	tracer   trace.Tracer
	prop     propagation.TextMapPropagator
	provider string
}

// New returns a Tracer for opts.
func New(opts Options) *Tracer {
	tp := opts.TracerProvider
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	prop := opts.Propagator
	if prop == nil {
		prop = otel.GetTextMapPropagator()
	}
	return &Tracer{tracer: tp.Tracer(instrumentation), prop: prop, provider: opts.Provider}
}

// StartRequest implements server.Observer: it starts the request's server
// span, a child of the caller's span when the headers carry one.
func (t *Tracer) StartRequest(ctx context.Context, r *http.Request) context.Context {
	ctx = t.prop.Extract(ctx, propagation.HeaderCarrier(r.Header))
	ctx, _ = t.tracer.Start(ctx, r.Method, trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(attribute.String("http.request.method", r.Method)))
	return ctx
}

// EndRequest implements server.Observer: it names the span after the
// route pattern, records the status and ends it.
func (t *Tracer) EndRequest(ctx context.Context, e server.RequestEvent) {
	span := trace.SpanFromContext(ctx)
	if e.Route != "" {
		span.SetName(e.Route)
		_, path, _ := strings.Cut(e.Route, " ")
		if path == "" {
			path = e.Route // "/mcp" matches every method
		}
		span.SetAttributes(attribute.String("http.route", path))
	}
	span.SetAttributes(attribute.Int("http.response.status_code", e.Status))
	if e.Code != "" {
		span.SetAttributes(attribute.String("text2sql.error.code", string(e.Code)))
	}
	if e.Status >= 500 {
		span.SetStatus(codes.Error, string(e.Code))
	}
	span.End()
}

// PipelineRun implements server.Observer: the run's span with one child
// per stage run and one grandchild per model call, from the Trace.
func (t *Tracer) PipelineRun(ctx context.Context, e server.RunEvent) {
	now := time.Now()
	a := e.Answer
	if a == nil {
		_, span := t.tracer.Start(ctx, "text2sql.pipeline", trace.WithAttributes(attribute.String("text2sql.route", e.Route)))
		span.SetStatus(codes.Error, "no answer")
		span.End()
		return
	}
	start := a.Trace.Start
	if start.IsZero() {
		start = now.Add(-a.Trace.Duration)
	}
	ctx, run := t.tracer.Start(ctx, "text2sql.pipeline", trace.WithTimestamp(start), trace.WithAttributes(
		attribute.String("text2sql.route", e.Route),
		attribute.String("text2sql.status", string(a.Status)),
		attribute.Int("text2sql.attempts", len(a.Attempts)),
		attribute.Int("text2sql.model_calls", a.Trace.ModelCalls),
		attribute.Int("gen_ai.usage.input_tokens", a.Trace.Usage.InputTokens),
		attribute.Int("gen_ai.usage.output_tokens", a.Trace.Usage.OutputTokens),
	))
	if e.Err != nil {
		// The error's text may quote the question or SQL.
		run.SetStatus(codes.Error, "pipeline failed")
	}
	for _, st := range a.Trace.Steps {
		t.step(ctx, st)
	}
	run.End(trace.WithTimestamp(start.Add(a.Trace.Duration)))
}

func (t *Tracer) step(ctx context.Context, st text2sql.Step) {
	start := st.Start
	if start.IsZero() {
		return // not recorded on a timeline; the run's attributes count it
	}
	outcome := outcomeClass(st.Outcome)
	ctx, span := t.tracer.Start(ctx, "text2sql.stage "+string(st.Stage), trace.WithTimestamp(start), trace.WithAttributes(
		attribute.String("text2sql.stage", string(st.Stage)),
		attribute.Int("text2sql.attempt", st.Attempt),
		attribute.String("text2sql.outcome", outcome),
		attribute.Int("gen_ai.usage.input_tokens", st.Usage.InputTokens),
		attribute.Int("gen_ai.usage.output_tokens", st.Usage.OutputTokens),
	))
	if outcome == "error" || outcome == "failed" {
		span.SetStatus(codes.Error, outcome)
	}
	for _, c := range st.Calls {
		cs := c.Start
		if cs.IsZero() {
			cs = start
		}
		attrs := []attribute.KeyValue{
			attribute.String("text2sql.stage", string(st.Stage)),
			attribute.String("gen_ai.operation.name", "chat"),
			attribute.String("gen_ai.response.model", c.Model),
			attribute.Int("gen_ai.usage.input_tokens", c.Usage.InputTokens),
			attribute.Int("gen_ai.usage.output_tokens", c.Usage.OutputTokens),
			attribute.Int("text2sql.model.requests", c.Attempts),
		}
		if t.provider != "" {
			attrs = append(attrs, attribute.String("gen_ai.provider.name", t.provider))
		}
		_, call := t.tracer.Start(ctx, "chat "+c.Model, trace.WithSpanKind(trace.SpanKindClient), trace.WithTimestamp(cs),
			trace.WithAttributes(attrs...))
		call.End(trace.WithTimestamp(cs.Add(c.Duration)))
	}
	span.End(trace.WithTimestamp(start.Add(st.Duration)))
}

// outcomeClass is a Step.Outcome's first word ("ok", "error", "rejected",
// "declined", "reused", "stopped", "failed"): the rest may quote an
// error message, the judge's reason or SQL.
func outcomeClass(s string) string {
	if i := strings.IndexAny(s, " :("); i >= 0 {
		s = s[:i]
	}
	return s
}

// RateLimited implements server.Observer: an event on the current span.
func (t *Tracer) RateLimited(ctx context.Context, route string, code server.Code) {
	trace.SpanFromContext(ctx).AddEvent("text2sql.rate_limited", trace.WithAttributes(
		attribute.String("text2sql.route", route), attribute.String("text2sql.error.code", string(code))))
}

// Cache implements server.Observer: an event on the current span.
func (t *Tracer) Cache(ctx context.Context, route string, hit bool) {
	trace.SpanFromContext(ctx).AddEvent("text2sql.cache", trace.WithAttributes(
		attribute.String("text2sql.route", route), attribute.Bool("text2sql.cache.hit", hit)))
}

// Statement implements server.Observer: an event with the outcome, not
// the statement.
func (t *Tracer) Statement(ctx context.Context, e server.StatementEvent) {
	outcome := "ok"
	if e.Kind != "" {
		outcome = string(e.Kind)
	}
	trace.SpanFromContext(ctx).AddEvent("text2sql.statement", trace.WithAttributes(
		attribute.String("text2sql.source", e.Source), attribute.String("text2sql.outcome", outcome),
		attribute.Float64("text2sql.duration_ms", float64(e.Duration)/float64(time.Millisecond))))
}

// ToolCall implements server.Observer: an event on the current span.
func (t *Tracer) ToolCall(ctx context.Context, tool string, code server.Code) {
	attrs := []attribute.KeyValue{attribute.String("text2sql.tool", tool)}
	if code != "" {
		attrs = append(attrs, attribute.String("text2sql.error.code", string(code)))
	}
	trace.SpanFromContext(ctx).AddEvent("text2sql.mcp_tool_call", trace.WithAttributes(attrs...))
}

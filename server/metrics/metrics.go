// Package metrics exports what the text2sql service does as Prometheus
// metrics (github.com/prometheus/client_golang), all prefixed text2sql_.
//
// Add a *Metrics to server.Config.Observers and serve its Handler, on the
// API (server.Config.Metrics, behind the service's authentication) or on a
// separate address. Labels hold route patterns, stage names, error kinds
// and codes, never raw paths, principals or questions, so their
// cardinality stays bounded.
package metrics

import (
	"context"
	"net/http"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/server"
)

// Options configures New.
type Options struct {
	// Provider labels the model metrics ("gemini", "openai"); "" means
	// "unknown".
	Provider string
	// Registry receives the metrics and is what Handler serves; nil means
	// a new registry that also holds the Go runtime and process
	// collectors. A registry given here is used as it is.
	Registry *prometheus.Registry
}

// Metrics is a server.Observer that counts into Prometheus metrics.
type Metrics struct {
	server.NopObserver
	provider string
	reg      *prometheus.Registry

	requests    *prometheus.CounterVec   // route, method, status
	latency     *prometheus.HistogramVec // route
	runs        *prometheus.CounterVec   // route, status
	stages      *prometheus.HistogramVec // stage
	modelCalls  *prometheus.CounterVec   // stage, provider
	tokens      *prometheus.CounterVec   // stage, provider, direction
	statements  *prometheus.CounterVec   // source, outcome
	refusals    *prometheus.CounterVec   // kind
	rateLimited *prometheus.CounterVec   // route, code
	cache       *prometheus.CounterVec   // route, result
	toolCalls   *prometheus.CounterVec   // tool, code
}

// unmatched is the route label of requests no route matched, so unknown
// paths share one series.
const unmatched = "unmatched"

// New registers the metrics in opts.Registry. Errors: a registry that
// already holds metrics of the same names.
func New(opts Options) (*Metrics, error) {
	reg := opts.Registry
	if reg == nil {
		reg = prometheus.NewRegistry()
		reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	provider := opts.Provider
	if provider == "" {
		provider = "unknown"
	}
	m := &Metrics{
		provider:    provider,
		reg:         reg,
		requests:    counter("text2sql_requests_total", "HTTP requests by route pattern, method and status.", "route", "method", "status"),
		latency:     histogram("text2sql_request_duration_seconds", "HTTP request latency by route pattern.", "route"),
		runs:        counter("text2sql_pipeline_runs_total", "Pipeline runs (cache hits excluded) by route and answer status.", "route", "status"),
		stages:      histogram("text2sql_stage_duration_seconds", "Duration of each pipeline stage run.", "stage"),
		modelCalls:  counter("text2sql_model_calls_total", "Model calls by stage and provider.", "stage", "provider"),
		tokens:      counter("text2sql_model_tokens_total", "Model tokens by stage, provider and direction (input, output).", "stage", "provider", "direction"),
		statements:  counter("text2sql_statements_total", "Statements executed or refused, by source and outcome (ok or the error kind).", "source", "outcome"),
		refusals:    counter("text2sql_refusals_total", "Statements refused by the guard, by error kind.", "kind"),
		rateLimited: counter("text2sql_rate_limited_total", "Requests and MCP tool calls turned away by the rate limit, by route and code.", "route", "code"),
		cache:       counter("text2sql_cache_lookups_total", "Answer cache lookups by route and result (hit, miss).", "route", "result"),
		toolCalls:   counter("text2sql_mcp_tool_calls_total", "MCP tool calls by tool and code (ok or why it was refused).", "tool", "code"),
	}
	for _, c := range []prometheus.Collector{m.requests, m.latency, m.runs, m.stages, m.modelCalls, m.tokens,
		m.statements, m.refusals, m.rateLimited, m.cache, m.toolCalls} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// buckets are the latency histograms' bounds, in seconds: pipeline
// requests take from milliseconds (a cached answer) to minutes (several
// model calls and repairs).
var buckets = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120}

func counter(name, help string, labels ...string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
}

func histogram(name, help string, labels ...string) *prometheus.HistogramVec {
	return prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}, labels)
}

// Handler serves the registry in the Prometheus exposition format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

func route(r string) string {
	if r == "" {
		return unmatched
	}
	return r
}

// EndRequest implements server.Observer.
func (m *Metrics) EndRequest(_ context.Context, e server.RequestEvent) {
	r := route(e.Route)
	m.requests.WithLabelValues(r, methodLabel(e), strconv.Itoa(e.Status)).Inc()
	m.latency.WithLabelValues(r).Observe(e.Duration.Seconds())
}

// methodLabel is the request's method when a route matched; unmatched
// requests may carry any method, so they share one label.
func methodLabel(e server.RequestEvent) string {
	if e.Route == "" {
		return "other"
	}
	return e.Method
}

// PipelineRun implements server.Observer: stage durations, model calls
// and tokens come from the answer's Trace.
func (m *Metrics) PipelineRun(_ context.Context, e server.RunEvent) {
	status := string(text2sql.StatusFailed)
	if e.Answer != nil && e.Answer.Status != "" {
		status = string(e.Answer.Status)
	}
	m.runs.WithLabelValues(route(e.Route), status).Inc()
	if e.Answer == nil {
		return
	}
	for _, st := range e.Answer.Trace.Steps {
		stage := string(st.Stage)
		m.stages.WithLabelValues(stage).Observe(st.Duration.Seconds())
		if len(st.Calls) == 0 {
			continue
		}
		m.modelCalls.WithLabelValues(stage, m.provider).Add(float64(len(st.Calls)))
		m.tokens.WithLabelValues(stage, m.provider, "input").Add(float64(st.Usage.InputTokens))
		m.tokens.WithLabelValues(stage, m.provider, "output").Add(float64(st.Usage.OutputTokens))
	}
}

// Statement implements server.Observer.
func (m *Metrics) Statement(_ context.Context, e server.StatementEvent) {
	outcome := "ok"
	if e.Kind != "" {
		outcome = string(e.Kind)
	}
	m.statements.WithLabelValues(route(e.Source), outcome).Inc()
	if e.Kind.Refusal() {
		m.refusals.WithLabelValues(string(e.Kind)).Inc()
	}
}

// RateLimited implements server.Observer.
func (m *Metrics) RateLimited(_ context.Context, r string, code server.Code) {
	m.rateLimited.WithLabelValues(route(r), string(code)).Inc()
}

// Cache implements server.Observer.
func (m *Metrics) Cache(_ context.Context, r string, hit bool) {
	result := "miss"
	if hit {
		result = "hit"
	}
	m.cache.WithLabelValues(route(r), result).Inc()
}

// ToolCall implements server.Observer.
func (m *Metrics) ToolCall(_ context.Context, tool string, code server.Code) {
	c := "ok"
	if code != "" {
		c = string(code)
	}
	m.toolCalls.WithLabelValues(tool, c).Inc()
}

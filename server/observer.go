package server

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	text2sql "github.com/text2sql-go/text2sql"
)

// Observer is told what the service does, for metrics and traces
// (packages server/metrics and server/tracing implement it). Its methods
// run on the request's goroutine, so they must be quick and safe for
// concurrent use; a panic in one is recovered and logged, never failing
// the request. Embed NopObserver to implement only some of them.
//
// Events name routes by their pattern ("POST /v1/ask", "/mcp", "mcp ask"
// for an MCP tool), never by the raw path, and hold no credentials. The
// Answer of a RunEvent holds the question, the SQL, rows and prompts (in
// its Trace): an observer must not export them.
type Observer interface {
	// StartRequest is called when a request arrives, before
	// authentication. The context it returns, derived from ctx, is the
	// request's from then on (a tracer puts its span in it); nil keeps
	// ctx. r's headers are for trace propagation.
	StartRequest(ctx context.Context, r *http.Request) context.Context
	// EndRequest is called once the handler has returned, with the
	// context StartRequest returned.
	EndRequest(ctx context.Context, e RequestEvent)
	// PipelineRun is called after each Pipeline.Ask or Pipeline.Generate
	// the service ran; an answer served from the cache is not a run.
	PipelineRun(ctx context.Context, e RunEvent)
	// Statement is called for every statement executed or refused, as it
	// is audited.
	Statement(ctx context.Context, e StatementEvent)
	// RateLimited is called when a request or an MCP tool call is turned
	// away by the rate limit: code is CodeRateLimited, or
	// CodeRateLimitUnavailable when the limiter could not decide.
	RateLimited(ctx context.Context, route string, code Code)
	// Cache is called when the answer cache is consulted: hit true when
	// it held the answer.
	Cache(ctx context.Context, route string, hit bool)
	// ToolCall is called when an MCP tool call starts: code is "" when it
	// is let through, else why it was refused.
	ToolCall(ctx context.Context, tool string, code Code)
}

// RequestEvent describes one finished HTTP request.
type RequestEvent struct {
	// Route is the pattern that served the request, "POST /v1/ask" or
	// "/mcp"; "" when no route matched (404, 405, CORS preflight).
	Route    string
	Method   string
	Status   int           // the HTTP status sent
	Code     Code          // the error code sent, "" on success
	Duration time.Duration // from arrival to the handler's return
}

// RunEvent describes one pipeline run.
type RunEvent struct {
	Route string // "POST /v1/ask", "POST /v1/generate", "mcp ask", "mcp generate_sql"
	// Answer is the pipeline's answer, nil when it returned none. Read
	// it, do not change it; its Trace is the source of stage timings,
	// tokens and model calls.
	Answer *text2sql.Answer
	// Err is the pipeline's error, nil on success. Its text may quote the
	// question or SQL: record its presence, not its message.
	Err error
}

// StatementEvent describes one executed or refused statement.
type StatementEvent struct {
	Source string // the route or MCP tool that ran it, as in AuditEvent.Source
	// Kind is the error kind of a refused or failed statement, "" when it
	// ran; Kind.Refusal() tells a refusal from a failure.
	Kind     text2sql.ErrorKind
	Duration time.Duration // the executor's, 0 for a refusal
}

// NopObserver does nothing; embed it in an Observer that implements only
// some of the methods.
type NopObserver struct{}

// StartRequest implements Observer and returns ctx.
func (NopObserver) StartRequest(ctx context.Context, _ *http.Request) context.Context { return ctx }

// EndRequest implements Observer.
func (NopObserver) EndRequest(context.Context, RequestEvent) {}

// PipelineRun implements Observer.
func (NopObserver) PipelineRun(context.Context, RunEvent) {}

// Statement implements Observer.
func (NopObserver) Statement(context.Context, StatementEvent) {}

// RateLimited implements Observer.
func (NopObserver) RateLimited(context.Context, string, Code) {}

// Cache implements Observer.
func (NopObserver) Cache(context.Context, string, bool) {}

// ToolCall implements Observer.
func (NopObserver) ToolCall(context.Context, string, Code) {}

// observers calls every configured Observer, recovering and logging
// their panics.
type observers struct {
	list []Observer
	log  *slog.Logger
}

func newObservers(list []Observer, log *slog.Logger) observers {
	o := observers{log: log}
	for _, ob := range list {
		if ob != nil {
			o.list = append(o.list, ob)
		}
	}
	return o
}

// call runs f on each observer; hook names the method in a panic's log
// record.
func (o observers) call(ctx context.Context, hook string, f func(Observer)) {
	for _, ob := range o.list {
		o.guard(ctx, hook, ob, f)
	}
}

func (o observers) guard(ctx context.Context, hook string, ob Observer, f func(Observer)) {
	defer func() {
		if v := recover(); v != nil {
			o.log.LogAttrs(ctx, slog.LevelError, "observer panicked", slog.String("request_id", requestID(ctx)),
				slog.String("hook", hook), slog.String("observer", fmt.Sprintf("%T", ob)), slog.String("panic", fmt.Sprint(v)))
		}
	}()
	f(ob)
}

func (o observers) startRequest(ctx context.Context, r *http.Request) context.Context {
	for _, ob := range o.list {
		o.guard(ctx, "StartRequest", ob, func(ob Observer) {
			if next := ob.StartRequest(ctx, r); next != nil {
				ctx = next
			}
		})
	}
	return ctx
}

func (o observers) endRequest(ctx context.Context, e RequestEvent) {
	if len(o.list) > 0 {
		o.call(ctx, "EndRequest", func(ob Observer) { ob.EndRequest(ctx, e) })
	}
}

func (o observers) pipelineRun(ctx context.Context, e RunEvent) {
	if len(o.list) > 0 {
		o.call(ctx, "PipelineRun", func(ob Observer) { ob.PipelineRun(ctx, e) })
	}
}

func (o observers) statement(ctx context.Context, e StatementEvent) {
	if len(o.list) > 0 {
		o.call(ctx, "Statement", func(ob Observer) { ob.Statement(ctx, e) })
	}
}

func (o observers) rateLimited(ctx context.Context, route string, code Code) {
	if len(o.list) > 0 {
		o.call(ctx, "RateLimited", func(ob Observer) { ob.RateLimited(ctx, route, code) })
	}
}

func (o observers) cache(ctx context.Context, route string, hit bool) {
	if len(o.list) > 0 {
		o.call(ctx, "Cache", func(ob Observer) { ob.Cache(ctx, route, hit) })
	}
}

func (o observers) toolCall(ctx context.Context, tool string, code Code) {
	if len(o.list) > 0 {
		o.call(ctx, "ToolCall", func(ob Observer) { ob.ToolCall(ctx, tool, code) })
	}
}

package server

import (
	"context"
	"errors"
	"log/slog"

	text2sql "github.com/text2sql-go/text2sql"
)

// What happens when a part of the service fails: the audit log (fail
// closed), the database, the model's capacity. Every route and MCP tool
// maps the same failure to the same code here.

// errAuditUnavailable is the failure of an audit record under
// fail-closed audit (Config.AuditFailOpen false): what the request would
// have delivered is withheld.
var errAuditUnavailable = errors.New("server: the audit log cannot be written")

// AuditPinger is an Auditor that can tell whether a record could be
// written now (SQLAuditor). Unless Config.AuditFailOpen is set, the
// service pings it before running a statement or recording a vote, and
// GET /health reports it as the check "audit".
type AuditPinger interface {
	Ping(ctx context.Context) error
}

// auditReady returns nil, or errAuditUnavailable when audit is fail-closed
// and the auditor cannot be reached: the statement must not run.
func (s *service) auditReady(ctx context.Context) error {
	p, ok := s.audit.(AuditPinger)
	if !ok || s.cfg.AuditFailOpen {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), probeTimeout)
	defer cancel()
	if err := p.Ping(ctx); err != nil {
		s.log.LogAttrs(ctx, slog.LevelError, "audit unavailable; nothing runs", slog.String("request_id", requestID(ctx)), slog.String("error", err.Error()))
		return errAuditUnavailable
	}
	return nil
}

// audited sends e to the auditor. A failure is logged and, unless
// Config.AuditFailOpen is set, returned as errAuditUnavailable: the caller
// then withholds the rows or the outcome it audited.
func (s *service) audited(ctx context.Context, e AuditEvent) error {
	err := s.audit.Audit(ctx, e)
	if err == nil {
		return nil
	}
	s.log.LogAttrs(ctx, slog.LevelError, "audit failed", slog.String("request_id", e.RequestID), slog.String("error", err.Error()))
	if s.cfg.AuditFailOpen {
		return nil
	}
	return errAuditUnavailable
}

// auditProbe adds the auditor to the readiness probes when audit is
// fail-closed and it can be pinged: a replica that would refuse every
// statement is not ready. probes is copied, never changed.
func auditProbe(probes map[string]Probe, a Auditor, failOpen bool) map[string]Probe {
	p, ok := a.(AuditPinger)
	if !ok || failOpen {
		return probes
	}
	out := map[string]Probe{"audit": p.Ping}
	for k, v := range probes {
		out[k] = v
	}
	return out
}

// failed maps an error of a request's work to its response and logs it:
// the one mapping of failures to codes, so that the database down, the
// audit log unwritable or the time limit reached answer alike on /v1/run,
// /v1/ask, feedback, conversations and the MCP tools.
func (s *service) failed(ctx context.Context, err error) *apiError {
	code, msg := pipelineError(err)
	level := slog.LevelError
	switch ctx.Err() {
	case context.DeadlineExceeded:
		code, msg, level = CodeTimeout, "the request took longer than the time limit", slog.LevelWarn
	case context.Canceled:
		// The client went away; nobody reads the answer.
		code, msg, level = CodeTimeout, "the request was cancelled", slog.LevelInfo
	}
	s.log.LogAttrs(ctx, level, "request failed", slog.String("request_id", requestID(ctx)),
		slog.String("code", string(code)), slog.String("error", err.Error()))
	return &apiError{code: code, msg: msg, retryAfter: retryAfter(code)}
}

// retryAfter is the Retry-After of a failure worth retrying soon: a
// dependency that is down usually comes back within seconds (a restart,
// a failover).
func retryAfter(code Code) int {
	switch code {
	case CodeExecutor, CodeAuditUnavailable, CodeOverloaded:
		return 1
	}
	return 0
}

// partFailure maps the failure of a part of the service (the audit log,
// the database) for pipelineError; ok is false for any other error.
func partFailure(err error) (Code, string, bool) {
	switch {
	case errors.Is(err, errAuditUnavailable):
		return CodeAuditUnavailable, "the audit log cannot be written, so nothing runs; try again later", true
	case errors.Is(err, text2sql.ErrForbidden):
		return CodeForbidden, forbiddenMessage, true
	case errors.Is(err, text2sql.ErrExecutor):
		return CodeExecutor, "the database cannot be reached; try again later", true
	}
	return "", "", false
}

// askSlot takes one of the MaxConcurrentAsks slots, or answers 503
// overloaded at once: waiting would hold the connection, its file
// descriptor and memory the cap exists to bound. 503 and not 429: the
// limit is this replica's capacity, not the caller's budget, so a client
// or load balancer may retry it elsewhere.
func (s *service) askSlot() (release func(), aerr *apiError) {
	if s.asks == nil {
		return func() {}, nil
	}
	select {
	case s.asks <- struct{}{}:
		return func() { <-s.asks }, nil
	default:
		return nil, &apiError{code: CodeOverloaded, msg: "this replica is answering as many questions as it may at once; try again shortly", retryAfter: retryAfter(CodeOverloaded)}
	}
}

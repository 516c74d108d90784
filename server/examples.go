package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/feedback"
	"github.com/text2sql-go/text2sql/identity"
	"github.com/text2sql-go/text2sql/wire"
)

// The error codes of the review routes and feedback's quota.
const (
	CodeNotReviewer Code = "not_reviewer" // 403: only a reviewer may list, approve or reject examples
	CodeVoteQuota   Code = "vote_quota"   // 429: the principal's vote quota is spent (feedback.Quota)
)

// ExampleListBody is the answer of GET /v1/examples: the review queue
// (pending or flagged examples), or every example with ?all=true.
type ExampleListBody struct {
	RequestID string             `json:"request_id"`
	Examples  []feedback.Example `json:"examples"`
}

// ExampleReviewBody is the answer of POST /v1/examples/{id}/approve and
// /reject: the example as the review left it.
type ExampleReviewBody struct {
	RequestID string           `json:"request_id"`
	Example   feedback.Example `json:"example"`
}

// ParseReviewers returns a Config.Reviewer from a comma-separated list of
// who reviews: a principal ID ("carol", a static token's name or a JWT's
// subject), "claim:NAME=VALUE" (a claim equal to VALUE, or a list claim
// holding it, e.g. claim:roles=reviewer) or "role:ROLE" (the principal
// runs as database role ROLE: role gives that role, as the executor's
// --run-as does; required for role: entries). Errors: an empty entry or
// a role: entry without role.
func ParseReviewers(spec string, role func(*Principal) (string, error)) (func(*Principal) bool, error) {
	var ids, roles []string
	claims := map[string][]string{}
	for _, e := range strings.Split(spec, ",") {
		e = strings.TrimSpace(e)
		kind, arg, _ := strings.Cut(e, ":")
		switch {
		case e == "" || (kind == "claim" || kind == "role") && arg == "":
			return nil, fmt.Errorf("server: reviewers: empty entry in %q", spec)
		case kind == "claim":
			name, value, ok := strings.Cut(arg, "=")
			if !ok || name == "" || value == "" {
				return nil, fmt.Errorf("server: reviewers: %q is not claim:NAME=VALUE", e)
			}
			claims[name] = append(claims[name], value)
		case kind == "role":
			if role == nil {
				return nil, fmt.Errorf("server: reviewers: %q needs a role per principal (--run-as claim:NAME or map:FILE)", e)
			}
			roles = append(roles, arg)
		default:
			ids = append(ids, e)
		}
	}
	return func(p *Principal) bool {
		if p == nil {
			return false
		}
		if slices.Contains(ids, p.ID) {
			return true
		}
		for name, values := range claims {
			if claimHolds(p.Claims[name], values) {
				return true
			}
		}
		if len(roles) > 0 {
			r, err := role(p)
			return err == nil && slices.Contains(roles, r)
		}
		return false
	}, nil
}

// claimHolds reports whether claim (a string or a list of strings) is or
// holds one of values.
func claimHolds(claim any, values []string) bool {
	switch c := claim.(type) {
	case string:
		return slices.Contains(values, c)
	case []any:
		for _, e := range c {
			if s, ok := e.(string); ok && slices.Contains(values, s) {
				return true
			}
		}
	}
	return false
}

// isReviewer reports whether the principal in ctx is a reviewer.
func (s *service) isReviewer(ctx context.Context) bool {
	p, ok := identity.PrincipalFrom(ctx)
	return ok && s.cfg.Reviewer != nil && s.cfg.Reviewer(p)
}

// exampleRoutes registers the review routes behind get, the service's
// authenticated and rate-limited wrapper of bodiless routes.
func (s *service) exampleRoutes(mux *http.ServeMux, get func(func(context.Context, *http.Request) (any, *apiError)) http.Handler) {
	mux.Handle("GET /v1/examples", get(func(ctx context.Context, r *http.Request) (any, *apiError) {
		return s.listExamples(ctx, r.URL.Query().Get("all") == "true")
	}))
	for _, v := range []feedback.Verdict{feedback.Approved, feedback.Rejected} {
		mux.Handle("POST /v1/examples/{id}/"+string(v), get(func(ctx context.Context, r *http.Request) (any, *apiError) {
			return s.reviewExample(ctx, r.PathValue("id"), v)
		}))
	}
}

// reviewRoutes are the routes exampleRoutes registers, for the OpenAPI test.
var reviewRoutes = []string{"GET /v1/examples", "POST /v1/examples/{id}/approve", "POST /v1/examples/{id}/reject"}

// reviewable is the error of a review route the caller may not use here.
func (s *service) reviewable(ctx context.Context) *apiError {
	if s.cfg.Feedback == nil {
		return &apiError{code: CodeNotConfigured, msg: "feedback is not enabled on this service"}
	}
	if !s.isReviewer(ctx) {
		return &apiError{code: CodeNotReviewer, msg: "only a reviewer may review examples"}
	}
	return nil
}

func (s *service) listExamples(ctx context.Context, all bool) (*ExampleListBody, *apiError) {
	if aerr := s.reviewable(ctx); aerr != nil {
		return nil, aerr
	}
	exs, err := s.cfg.Feedback.Store.Examples(ctx)
	if err != nil {
		return nil, s.exampleStoreFailed(ctx, err)
	}
	out := &ExampleListBody{RequestID: requestID(ctx), Examples: []feedback.Example{}}
	for _, ex := range exs {
		if all || ex.InQueue() {
			out.Examples = append(out.Examples, ex)
		}
	}
	return out, nil
}

// reviewExample approves or rejects the example id as the caller, and
// audits it: Outcome "example approve" or "example reject", Message who
// proposed it and its votes.
func (s *service) reviewExample(ctx context.Context, id string, v feedback.Verdict) (*ExampleReviewBody, *apiError) {
	if aerr := s.reviewable(ctx); aerr != nil {
		return nil, aerr
	}
	if err := s.auditReady(ctx); err != nil {
		return nil, s.failed(ctx, err)
	}
	p, _ := identity.PrincipalFrom(ctx)
	review := s.cfg.Feedback.Reject
	if v == feedback.Approved {
		review = s.cfg.Feedback.Approve
	}
	ex, err := review(ctx, id, p.ID)
	var serr *text2sql.SQLError
	switch {
	case errors.Is(err, feedback.ErrNotFound):
		return nil, &apiError{code: CodeNotFound, msg: "no such example"}
	case errors.As(err, &serr):
		return nil, &apiError{code: CodeRefusedSQL, msg: "the SQL cannot become a verified example: " + serr.Error()}
	case err != nil:
		return nil, s.exampleStoreFailed(ctx, err)
	}
	e := AuditEvent{Time: time.Now(), RequestID: requestID(ctx), Source: "POST /v1/examples/{id}/" + string(v),
		Question: ex.Question, SQL: ex.SQL, Outcome: "example " + string(v), Principal: p.ID, Method: p.Method,
		Message: fmt.Sprintf("%s proposed by %s; %d up, %d down", ex.ID, feedback.Who(ex.By), ex.Up, ex.Down)}
	if err := s.audited(ctx, e); err != nil {
		// The review stands (the auditor was reached just before), but its
		// outcome is not reported as done.
		return nil, s.failed(ctx, err)
	}
	return &ExampleReviewBody{RequestID: requestID(ctx), Example: *ex}, nil
}

func (s *service) exampleStoreFailed(ctx context.Context, err error) *apiError {
	if ctx.Err() == context.DeadlineExceeded {
		return &apiError{code: CodeTimeout, msg: "the request took longer than the time limit"}
	}
	s.log.LogAttrs(ctx, slog.LevelError, "example store failed", slog.String("request_id", requestID(ctx)), slog.String("error", err.Error()))
	return &apiError{code: CodeInternal, msg: "the example store could not be used"}
}

// voteMessage says in the audit what a vote did: the example and its
// status and votes, or the examples flagged.
func voteMessage(out *feedback.Outcome) string {
	if out.Example == nil {
		return "flagged: " + strings.Join(out.Flagged, ", ")
	}
	ex := out.Example
	msg := fmt.Sprintf("%s %s; %d up, %d down", ex.ID, ex.Status, ex.Up, ex.Down)
	if out.Conflict {
		msg += "; conflicts with " + feedback.Who(ex.By) + "'s SQL, flagged for review"
	}
	return msg
}

// personal reports whether b reused an example that serves only its
// author (not trusted): such an answer is not put in the answer cache,
// whose entries other principals may share.
func (s *service) personal(ctx context.Context, b *wire.Answer) bool {
	if s.cfg.Feedback == nil || b.ReusedExample == "" {
		return false
	}
	ex, err := s.cfg.Feedback.Store.Example(ctx, b.ReusedExample)
	return err != nil || (ex != nil && ex.Status != feedback.StatusTrusted)
}

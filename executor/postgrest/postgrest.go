// Package postgrest is a text2sql.Executor that runs each statement
// through a sandbox function of the database over PostgREST's RPC
// interface, as Supabase exposes it: POST {BaseURL}/rpc/{Function} with
// the statement as the function's argument, the project's anon key in
// the apikey header and the caller's own access token as the bearer
// token. The database then decides, with the caller's role and claims,
// what the statement may read; the service holds no database password.
//
// Every statement is checked by a text2sql.Guard first (the PostgreSQL
// statement check): a refused statement never reaches the endpoint. The
// Guard must know the database: build it from the server's catalog
// (postgres.LoadGuard on a connection to the same database, or
// postgres.CatalogFrom of CatalogQuery's and ObjectsQuery's rows, then
// Guard.Scoped), so that no name the statement writes or implies reaches
// the database's own functions, operators or tainted types, and only the
// exposed relations are read; the text sent is the Guard's Prepare (the
// relations qualified) when it has one. A Guard over the built-in catalog
// alone (postgres.NewGuard(nil, nil)) knows none of the database's own
// objects and cannot refuse them. This path cannot pin the search path
// or confirm the names in the statement's transaction as the postgres
// executor does: create the sandbox function with SET search_path set to
// the Guard's (Guard.SearchPath, then pg_temp) and give the role it runs
// as a statement_timeout (text2sql grant prints one). The package needs
// no cgo and no database driver.
package postgrest

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/executor"
	"github.com/text2sql-go/text2sql/executor/internal/execkit"
	"github.com/text2sql-go/text2sql/guard"
	"github.com/text2sql-go/text2sql/identity"
	"github.com/text2sql-go/text2sql/lint"
)

// Options configures New.
type Options struct {
	// BaseURL is the PostgREST root: "https://<project>.supabase.co/rest/v1"
	// on Supabase, "http://localhost:3000" for PostgREST itself. Required.
	BaseURL string
	// Function is the sandbox function's name ("run_sql"), as PostgREST
	// exposes it. Required.
	Function string
	// Param is the name of the function's text argument ("sql" when
	// empty).
	Param string
	// AnonKey is the project's public anon key, sent as the apikey header,
	// and as the bearer token of calls whose context carries no caller
	// token (identity.WithBearerToken): they run as the anon role.
	AnonKey string
	// Guard checks every statement before it is sent (see the package
	// doc for which). Required.
	Guard text2sql.Guard
	// Shape names the keys of the function's answer (see
	// executor.FunctionShape).
	Shape executor.FunctionShape
	// HTTPClient sends the requests (http.DefaultClient when nil).
	HTTPClient *http.Client
	// MaxRows caps the rows kept (default executor.DefaultMaxRows; the
	// function should cap them itself); Timeout bounds one call (default
	// executor.DefaultTimeout); MaxResultBytes bounds the answer's body
	// in bytes (default executor.DefaultMaxResultBytes), read no further;
	// MaxSQLLength bounds the statement (default
	// executor.DefaultMaxSQLLength).
	MaxRows        int
	Timeout        time.Duration
	MaxResultBytes int
	MaxSQLLength   int
}

// Executor calls the sandbox function over HTTP. It is safe for
// concurrent use.
type Executor struct {
	opts     Options
	endpoint string
	closed   atomic.Bool
}

var _ text2sql.Executor = (*Executor)(nil)

// New returns an Executor. It makes no request. A missing BaseURL,
// Function or Guard, a BaseURL that is not an absolute http(s) URL, or a
// negative limit is an error wrapping text2sql.ErrInvalidConfig.
func New(opts Options) (*Executor, error) {
	u, err := url.Parse(strings.TrimRight(opts.BaseURL, "/"))
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return nil, fmt.Errorf("%w: postgrest: BaseURL %q is not an absolute http(s) URL", text2sql.ErrInvalidConfig, opts.BaseURL)
	case opts.Function == "" || strings.ContainsAny(opts.Function, "/?#"):
		return nil, fmt.Errorf("%w: postgrest: Function %q is not a function name", text2sql.ErrInvalidConfig, opts.Function)
	case opts.Guard == nil:
		return nil, fmt.Errorf("%w: postgrest: Guard is required (postgres.LoadGuard)", text2sql.ErrInvalidConfig)
	case opts.MaxRows < 0 || opts.Timeout < 0 || opts.MaxResultBytes < 0 || opts.MaxSQLLength < 0:
		return nil, fmt.Errorf("%w: postgrest: negative limit in Options", text2sql.ErrInvalidConfig)
	}
	opts.Param = cmp.Or(opts.Param, "sql")
	opts.MaxResultBytes = cmp.Or(opts.MaxResultBytes, executor.DefaultMaxResultBytes)
	opts.MaxSQLLength = cmp.Or(opts.MaxSQLLength, executor.DefaultMaxSQLLength)
	if opts.HTTPClient == nil {
		opts.HTTPClient = http.DefaultClient
	}
	return &Executor{opts: opts, endpoint: u.String() + "/rpc/" + url.PathEscape(opts.Function)}, nil
}

// Check runs the Guard: nil or a *text2sql.SQLError refusal.
func (e *Executor) Check(ctx context.Context, query string) error {
	if err := execkit.Ready(ctx, &e.closed); err != nil {
		return err
	}
	if len(query) > e.opts.MaxSQLLength {
		return &text2sql.SQLError{Kind: text2sql.KindTooLarge, Message: fmt.Sprintf("the statement is %d bytes; the limit is %d", len(query), e.opts.MaxSQLLength)}
	}
	if err := e.opts.Guard.Check(ctx, query); err != nil {
		return err
	}
	if err := guard.BackslashInString(query); err != nil {
		return err
	}
	return nil
}

// Execute checks req.SQL and calls the function with it. Refusals, the
// function's own failures (ok false), errors the database raised in the
// call (PostgREST's {code, message, hint} with an SQLSTATE), the time
// limit and an answer over MaxResultBytes are data in Result.Error.
//
// The error return is non-nil when the executor cannot work: closed, the
// endpoint unreachable or answering 5xx, an answer not of the Shape, ctx
// done (ctx.Err()), or the caller refused: HTTP 401 or 403 (an expired or
// invalid token, a role without EXECUTE) wraps text2sql.ErrForbidden.
func (e *Executor) Execute(ctx context.Context, req text2sql.ExecuteRequest) (*text2sql.Result, error) {
	res, done, err := execkit.Begin(ctx, &e.closed)
	if err != nil {
		return nil, err
	}
	if err := e.Check(ctx, req.SQL); err != nil {
		var se *text2sql.SQLError
		if !errors.As(err, &se) {
			return nil, err
		}
		res.Error = se
		return done()
	}
	// A Guard that qualifies relations gives the text to send.
	sql := req.SQL
	if p, ok := e.opts.Guard.(interface {
		Prepare(string) (string, *text2sql.SQLError)
	}); ok {
		if text, se := p.Prepare(sql); se == nil {
			sql = text
		}
	}
	maxRows, timeout := execkit.Limits(req, e.opts.MaxRows, e.opts.Timeout)
	status, body, err := e.post(ctx, sql, timeout)
	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case errors.Is(err, context.DeadlineExceeded):
		res.Error = execkit.TimeoutError(timeout)
		return done()
	case errors.Is(err, execkit.ErrTooLarge):
		res.Error = &text2sql.SQLError{Kind: text2sql.KindTooLarge, Message: err.Error() + " (Options.MaxResultBytes)"}
		return done()
	case err != nil:
		return nil, fmt.Errorf("postgrest: %s: %w", e.opts.Function, err)
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return nil, fmt.Errorf("%w: postgrest: %s refused the caller (HTTP %d): %s", text2sql.ErrForbidden, e.opts.Function, status, apiMessage(body))
	case status >= 500:
		return nil, fmt.Errorf("postgrest: %s: HTTP %d: %s", e.opts.Function, status, apiMessage(body))
	case status >= 400:
		if se := apiError(body); se != nil {
			res.Error = se
			return done()
		}
		return nil, fmt.Errorf("postgrest: %s: HTTP %d: %s", e.opts.Function, status, apiMessage(body))
	}
	out, err := executor.DecodeFunctionResult(body, e.opts.Shape, maxRows)
	if err != nil {
		return nil, fmt.Errorf("postgrest: %s: %w", e.opts.Function, err)
	}
	res.Columns, res.Rows, res.Truncated, res.Error = out.Columns, out.Rows, out.Truncated, out.Error
	return done()
}

// post sends the call and returns the status and the bounded body.
func (e *Executor) post(ctx context.Context, query string, timeout time.Duration) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	body, err := json.Marshal(map[string]string{e.opts.Param: query})
	if err != nil {
		return 0, nil, err
	}
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, e.endpoint, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json")
	token, ok := identity.BearerTokenFrom(ctx)
	if !ok {
		token = e.opts.AnonKey
	}
	if e.opts.AnonKey != "" {
		r.Header.Set("apikey", e.opts.AnonKey)
	}
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := e.opts.HTTPClient.Do(r)
	if err != nil {
		if ctx.Err() != nil {
			return 0, nil, ctx.Err()
		}
		// The transport's message names the endpoint, never the token.
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := execkit.ReadBounded(resp.Body, e.opts.MaxResultBytes)
	if err != nil && ctx.Err() != nil {
		return 0, nil, ctx.Err()
	}
	return resp.StatusCode, b, err
}

// apiBody is PostgREST's error answer.
type apiBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Details string `json:"details"`
	Hint    string `json:"hint"`
}

// apiError is the statement's failure in a PostgREST error answer whose
// code is an SQLSTATE (five characters, not PostgREST's own PGRST…), or
// nil.
func apiError(b []byte) *text2sql.SQLError {
	var a apiBody
	if json.Unmarshal(b, &a) != nil || len(a.Code) != 5 || strings.HasPrefix(a.Code, "PGRST") || a.Message == "" {
		return nil
	}
	msg := a.Message
	if a.Details != "" {
		msg += " (" + a.Details + ")"
	}
	return &text2sql.SQLError{Kind: lint.ClassifySQLState(a.Code, a.Message), Message: msg, SQLState: a.Code, Hint: a.Hint}
}

// maxMessage bounds the part of an error answer an error repeats.
const maxMessage = 300

// apiMessage is the readable part of an error answer.
func apiMessage(b []byte) string {
	var a apiBody
	if json.Unmarshal(b, &a) == nil && a.Message != "" {
		if a.Code != "" {
			return a.Message + " [" + a.Code + "]"
		}
		return a.Message
	}
	s := strings.TrimSpace(string(b))
	if len(s) > maxMessage {
		s = s[:maxMessage] + "…"
	}
	return s
}

// Close marks the executor closed.
func (e *Executor) Close() error {
	e.closed.Store(true)
	return nil
}

package postgres

import (
	"cmp"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/executor"
	"github.com/text2sql-go/text2sql/executor/internal/execkit"
	"github.com/text2sql-go/text2sql/lint"
	"github.com/text2sql-go/text2sql/schema"
)

// FunctionOptions configures NewFunction. Zero values mean the defaults.
type FunctionOptions struct {
	// Name is the sandbox function, optionally schema-qualified
	// ("public.run_sql"), exactly as created (each part is quoted). It
	// takes the statement as its only argument, of type text, and returns
	// a JSON object of the shape Shape describes. Required.
	Name string
	// Shape names the keys of the function's answer (see
	// executor.FunctionShape; zero: ok, columns, rows, row_count,
	// truncated, error).
	Shape executor.FunctionShape
	// Guard checks every statement before the function is called; a
	// refusal never reaches the database. Nil: NewGuard over the server's
	// catalog with AllowFunctions, scoped (Guard.Scoped) to the session's
	// search path and schema, so the function reads only those relations,
	// qualified, under that search path. A Guard given here is used as it
	// is: scope it so, or it decides names as if every schema were on the
	// search path and leaves relations to the function.
	Guard *Guard
	// AllowFunctions extends that Guard's allow-list (see
	// Options.AllowFunctions); unused when Guard is set.
	AllowFunctions []string
	// Role, RoleFor and Claims choose the role the function is called as
	// and the claims its policies see, as Options' fields of the same
	// names do for Executor (the role needs EXECUTE on the function).
	Role    string
	RoleFor RoleFunc
	Claims  bool
	// MaxRows caps the rows kept of the function's answer (default
	// executor.DefaultMaxRows); the function should cap them itself.
	MaxRows int
	// Timeout bounds one call (default executor.DefaultTimeout): the
	// transaction's statement_timeout, and the client's limit.
	Timeout time.Duration
	// MaxResultBytes bounds the function's answer in bytes (default
	// executor.DefaultMaxResultBytes), checked on the server before the
	// answer is sent: a larger one is a KindTooLarge result.
	MaxResultBytes int
	// MaxSQLLength bounds the statement text in bytes (default
	// DefaultMaxSQLLength).
	MaxSQLLength int
}

// Function is a text2sql.Executor that runs each statement through a
// sandbox function of the database (SELECT f($1)), the path of projects
// whose database decides, in a function it owns, how a caller's SQL runs
// — under which role, with which caps, into which audit table — so the
// service itself holds no right to read the data. The statement is
// checked by the Guard first. The call runs in a transaction of its own
// (not read-only: the function may write its audit log) that reads text
// as the check did (standard_conforming_strings on, UTF-8), with the
// statement_timeout, role and claims set transaction-local and the
// check's probe of function names run first (see Executor), and is
// committed; the connection's session settings are reset afterwards. It
// is safe for concurrent use.
type Function struct {
	db     *sql.DB
	opts   FunctionOptions
	call   string // SELECT … f($1) …
	closed atomic.Bool
}

var _ text2sql.Executor = (*Function)(nil)

// NewFunction returns a Function over db (pgx's driver). It loads the
// server's catalog for the Guard when FunctionOptions.Guard is nil. An
// empty or malformed Name, or a negative limit, is an error wrapping
// text2sql.ErrInvalidConfig. db stays the caller's to close.
func NewFunction(ctx context.Context, db *sql.DB, opts FunctionOptions) (*Function, error) {
	if db == nil {
		return nil, fmt.Errorf("%w: postgres: nil *sql.DB", text2sql.ErrInvalidConfig)
	}
	if opts.MaxRows < 0 || opts.Timeout < 0 || opts.MaxResultBytes < 0 || opts.MaxSQLLength < 0 {
		return nil, fmt.Errorf("%w: postgres: negative limit in FunctionOptions", text2sql.ErrInvalidConfig)
	}
	parts := strings.Split(opts.Name, ".")
	if opts.Name == "" || len(parts) > 2 || slices.Contains(parts, "") {
		return nil, fmt.Errorf("%w: postgres: FunctionOptions.Name %q is not a function name (name or schema.name)", text2sql.ErrInvalidConfig, opts.Name)
	}
	opts.MaxResultBytes = cmp.Or(opts.MaxResultBytes, executor.DefaultMaxResultBytes)
	opts.MaxSQLLength = cmp.Or(opts.MaxSQLLength, DefaultMaxSQLLength)
	if opts.Guard == nil {
		g, err := LoadGuard(ctx, db, opts.AllowFunctions)
		if err != nil {
			return nil, err
		}
		opts.Guard = g
	}
	// The answer's size is decided on the server, before it is sent.
	call := "SELECT octet_length(r), CASE WHEN octet_length(r) <= $2 THEN r END FROM (SELECT " +
		pgx.Identifier(parts).Sanitize() + "($1)::text AS r) AS answer"
	return &Function{db: db, opts: opts, call: call}, nil
}

// LoadGuard returns the Guard over the catalog of the server db is
// connected to (LoadCatalog) with allow added to its allow-list, scoped
// (Guard.Scoped) to the session's search path (its existing schemas) and
// schema (schema.InspectPostgres of every non-system schema). It is the
// Guard for paths that run statements elsewhere (a sandbox function, over
// PostgREST or MCP): the session that runs them must set search_path to
// that path (Guard.SearchPath). Errors are the catalog queries'.
func LoadGuard(ctx context.Context, db *sql.DB, allow []string) (*Guard, error) {
	cat, err := LoadCatalog(ctx, db)
	if err != nil {
		return nil, err
	}
	path, err := sessionSearchPath(ctx, db)
	if err != nil {
		return nil, err
	}
	sch, err := schema.InspectPostgres(ctx, db, nil)
	if err != nil {
		return nil, err
	}
	return NewGuard(cat, allow).Scoped(path, sch), nil
}

// Check runs the Guard: nil or a *text2sql.SQLError refusal.
func (f *Function) Check(ctx context.Context, query string) error {
	if err := execkit.Ready(ctx, &f.closed); err != nil {
		return err
	}
	if len(query) > f.opts.MaxSQLLength {
		return &text2sql.SQLError{Kind: text2sql.KindTooLarge, Message: fmt.Sprintf("the statement is %d bytes; the limit is %d", len(query), f.opts.MaxSQLLength)}
	}
	return f.opts.Guard.Check(ctx, query)
}

// Execute checks req.SQL and calls the function with it. Refusals, the
// function's own failures (ok false), errors the server raises in the
// call, the time limit and an answer over MaxResultBytes are data in
// Result.Error. The error return is non-nil when the executor cannot work:
// closed, no connection, a role or claims that cannot be set (see
// Options.RoleFor), an answer that is not of the Shape, or ctx done.
func (f *Function) Execute(ctx context.Context, req text2sql.ExecuteRequest) (*text2sql.Result, error) {
	res, done, err := execkit.Begin(ctx, &f.closed)
	if err != nil {
		return nil, err
	}
	if len(req.SQL) > f.opts.MaxSQLLength {
		res.Error = &text2sql.SQLError{Kind: text2sql.KindTooLarge, Message: fmt.Sprintf("the statement is %d bytes; the limit is %d", len(req.SQL), f.opts.MaxSQLLength)}
		return done()
	}
	ch, se := f.opts.Guard.prepare(req.SQL)
	if se != nil {
		res.Error = se
		return done()
	}
	maxRows, timeout := execkit.Limits(req, f.opts.MaxRows, f.opts.Timeout)
	sess, err := caller{f.opts.Role, f.opts.RoleFor, f.opts.Claims}.sessionFor(ctx)
	if err != nil {
		return nil, err
	}
	answer, se, err := f.callFunction(ctx, sess, ch.text, ch.probe, timeout)
	if err != nil {
		return nil, err
	}
	if se != nil {
		res.Error = se
		return done()
	}
	out, err := executor.DecodeFunctionResult(answer, f.opts.Shape, maxRows)
	if err != nil {
		return nil, fmt.Errorf("postgres: %s: %w", f.opts.Name, err)
	}
	res.Columns, res.Rows, res.Truncated, res.Error = out.Columns, out.Rows, out.Truncated, out.Error
	return done()
}

// callFunction runs the call in its own transaction on a connection of
// its own and returns the function's answer, or the statement's failure
// as data. The transaction reads text as the check did
// (standard_conforming_strings on, UTF-8), runs the resolution probe
// (probe.go) before the call, and is committed, for the
// function's audit; the connection's session settings and advisory locks
// are then reset, so nothing a call leaves outlives it.
func (f *Function) callFunction(ctx context.Context, sess session, query string, pr *probe, timeout time.Duration) ([]byte, *text2sql.SQLError, error) {
	cctx, cancel := context.WithTimeout(ctx, timeout+cancelGrace)
	defer cancel()
	conn, err := f.db.Conn(cctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		return nil, nil, fmt.Errorf("postgres: connection: %w", err)
	}
	reset := true
	defer func() {
		if reset {
			// A connection whose reset fails is not returned to the pool.
			if _, err := conn.ExecContext(context.Background(), "RESET ALL; SELECT pg_catalog.pg_advisory_unlock_all()"); err != nil {
				_ = conn.Raw(func(any) error { return driver.ErrBadConn })
			}
		}
		conn.Close()
	}()
	tx, err := conn.BeginTx(cctx, nil)
	if err != nil {
		reset = false
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		return nil, nil, fmt.Errorf("postgres: begin: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // after Commit it is a no-op
	setup := "SET LOCAL standard_conforming_strings = on; SET LOCAL client_encoding = 'UTF8'; SET LOCAL statement_timeout = " + millis(timeout) +
		"; SET LOCAL search_path TO pg_catalog" // until the call: see Executor.setupSQL
	if _, err := tx.ExecContext(cctx, setup); err != nil {
		return nil, nil, fmt.Errorf("postgres: session setup: %w", err)
	}
	if q := sess.query(); q != "" {
		args := make([]any, len(sess.settings))
		for i, v := range sess.settings {
			args[i] = v
		}
		if _, err := tx.ExecContext(cctx, q, args...); err != nil {
			var pe *pgconn.PgError
			if errors.As(err, &pe) {
				return nil, nil, sess.failed(pe.Message, pe.Code)
			}
			return nil, nil, fmt.Errorf("postgres: session setup: %w", err)
		}
	}
	if pr != nil {
		text, args := pr.args()
		if _, err := tx.ExecContext(cctx, text, args...); err != nil {
			var pe *pgconn.PgError
			switch {
			case errors.As(err, &pe) && strings.Contains(pe.Message, probeChanged):
				return nil, &text2sql.SQLError{Kind: text2sql.KindRuntime,
					Message: "the database's catalog changed since the statement check read it; make the Function anew"}, nil
			case errors.As(err, &pe):
				return nil, probeError(pe), nil
			}
			return nil, nil, fmt.Errorf("postgres: resolution probe: %w", err)
		}
	}
	if sc := f.opts.Guard.scope; sc != nil {
		if _, err := tx.ExecContext(cctx, searchPathSQL(sc.path)); err != nil {
			return nil, nil, fmt.Errorf("postgres: search path: %w", err)
		}
	} else if _, err := tx.ExecContext(cctx, "SET LOCAL search_path TO DEFAULT"); err != nil {
		return nil, nil, fmt.Errorf("postgres: search path: %w", err)
	}
	var size sql.NullInt64
	var answer sql.NullString
	err = tx.QueryRowContext(cctx, f.call, query, f.opts.MaxResultBytes).Scan(&size, &answer)
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		var pe *pgconn.PgError
		switch {
		case errors.As(err, &pe) && pe.Code == "57014", cctx.Err() != nil:
			return nil, execkit.TimeoutError(timeout), nil
		case errors.As(err, &pe):
			return nil, &text2sql.SQLError{Kind: lint.ClassifySQLState(pe.Code, pe.Message), Message: cutMessage(pe.Message), SQLState: pe.Code, Hint: pe.Hint}, nil
		}
		return nil, nil, fmt.Errorf("postgres: %s: %w", f.opts.Name, err)
	}
	if !size.Valid {
		return nil, nil, fmt.Errorf("postgres: %s returned NULL", f.opts.Name)
	}
	if !answer.Valid {
		return nil, &text2sql.SQLError{Kind: text2sql.KindTooLarge,
			Message: fmt.Sprintf("the function's answer is %d bytes; the limit is %d (FunctionOptions.MaxResultBytes)", size.Int64, f.opts.MaxResultBytes)}, nil
	}
	if err := tx.Commit(); err != nil {
		return nil, nil, fmt.Errorf("postgres: %s: commit: %w", f.opts.Name, err)
	}
	return []byte(answer.String), nil, nil
}

// Close marks the executor closed; the handle stays the caller's.
func (f *Function) Close() error {
	f.closed.Store(true)
	return nil
}

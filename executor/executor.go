// Package executor holds the guarded executors: generated SQL is untrusted
// input, so each executor checks a statement before it reaches the engine
// and runs it under engine-level limits.
//
// This package has the limits shared by every executor (DefaultMaxRows,
// DefaultTimeout, DefaultMaxResultBytes, DefaultMaxSQLLength,
// ValueOverhead), the Privileged interface, a generic Executor for any
// database/sql driver, PerPrincipal (a login, and so an executor, per
// caller) and the answer of a sandbox function (FunctionShape). The
// engine-independent statement check, the classification of engine errors
// and the hints for unknown names are in package guard. Engine-specific
// executors live in sub-packages (executor/sqlite, executor/postgres,
// executor/mysql, executor/postgrest) and import their driver; this
// package imports none.
package executor

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/executor/internal/execkit"
	"github.com/text2sql-go/text2sql/guard"
	"github.com/text2sql-go/text2sql/internal/sqltext"
	"github.com/text2sql-go/text2sql/lint"
	"github.com/text2sql-go/text2sql/schema"
)

// The defaults of every guarded executor.
const (
	// DefaultMaxRows is the row cap when neither the request nor the
	// options set one (1000).
	DefaultMaxRows = execkit.DefaultMaxRows
	// DefaultTimeout bounds one execution when neither the request nor
	// the options set a limit (10s).
	DefaultTimeout = execkit.DefaultTimeout
	// DefaultMaxResultBytes bounds the memory of one result, in bytes
	// (32 MiB): every engine's executor stops reading when a result
	// passes it and reports KindTooLarge.
	DefaultMaxResultBytes = 32 << 20
	// DefaultMaxSQLLength bounds a statement's text, in bytes (1 MiB), on
	// every engine; a longer text is refused with KindTooLarge before it
	// reaches the engine.
	DefaultMaxSQLLength = 1 << 20
	// ValueOverhead is what one value of a result costs in memory beyond
	// its own bytes, in bytes: the interface in the row (16), the string
	// or slice header it boxes (16 to 24) and allocation rounding.
	// Executors count it per value against MaxResultBytes, so the bound
	// holds for results of many small values too (measured: 1,600
	// columns × 1,000 rows of two-byte strings keep 34 bytes a value).
	ValueOverhead = 40
)

// Privileged is implemented by executors that can tell whether their
// login holds powers beyond reading data: a PostgreSQL superuser or a
// member of pg_read_server_files, pg_write_server_files or
// pg_execute_server_program; a MySQL/MariaDB login with FILE, SUPER,
// PROCESS or write privileges. Such a login is where a guard bypass would
// do harm, so hosts warn about it (the CLI on standard error, the service
// in /health) and suggest a read-only login (text2sql grant).
type Privileged interface {
	// ElevatedPrivileges names the powers found when the executor was
	// made, e.g. "superuser" or "FILE privilege"; nil when the login
	// only reads.
	ElevatedPrivileges() []string
}

// ErrClosed is returned by an executor's methods after Close.
var ErrClosed = execkit.ErrClosed

// Options configures a generic Executor. Zero values mean the defaults;
// negative values are treated as zero.
type Options struct {
	// MaxRows caps the rows of a result (default DefaultMaxRows). A
	// request's own MaxRows takes precedence.
	MaxRows int
	// Timeout bounds one execution (default DefaultTimeout). A request's
	// own Timeout takes precedence.
	Timeout time.Duration
	// Schema, when set, is used for hints on unknown tables and columns.
	Schema *schema.Database
	// Statement, when set, turns a query that passed the check (trailing
	// semicolons removed) into the text the executor prepares, given the
	// execution's row cap and time limit (Check passes 0 rows), e.g. to
	// add an engine's own limits: executor/mysql sends
	// SET STATEMENT max_statement_time=…, sql_select_limit=… FOR <query>
	// to MariaDB. It must not change what the query reads. Hints for
	// unknown tables and columns are computed on the query itself.
	Statement func(query string, maxRows int, timeout time.Duration) string
	// Check, when set, replaces guard.CheckText as the statement check: it
	// returns the text to run (the checked query without trailing
	// semicolons, which Statement then receives) or the refusal. An
	// engine-specific executor sets it to check on the engine's own terms.
	Check func(query string) (string, *text2sql.SQLError)
	// MaxSQLLength bounds the statement text, in bytes (default
	// DefaultMaxSQLLength); a longer text is refused with KindTooLarge
	// before it is checked.
	MaxSQLLength int
	// MaxResultBytes bounds the memory of one result: the bytes of its
	// text and binary values plus ValueOverhead per value (default
	// DefaultMaxResultBytes). Reading stops as soon as a row passes it,
	// the statement is cancelled, and the execution fails with
	// KindTooLarge.
	MaxResultBytes int
	// Conn, when set, gives each execution and check the connection it
	// runs on instead of the pool of the handle passed to New: the
	// executor runs its transaction on conn and calls release when the
	// transaction has ended, successful or not. executor/mysql uses it to
	// give every statement a session that no earlier statement's state
	// outlives (reset by the server, or a new connection).
	Conn func(ctx context.Context) (conn *sql.Conn, release func(), err error)
	// Classify, when set, gives the kind of an error the engine raised
	// from the engine's own error code (executor/mysql: the MySQL error
	// number), or "" for an error that carries no code it knows, which
	// is then classified by its message (lint.Classify).
	Classify func(err error) text2sql.ErrorKind
}

// Executor is a guarded executor for any database/sql driver. For each
// statement it runs guard.CheckText (or Options.Check), then prepares and
// runs the statement inside a read-only transaction (sql.TxOptions{ReadOnly: true}) that is always
// rolled back, under a time limit given by the context and a row cap.
// Error kinds come from the engine's error codes where Options.Classify
// reads them, else from the engine's messages (lint.Classify).
//
// The read-only transaction is only as strong as the driver makes it:
// PostgreSQL and MySQL enforce it, go-sqlite3 ignores it (the rollback
// still undoes writes). Prefer the engine-specific executors where one
// exists (executor/sqlite), which add engine-level guards.
//
// An Executor is safe for concurrent use.
type Executor struct {
	db   *sql.DB
	opts Options
}

// New returns a generic guarded executor over db. It does not take
// ownership of db: closing db is the caller's business.
func New(db *sql.DB, opts Options) *Executor {
	return &Executor{db: db, opts: opts}
}

// Execute runs req.SQL as untrusted input. A refused or failing statement
// is returned as Result.Error (a *text2sql.SQLError); the error return is
// non-nil only when the executor cannot work: db is nil, the connection
// fails, or ctx is cancelled by the caller (then it is ctx.Err()). Reaching
// the executor's own time limit is a KindTimeout result, not an error.
// Rows hold driver values; []byte values of non-binary columns become
// strings.
func (e *Executor) Execute(ctx context.Context, req text2sql.ExecuteRequest) (*text2sql.Result, error) {
	start := time.Now()
	if e.db == nil && e.opts.Conn == nil {
		return nil, fmt.Errorf("%w: executor: nil *sql.DB", text2sql.ErrInvalidConfig)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	res := &text2sql.Result{}
	done := func() (*text2sql.Result, error) { return execkit.Finish(res, start) }
	q, se := e.check(req.SQL)
	if se != nil {
		res.Error = se
		return done()
	}
	maxRows, timeout := execkit.Limits(req, e.opts.MaxRows, e.opts.Timeout)
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	stmt := q
	if e.opts.Statement != nil {
		stmt = e.opts.Statement(q, maxRows, timeout)
	}

	tx, release, err := e.begin(cctx)
	if release != nil {
		defer release()
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if cctx.Err() != nil {
			res.Error = execkit.TimeoutError(timeout)
			return done()
		}
		return nil, fmt.Errorf("executor: begin read-only transaction: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // always rolled back; nothing to commit

	err = e.run(cctx, cancel, tx, stmt, maxRows, res)
	if err != nil {
		if errors.Is(err, errResultTooLarge) {
			res.Rows, res.Truncated = nil, false
			res.Error = &text2sql.SQLError{Kind: text2sql.KindTooLarge,
				Message: fmt.Sprintf("the result exceeds %d bytes; select fewer or smaller columns, or fewer rows", e.maxResultBytes())}
			return done()
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if execkit.ConnectionError(err) {
			return nil, fmt.Errorf("executor: %w", err)
		}
		res.Rows, res.Truncated = nil, false
		res.Error = e.sqlError(cctx, err, q, timeout)
	}
	return done()
}

// errResultTooLarge stops run when a result passes MaxResultBytes.
var errResultTooLarge = errors.New("result too large")

// check runs the statement check and returns the text to run.
func (e *Executor) check(query string) (string, *text2sql.SQLError) {
	limit := e.opts.MaxSQLLength
	if limit <= 0 {
		limit = DefaultMaxSQLLength
	}
	if len(query) > limit {
		return "", &text2sql.SQLError{Kind: text2sql.KindTooLarge,
			Message: fmt.Sprintf("the statement is %d bytes long; at most %d are allowed", len(query), limit)}
	}
	if e.opts.Check != nil {
		return e.opts.Check(query)
	}
	if se := guard.CheckText(query); se != nil {
		return "", se
	}
	return sqltext.StripTrailing(query), nil
}

// begin starts the read-only transaction, on a connection of Options.Conn
// when set; release, when not nil, must be called after the transaction
// ends.
func (e *Executor) begin(ctx context.Context) (*sql.Tx, func(), error) {
	opts := &sql.TxOptions{ReadOnly: true}
	if e.opts.Conn == nil {
		tx, err := e.db.BeginTx(ctx, opts)
		return tx, nil, err
	}
	conn, release, err := e.opts.Conn(ctx)
	if err != nil {
		return nil, nil, err
	}
	tx, err := conn.BeginTx(ctx, opts)
	return tx, release, err
}

func (e *Executor) maxResultBytes() int {
	if e.opts.MaxResultBytes > 0 {
		return e.opts.MaxResultBytes
	}
	return DefaultMaxResultBytes
}

// run prepares and runs q in tx and reads its rows into res, up to maxRows
// rows and Options.MaxResultBytes bytes; past the bytes it calls cancel,
// so that the rest of the result is not read, and returns
// errResultTooLarge.
func (e *Executor) run(ctx context.Context, cancel func(), tx *sql.Tx, q string, maxRows int, res *text2sql.Result) error {
	stmt, err := tx.PrepareContext(ctx, q)
	if err != nil {
		return err
	}
	defer stmt.Close()
	rows, err := stmt.QueryContext(ctx)
	if err != nil {
		return err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	res.Columns = cols
	binary := make([]bool, len(cols))
	if types, err := rows.ColumnTypes(); err == nil {
		for i, t := range types {
			binary[i] = execkit.BinaryType(t.DatabaseTypeName())
		}
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	limit, size := e.maxResultBytes(), 0
	for rows.Next() {
		if len(res.Rows) == maxRows {
			res.Truncated = true
			break
		}
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		row := make([]any, len(cols))
		for i, v := range vals {
			size += ValueOverhead
			switch x := v.(type) {
			case []byte:
				size += len(x)
				if !binary[i] {
					v = string(x)
				}
			case string:
				size += len(x)
			}
			row[i] = v
		}
		if size > limit {
			cancel()
			return errResultTooLarge
		}
		res.Rows = append(res.Rows, row)
	}
	return rows.Err()
}

// Check runs guard.CheckText and then prepares query inside a read-only
// transaction that is rolled back, without executing it. It returns nil or
// a *text2sql.SQLError (refusals, syntax errors, unknown tables or
// columns); any other error means the executor cannot work.
func (e *Executor) Check(ctx context.Context, query string) error {
	if e.db == nil && e.opts.Conn == nil {
		return fmt.Errorf("%w: executor: nil *sql.DB", text2sql.ErrInvalidConfig)
	}
	q, se := e.check(query)
	if se != nil {
		return se
	}
	_, timeout := execkit.Limits(text2sql.ExecuteRequest{}, e.opts.MaxRows, e.opts.Timeout)
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tx, release, err := e.begin(cctx)
	if release != nil {
		defer release()
	}
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("executor: begin read-only transaction: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck
	text := q
	if e.opts.Statement != nil {
		text = e.opts.Statement(q, 0, timeout)
	}
	stmt, err := tx.PrepareContext(cctx, text)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if execkit.ConnectionError(err) {
			return fmt.Errorf("executor: %w", err)
		}
		return e.sqlError(cctx, err, q, timeout)
	}
	return stmt.Close()
}

func (e *Executor) sqlError(ctx context.Context, err error, q string, timeout time.Duration) *text2sql.SQLError {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return execkit.TimeoutError(timeout)
	}
	var kind text2sql.ErrorKind
	if e.opts.Classify != nil {
		kind = e.opts.Classify(err)
	}
	return lint.EngineError(kind, err.Error(), e.opts.Schema, q)
}

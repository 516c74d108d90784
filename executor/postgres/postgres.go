// Package postgres is the guarded PostgreSQL executor. It runs generated
// SQL, which is untrusted input, in layers, each enough on its own where
// PostgreSQL allows:
//
//  1. The statement check ( Guard) on PostgreSQL's own parse tree
//     (github.com/pganalyze/pg_query_go): exactly one query, no write,
//     DDL, SELECT … INTO, locking clause or data-modifying WITH query,
//     no statement but a query, and only allow-listed functions, however
//     a call is written (f(x), x.f, (x).f). The allow-list is derived
//     from the server's own catalog by a rule (see Catalog). A refused
//     statement never reaches the server.
//  2. The transaction: the statement runs inside BEGIN READ ONLY with
//     SET LOCAL statement_timeout, lock_timeout and
//     idle_in_transaction_session_timeout, optionally the role the host
//     names or the one it chooses for the caller, with the caller's
//     claims for row-level security (Options.Role, RoleFor, Claims; a
//     read-only role is the strongest layer: it also stops what a
//     read-only transaction allows, such as COPY TO a file for a
//     superuser), and is always rolled back. A role protects
//     only as far as the session's own user allows: a superuser may SET
//     ROLE back to itself, so connect as a user that is not one.
//     Session-level advisory locks, which even a read-only transaction
//     may take, are released after the rollback.
//  3. The protocol: the statement is sent alone through the extended query
//     protocol, which refuses a text holding several statements, so even
//     without layer 1 no second statement can run after one that ends
//     the read-only transaction.
//  4. Bounds: a row cap enforced by the server (the portal is executed
//     for at most cap+1 rows, so the rest of the result is never
//     computed), a time limit (the server's statement_timeout, backed by
//     a cancel request from the client), a bound on the statement's
//     length, one on the size of a result row, checked before the row is
//     read into memory, and one on the bytes of the whole result, counted
//     as rows arrive; work_mem per transaction, and temp_file_limit where
//     the login may set it (TempFileLimited).
//
// The setup, the statement and the rollback are pipelined in one round
// trip.
//
// The executor uses the pgx driver (github.com/jackc/pgx/v5/stdlib) and
// pg_query_go, which needs cgo.
package postgres

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/executor"
	"github.com/text2sql-go/text2sql/executor/internal/execkit"
	"github.com/text2sql-go/text2sql/schema"
)

// The defaults of Options.
const (
	// DefaultLockTimeout bounds the wait for a lock (lock_timeout), capped
	// at the statement's time limit.
	DefaultLockTimeout = 2 * time.Second
	// DefaultMaxSQLLength bounds the statement text, in bytes (1 MiB).
	DefaultMaxSQLLength = executor.DefaultMaxSQLLength
	// DefaultMaxOpenConns is the pool size of a handle made by Open.
	DefaultMaxOpenConns = 4
	// DefaultMaxRowBytes bounds one result row as the server sends it
	// (16 MiB).
	DefaultMaxRowBytes = 16 << 20
	// DefaultMaxResultBytes bounds a whole result (32 MiB).
	DefaultMaxResultBytes = executor.DefaultMaxResultBytes
	// DefaultTempFileLimit is the transaction's temp_file_limit, in bytes
	// (512 MiB): what one statement may spill to temporary files for
	// sorts and hashes larger than work_mem.
	DefaultTempFileLimit = 512 << 20
	// DefaultWorkMem is the transaction's work_mem, in bytes (16 MiB):
	// the memory each sort or hash node may use before it spills.
	DefaultWorkMem = 16 << 20
	// cancelGrace is how long after the time limit the client waits for
	// the server's own statement_timeout before it sends a cancel request.
	cancelGrace = time.Second
	// breakGrace is how long after a cancel request the client waits for
	// the server before it breaks the connection.
	breakGrace = 3 * time.Second
)

// Options configures Open and New. Zero values mean the defaults;
// negative durations and counts are an error.
type Options struct {
	// MaxRows caps the rows of a result (default executor.DefaultMaxRows,
	// 1000). The server executes the statement for at most MaxRows+1 rows
	// and the result is marked truncated when the extra row exists. A
	// request's own MaxRows takes precedence.
	MaxRows int
	// Timeout bounds one execution (default executor.DefaultTimeout, 10s):
	// it is the transaction's statement_timeout. A request's own Timeout
	// takes precedence.
	Timeout time.Duration
	// LockTimeout is the transaction's lock_timeout (default
	// DefaultLockTimeout, at most the time limit).
	LockTimeout time.Duration
	// IdleTimeout is the transaction's idle_in_transaction_session_timeout
	// (default: the time limit plus 5s), which ends the session should the
	// client stall inside the transaction.
	IdleTimeout time.Duration
	// Role, when set, is the role every statement runs as (the
	// transaction's role, set_config('role', Role, true), as SET LOCAL
	// ROLE; the name exactly as given) unless RoleFor chooses another.
	// The connection's user must be a member of it, and should not be a
	// superuser (which may SET ROLE back to itself). Name a role that can
	// only read what the model may read.
	Role string
	// RoleFor, when set, chooses the role of each call that carries a
	// principal (identity.PrincipalFrom), so that the database's own
	// grants and row-level-security policies decide what each caller
	// reads: RoleMap (principal to role), RoleFromClaim (a verified JWT's
	// "role", as PostgREST), or a function of the host's. "" means Role;
	// an error is the call's error (ErrForbidden: a principal with no
	// role). Calls without a principal, such as a host validating its
	// knowledge file, run as Role. The login must be a member of every
	// role chosen; one it may not assume fails the call with an error
	// naming the role and the principal.
	RoleFor RoleFunc
	// Claims, when true, passes the caller's claims to row-level-security
	// policies as PostgREST and Supabase do, transaction-local:
	// request.jwt.claims is Principal.Claims as JSON, its "sub" always
	// Principal.ID, "role" the role chosen and "email" Principal.Email
	// when set (so every setting names one caller), and
	// request.jwt.claim.sub (.role, .email) the single values, so that policies written for Supabase (auth.uid(),
	// current_setting('request.jwt.claims', true)::json->>'sub') work
	// unchanged. A call without a principal sets none: such policies then
	// see no caller. Statements cannot change the role or the claims
	// back: set_config, SET and RESET are refused by the statement check.
	Claims bool
	// SearchPath, when set, is the transaction's search_path (SET LOCAL
	// search_path, each schema quoted exactly as given); otherwise the
	// session's own. Hints for unknown tables treat the schemas on it as
	// visible without qualification.
	SearchPath []string
	// Schemas are the schemas introspected for Schema (default: every
	// non-system schema).
	Schemas []string
	// AllowFunctions extends the allow-list the server's catalog gives
	// (see Catalog; NewGuard for the form of the names).
	AllowFunctions []string
	// TrustedExtensions names the extensions whose functions, operators
	// and types statements may reach (see Guard: citext's case-blind =,
	// pg_trgm's %, PostGIS's types); nil trusts every extension
	// installed, a non-nil empty list none.
	TrustedExtensions []string
	// MaxSQLLength bounds the statement text in bytes (default
	// DefaultMaxSQLLength); a longer text is refused with KindTooLarge.
	MaxSQLLength int
	// MaxOpenConns bounds the pool of a handle made by Open (default
	// DefaultMaxOpenConns). New leaves the host's handle as it is.
	MaxOpenConns int
	// MaxRowBytes bounds the size of one result row as the server sends
	// it: its values in text form plus 4 bytes each, in bytes (default
	// DefaultMaxRowBytes). A larger row stops the execution with
	// KindTooLarge before it is read into memory (the connection is
	// closed, which ends the statement on the server).
	MaxRowBytes int
	// MaxResultBytes bounds one result: the bytes of its values in text
	// form plus executor.ValueOverhead per value, counted while the rows
	// arrive (default
	// DefaultMaxResultBytes). A larger result stops the execution with
	// KindTooLarge (the connection is closed, which ends the statement
	// on the server).
	MaxResultBytes int
	// TempFileLimit is the transaction's temp_file_limit in bytes
	// (default DefaultTempFileLimit; rounded down to kB). PostgreSQL lets
	// only superusers, and roles granted SET on the parameter, change it:
	// for other logins the server's own setting stays (Open checks which
	// applies; see TempFileLimited).
	TempFileLimit int64
	// WorkMem is the transaction's work_mem in bytes (default
	// DefaultWorkMem; rounded down to kB, at least 64 kB).
	WorkMem int64

	// skipCheck is a test knob: it switches the statement check off so
	// tests can show that the remaining layers hold on their own.
	skipCheck bool
}

// Executor is the guarded PostgreSQL executor. It implements
// text2sql.Executor and text2sql.Guard and is safe for concurrent use.
type Executor struct {
	db         *sql.DB
	owned      bool
	opts       Options
	checker    atomic.Pointer[Guard]
	schema     *schema.Database
	searchPath []string
	// tempLimited says the login may set temp_file_limit.
	tempLimited bool
	elevated    []string
	bypassRLS   bool // see BypassesRowSecurity
	closed      atomic.Bool
	// sent counts the statements sent to the server (test hook): a
	// refused statement leaves it unchanged.
	sent atomic.Int64
	// setupStmts are the last time limit's setup (see setup); pathStmt
	// sets the statement's search path (searchPathSQL).
	setupStmts atomic.Pointer[setupCache]
	pathStmt   stmt
}

// Open connects to the PostgreSQL server named by dsn (a postgres:// URL
// or a key=value string, as pgx accepts) and returns a guarded executor
// with its own connection pool, closed by Close. The schema is inspected
// once (Schema).
//
// An unparsable DSN or invalid Options is an error wrapping
// text2sql.ErrInvalidConfig; a server that cannot be reached is a plain
// error. Errors never include the DSN's password.
func Open(ctx context.Context, dsn string, opts Options) (*Executor, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("%w: postgres: DSN: %v", text2sql.ErrInvalidConfig, err)
	}
	db := stdlib.OpenDB(*cfg)
	n := opts.MaxOpenConns
	if n == 0 {
		n = DefaultMaxOpenConns
	}
	db.SetMaxOpenConns(n)
	db.SetMaxIdleConns(n)
	e, err := newExecutor(ctx, db, opts)
	if err != nil {
		db.Close()
		return nil, err
	}
	e.owned = true
	return e, nil
}

// New returns a guarded executor over db, which must use the pgx driver
// (github.com/jackc/pgx/v5/stdlib: sql.Open("pgx", …) or stdlib.OpenDB).
// It inspects the schema once with ctx (Schema) and learns the session's
// search_path when Options.SearchPath is not set. It does not take
// ownership of db: Close leaves it open.
//
// Invalid Options or a handle of another driver is an error wrapping
// text2sql.ErrInvalidConfig; a failing connection or introspection query
// is a plain error.
func New(ctx context.Context, db *sql.DB, opts Options) (*Executor, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	return newExecutor(ctx, db, opts)
}

func (o *Options) validate() error {
	if o.MaxRows < 0 || o.Timeout < 0 || o.LockTimeout < 0 || o.IdleTimeout < 0 || o.MaxSQLLength < 0 || o.MaxOpenConns < 0 ||
		o.MaxRowBytes < 0 || o.MaxResultBytes < 0 || o.TempFileLimit < 0 || o.WorkMem < 0 {
		return fmt.Errorf("%w: postgres: negative limit in Options", text2sql.ErrInvalidConfig)
	}
	for _, s := range o.SearchPath {
		if s == "" {
			return fmt.Errorf("%w: postgres: empty schema name in SearchPath", text2sql.ErrInvalidConfig)
		}
	}
	o.MaxSQLLength = cmp.Or(o.MaxSQLLength, DefaultMaxSQLLength)
	o.MaxRowBytes = cmp.Or(o.MaxRowBytes, DefaultMaxRowBytes)
	o.MaxResultBytes = cmp.Or(o.MaxResultBytes, DefaultMaxResultBytes)
	o.TempFileLimit = cmp.Or(o.TempFileLimit, DefaultTempFileLimit)
	o.WorkMem = cmp.Or(o.WorkMem, DefaultWorkMem)
	return nil
}

func newExecutor(ctx context.Context, db *sql.DB, opts Options) (*Executor, error) {
	if db == nil {
		return nil, fmt.Errorf("%w: postgres: nil *sql.DB", text2sql.ErrInvalidConfig)
	}
	e := &Executor{db: db, opts: opts}
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("postgres: connect: %w", err)
	}
	err = conn.Raw(func(dc any) error {
		if _, ok := dc.(*stdlib.Conn); !ok {
			return fmt.Errorf("%w: postgres: the handle's driver connection is %T; open it with the pgx driver (github.com/jackc/pgx/v5/stdlib)", text2sql.ErrInvalidConfig, dc)
		}
		return nil
	})
	if err == nil && len(opts.SearchPath) == 0 {
		e.searchPath, err = sessionSearchPath(ctx, conn)
	}
	if err == nil {
		err = e.inspectLogin(ctx, conn)
	}
	conn.Close()
	if err != nil {
		return nil, err
	}
	if len(opts.SearchPath) > 0 {
		e.searchPath = append([]string(nil), opts.SearchPath...)
	}
	e.pathStmt = stmt{stmtPrefix + "path", searchPathSQL(e.searchPath)}
	if e.schema, err = schema.InspectPostgres(ctx, db, opts.Schemas); err != nil {
		return nil, err
	}
	if err := e.loadGuard(ctx); err != nil {
		return nil, err
	}
	return e, nil
}

// loadGuard reads the server's catalog and makes the statement check of
// it, scoped to the executor's search path and schema.
func (e *Executor) loadGuard(ctx context.Context) error {
	cat, err := loadCatalog(ctx, e.db, e.opts.TrustedExtensions)
	if err != nil {
		return err
	}
	e.checker.Store(NewGuard(cat, e.opts.AllowFunctions).Scoped(e.searchPath, e.schema))
	return nil
}

// sessionSearchPath returns the session's search path: the schemas on it
// that exist, without pg_catalog and pg_temp.
func sessionSearchPath(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}) ([]string, error) {
	var js string
	var path []string
	err := q.QueryRowContext(ctx, `SELECT to_json(current_schemas(false))::text`).Scan(&js)
	if err == nil {
		err = json.Unmarshal([]byte(js), &path)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: search_path: %w", err)
	}
	return path, nil
}

// loginQuery names the login's powers beyond reading data.
const loginQuery = `SELECT r.rolsuper, r.rolreplication, r.rolbypassrls, r.rolcreaterole, r.rolcreatedb,
	pg_has_role(r.oid, 'pg_read_server_files', 'MEMBER'),
	pg_has_role(r.oid, 'pg_write_server_files', 'MEMBER'),
	pg_has_role(r.oid, 'pg_execute_server_program', 'MEMBER')
FROM pg_roles r WHERE r.rolname = session_user`

// bypassQuery says whether row-level security does not apply to the role
// $1 (the login when empty): a superuser, BYPASSRLS, or the owner (by
// inheritance too) of a table whose policies are not forced.
const bypassQuery = `SELECT r.rolsuper OR r.rolbypassrls OR EXISTS (SELECT 1 FROM pg_class c
	WHERE c.relrowsecurity AND NOT c.relforcerowsecurity AND pg_has_role(r.oid, c.relowner, 'USAGE'))
FROM pg_roles r WHERE r.rolname = coalesce(nullif($1, ''), session_user)`

// inspectLogin learns the login's powers (ElevatedPrivileges) and whether
// it may set temp_file_limit.
func (e *Executor) inspectLogin(ctx context.Context, conn *sql.Conn) error {
	var super, repl, bypass, createRole, createDB, readFiles, writeFiles, program bool
	if err := conn.QueryRowContext(ctx, loginQuery).Scan(&super, &repl, &bypass, &createRole, &createDB, &readFiles, &writeFiles, &program); err != nil {
		return fmt.Errorf("postgres: login: %w", err)
	}
	for _, p := range []struct {
		has  bool
		name string
	}{{super, "superuser"}, {readFiles, "member of pg_read_server_files"}, {writeFiles, "member of pg_write_server_files"},
		{program, "member of pg_execute_server_program"}, {repl, "replication"}, {bypass, "bypasses row-level security"},
		{createRole, "may create roles"}, {createDB, "may create databases"}} {
		if p.has {
			e.elevated = append(e.elevated, p.name)
		}
	}
	if err := conn.QueryRowContext(ctx, bypassQuery, e.opts.Role).Scan(&e.bypassRLS); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("postgres: login: %w", err)
	}
	// temp_file_limit is a superuser setting (PostgreSQL 15 also lets a
	// role be granted SET on it): try it in a transaction of its own.
	tx, err := conn.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("postgres: login: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // read-only, nothing to keep
	_, err = tx.ExecContext(ctx, "SET LOCAL temp_file_limit = "+kilobytes(e.opts.TempFileLimit))
	e.tempLimited = err == nil
	return nil
}

// BypassesRowSecurity reports whether row-level-security policies do not
// apply to the role of calls for which no per-caller role is chosen
// (Options.Role, else the login), as found when the executor was made: it
// is a superuser, has BYPASSRLS, or owns a table with row-level security
// that is not forced (ALTER TABLE … FORCE ROW LEVEL SECURITY). Options.Claims
// then changes nothing for those calls; a host should warn.
func (e *Executor) BypassesRowSecurity() bool { return e.bypassRLS }

// ElevatedPrivileges implements executor.Privileged: the powers of the
// login beyond reading data found when the executor was made
// ("superuser", "member of pg_read_server_files", "member of
// pg_write_server_files", "member of pg_execute_server_program",
// "replication", "bypasses row-level security", "may create roles", "may
// create databases"), nil for a login without them.
func (e *Executor) ElevatedPrivileges() []string { return append([]string(nil), e.elevated...) }

// TempFileLimited reports whether the login may set temp_file_limit, so
// that Options.TempFileLimit bounds every statement's temporary files;
// when it may not, the server's own temp_file_limit applies (set it in
// postgresql.conf or with ALTER ROLE … SET, or GRANT SET ON PARAMETER
// temp_file_limit on PostgreSQL 15 and later).
func (e *Executor) TempFileLimited() bool { return e.tempLimited }

// Schema returns the schema inspected when the executor was made (dialect
// postgres; see schema.InspectPostgres). Callers must not modify it.
func (e *Executor) Schema() *schema.Database { return e.schema }

// SearchPath returns the schemas the executor treats as visible without
// qualification: Options.SearchPath, or the session's search_path (its
// existing schemas) when the executor was made.
func (e *Executor) SearchPath() []string { return append([]string(nil), e.searchPath...) }

// Guard returns the executor's statement check, usable without a
// server.
func (e *Executor) Guard() *Guard { return e.checker.Load() }

// guard is Guard.
func (e *Executor) guard() *Guard { return e.checker.Load() }

// DB returns the underlying handle. Statements run on it directly are not
// guarded. Callers must not close it; use Close.
func (e *Executor) DB() *sql.DB { return e.db }

// Close closes the connection pool when Open made it (a handle given to
// New stays open). Later calls to Execute and Check return
// executor.ErrClosed. Close is idempotent.
func (e *Executor) Close() error {
	return execkit.CloseOnce(&e.closed, e.db, e.owned)
}

// Execute runs req.SQL as untrusted input and returns its rows, up to the
// row cap, or the reason it was refused or failed in Result.Error:
// refusals of the statement check (nothing reaches the server; see
// Guard), KindTooLarge for a text longer than MaxSQLLength, and server
// errors with their SQLSTATE: 42P01 KindUnknownTable and 42703
// KindUnknownColumn with a Hint (case folding, other schemas, close
// names), 42601 KindSyntax, 57014 (statement_timeout) and 55P03
// (lock_timeout) KindTimeout, 25006 KindNotReadOnly, 42501
// KindForbiddenStatement, 54000/53200 KindTooLarge, others
// KindRuntime; a row larger than MaxRowBytes is KindTooLarge.
//
// Values come as PostgreSQL prints them, typed where JSON has a type:
// boolean → bool; smallint, integer, bigint, oid → int64; real, double
// precision → float64 (NaN and ±Infinity as the strings "NaN",
// "Infinity", "-Infinity"); numeric → int64 when integral and in range,
// else float64 (digits beyond float64 precision are lost; NaN and
// infinities as strings); bytea → []byte; NULL → nil; every other type
// (text, varchar, date, timestamp, interval, json, uuid, arrays, enums,
// …) → its text form as a string, e.g. "2024-01-31",
// "2024-01-31 12:00:00", "{1,2}".
//
// The error return is non-nil only when the executor cannot work: it is
// closed (executor.ErrClosed), no connection can be had, the session
// setup fails (e.g. SET ROLE to a role the user is not a member of), the
// connection breaks, or ctx is done before the statement finishes (then
// it is ctx.Err(), and a cancel request has stopped the statement on the
// server). Reaching the time limit is a KindTimeout result.
func (e *Executor) Execute(ctx context.Context, req text2sql.ExecuteRequest) (*text2sql.Result, error) {
	res, done, err := execkit.Begin(ctx, &e.closed)
	if err != nil {
		return nil, err
	}
	maxRows, timeout := execkit.Limits(req, e.opts.MaxRows, e.opts.Timeout)
	out, err := e.run(ctx, req.SQL, maxRows, timeout, false)
	if err != nil {
		return nil, err
	}
	if out.err != nil {
		res.Error = out.err
	} else {
		res.Columns, res.Rows, res.Truncated = out.columns, out.rows, out.truncated
	}
	return done()
}

// Check runs the statement check and then has the server parse and
// analyse the statement (Parse and Describe inside the same read-only
// transaction, rolled back), without executing or planning it. It
// returns nil, or a *text2sql.SQLError: a refusal, or an error the server
// reports for the statement (syntax, unknown table or column, type
// errors). Any other error means the executor cannot work.
func (e *Executor) Check(ctx context.Context, query string) error {
	if err := execkit.Ready(ctx, &e.closed); err != nil {
		return err
	}
	_, timeout := execkit.Limits(text2sql.ExecuteRequest{}, e.opts.MaxRows, e.opts.Timeout)
	out, err := e.run(ctx, query, 0, timeout, true)
	if err != nil {
		return err
	}
	if out.err != nil {
		return out.err
	}
	return nil
}

// run checks query and runs the pipeline. When the probe finds that the
// catalog changed since it was read, the executor reads it again and
// checks and runs the statement anew, once; when the connection lost the
// statements the executor prepared on it, it runs the pipeline again.
func (e *Executor) run(ctx context.Context, query string, maxRows int, timeout time.Duration, describeOnly bool) (*outcome, error) {
	for try := 0; ; try++ {
		ch, se := e.prepare(query)
		if se != nil {
			return &outcome{err: se}, nil
		}
		out, err := e.roundTrip(ctx, ch, maxRows, timeout, describeOnly)
		switch {
		case err != nil || !out.changed && !out.stale:
			return out, err
		case try > 0:
			return &outcome{err: &text2sql.SQLError{Kind: text2sql.KindRuntime,
				Message: "the database's catalog changed while the statement was checked; try again"}}, nil
		case out.changed:
			if err := e.loadGuard(ctx); err != nil {
				return nil, err
			}
		}
	}
}

// prepare bounds the text and runs the statement check (Guard.prepare);
// it returns the text to send and the probe of the names the server must
// resolve as the check assumed.
func (e *Executor) prepare(query string) (checked, *text2sql.SQLError) {
	if len(query) > e.opts.MaxSQLLength {
		return checked{}, &text2sql.SQLError{Kind: text2sql.KindTooLarge,
			Message: "the statement is " + strconv.Itoa(len(query)) + " bytes; the limit is " + strconv.Itoa(e.opts.MaxSQLLength)}
	}
	if e.opts.skipCheck {
		return checked{text: resolution{}.text(query)}, nil
	}
	return e.guard().prepare(query)
}

// textArray renders names as a text[] literal under standard_conforming_strings.
func textArray(names []string) string {
	seen := map[string]bool{}
	var b strings.Builder
	b.WriteString("ARRAY[")
	for _, n := range names {
		if seen[n] {
			continue
		}
		if len(seen) > 0 {
			b.WriteString(", ")
		}
		seen[n] = true
		b.WriteString("'" + strings.ReplaceAll(n, "'", "''") + "'")
	}
	b.WriteString("]::text[]")
	return b.String()
}

// setupCache holds the setup statements of one time limit.
type setupCache struct {
	timeout time.Duration
	stmts   []stmt
}

// setup returns the statements that open the guarded transaction after
// BEGIN, for time limit timeout; each kind of setting has its statement
// name, so a connection holds one of each, whatever the values.
func (e *Executor) setup(timeout time.Duration) []stmt {
	if c := e.setupStmts.Load(); c != nil && c.timeout == timeout {
		return c.stmts
	}
	lock := e.opts.LockTimeout
	if lock == 0 {
		lock = DefaultLockTimeout
	}
	if lock > timeout {
		lock = timeout
	}
	idle := e.opts.IdleTimeout
	if idle == 0 {
		idle = timeout + 5*time.Second
	}
	// The server must read the statement as the check did: strings by
	// the standard (a backslash is a character) and the text as UTF-8,
	// whatever the database, the role or the DSN set.
	stmts := []stmt{
		{stmtPrefix + "strings", "SET LOCAL standard_conforming_strings = on"},
		{stmtPrefix + "encoding", "SET LOCAL client_encoding = 'UTF8'"},
		{stmtPrefix + "statement_timeout", "SET LOCAL statement_timeout = " + millis(timeout)},
		{stmtPrefix + "lock_timeout", "SET LOCAL lock_timeout = " + millis(lock)},
		{stmtPrefix + "idle_timeout", "SET LOCAL idle_in_transaction_session_timeout = " + millis(idle)},
		{stmtPrefix + "work_mem", "SET LOCAL work_mem = " + kilobytes(max(e.opts.WorkMem, 64<<10))},
	}
	if e.tempLimited {
		stmts = append(stmts, stmt{stmtPrefix + "temp_file_limit", "SET LOCAL temp_file_limit = " + kilobytes(e.opts.TempFileLimit)})
	}
	// Until the statement, names resolve in pg_catalog alone, so that
	// the session's and the probe's queries reach no operator of the
	// database's (the pipeline then pins the statement's search path).
	stmts = append(stmts, stmt{stmtPrefix + "catalog_path", "SET LOCAL search_path TO pg_catalog"})
	// The probe, prepared once per connection, is planned once: left to
	// itself the server plans it anew for each of its first five runs on
	// a connection (custom plans), which cost about twice the generic
	// plan's runs. The statement itself has no parameters, so its plan
	// is the same either way. (PostgreSQL 12 added the setting.)
	if e.guard().cat.major >= 12 {
		stmts = append(stmts, stmt{stmtPrefix + "plan_cache_mode", "SET LOCAL plan_cache_mode = force_generic_plan"})
	}
	e.setupStmts.Store(&setupCache{timeout, stmts})
	return stmts
}

// searchPathSQL sets the transaction's search_path to path, each schema
// quoted exactly as given, then pg_temp (pg_catalog comes first, as
// always when it is not listed).
func searchPathSQL(path []string) string {
	var b strings.Builder
	b.WriteString("SET LOCAL search_path TO ")
	for _, s := range path {
		b.WriteString(pgx.Identifier{s}.Sanitize())
		b.WriteString(", ")
	}
	b.WriteString("pg_temp")
	return b.String()
}

// millis renders d in whole milliseconds, at least 1.
func millis(d time.Duration) string {
	ms := d.Milliseconds()
	if ms < 1 {
		ms = 1
	}
	return strconv.FormatInt(ms, 10)
}

// kilobytes renders n bytes as a PostgreSQL memory setting in kB.
func kilobytes(n int64) string { return strconv.FormatInt(n>>10, 10) }

// errConnBroken marks a connection left in an unknown state; it is closed.
var errConnBroken = errors.New("postgres: connection broken")

// roundTrip runs the pipeline on a dedicated connection of the pool.
func (e *Executor) roundTrip(ctx context.Context, ch checked, maxRows int, timeout time.Duration, describeOnly bool) (*outcome, error) {
	sess, err := caller{e.opts.Role, e.opts.RoleFor, e.opts.Claims}.sessionFor(ctx)
	if err != nil {
		return nil, err
	}
	conn, err := e.db.Conn(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if e.closed.Load() {
			return nil, executor.ErrClosed
		}
		return nil, fmt.Errorf("postgres: connection: %w", err)
	}
	defer conn.Close()
	var out *outcome
	err = conn.Raw(func(dc any) error {
		c, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("%w: postgres: driver connection %T is not pgx", text2sql.ErrInvalidConfig, dc)
		}
		pc := c.Conn().PgConn()
		if pc.IsClosed() || pc.IsBusy() || pc.TxStatus() != 'I' {
			pc.Close(context.Background())
			return errConnBroken
		}
		out, err = e.pipeline(ctx, pc, sess, ch, maxRows, timeout, describeOnly)
		return err
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	return out, nil
}

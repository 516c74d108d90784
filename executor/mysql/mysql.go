// Package mysql is the guarded executor for MySQL and MariaDB, with the
// go-sql-driver/mysql driver. It runs generated SQL, which is untrusted
// input, in layers, each enough on its own where the server allows:
//
//  1. The statement check ( Guard): a lexical pass by MySQL's own rules
//     under the session's sql_mode (backslash escapes, "…" strings, "#"
//     and "-- " comments) that refuses executable comments (/*! */,
//     /*M! */) and optimizer hints, then the parse tree of a maintained
//     MySQL parser (github.com/pingcap/tidb/pkg/parser): exactly one
//     query, no write, DDL, INTO OUTFILE/DUMPFILE/@var, locking read or
//     variable assignment, no statement but a query, and only
//     allow-listed functions (DefaultFunctions). The server is sent the
//     text the parser read, comments blanked. A refused statement never
//     reaches the server (no connection is opened for it). The check
//     also bounds the work of one row, which the server cannot stop
//     (it looks for KILL and max_statement_time between rows only) and
//     whose row it builds whole in memory: a string literal, and a
//     string a call builds (REPEAT, SPACE, LPAD and RPAD with a literal
//     count, CONCAT, INSERT, REPLACE, SFORMAT, EXPORT_SET, CAST AS
//     BINARY(n), …), holds at most 8 KiB, UNCOMPRESS and WEIGHT_STRING,
//     which the check cannot bound, are refused, the searches of a
//     statement (LIKE, REGEXP, LOCATE, INSTR, REPLACE, …) make at most
//     1e8 character comparisons by the lengths the statement shows, and
//     a row holds at most 16 values of long columns (MEDIUMTEXT,
//     LONGTEXT, MEDIUMBLOB, LONGBLOB, JSON) by the schema (KindTooLarge).
//  2. The transaction: the statement runs inside START TRANSACTION READ
//     ONLY, which ends with its connection: the reset rolls it back, or
//     the server does when the connection closes. The server takes one
//     statement per text: Open's connections have multiStatements off
//     (the server then refuses a second statement, error 1064) and take
//     the statement as text; on a handle passed to New, whose DSN the
//     executor cannot see, it is prepared (the binary protocol takes one
//     statement). The server refuses writes and temporary tables there
//     (error 1792), LOAD DATA LOCAL before it asks for a file; it does
//     not refuse SELECT … INTO OUTFILE, user variables, named locks or
//     SET, which only layer 1 stops for a login with the FILE privilege
//     — connect as a least-privilege login (ElevatedPrivileges reports
//     the others).
//  3. The session: no statement sees what an earlier one left in its
//     session — user variables, named locks, table locks, HANDLERs,
//     temporary tables, session variables, the current database, the
//     last insert id, the row count FOUND_ROWS() reports. On a handle
//     made by Open the executor reuses its own connections: when a
//     statement ends it has the server reset the session
//     (COM_RESET_CONNECTION) and, in one round trip before the next
//     statement, which also begins its transaction, selects the
//     database again, pins the character set and sql_mode the check
//     assumed (and the DSN's session variables, and on MariaDB the
//     login's max_statement_time) again, and closes a connection whose
//     role a statement changed.
//     As the reset does not log in again, it also reads the login's
//     account (SHOW GRANTS, SHOW CREATE USER) and closes a connection
//     whose account changed since its login (REVOKE, DROP USER, ACCOUNT
//     LOCK, …), and no connection is reused past
//     Options.MaxConnLifetime. Over TLS or with compression, and on a handle
//     passed to New, every statement runs on a connection of its own,
//     closed afterwards (see sessions).
//  4. Bounds: a time limit enforced by the server — MariaDB runs the
//     statement as SET STATEMENT max_statement_time=… FOR <query>; MySQL
//     gets a /*+ MAX_EXECUTION_TIME(…) */ hint after the query's first
//     top-level SELECT — backed by the context deadline, after which,
//     on MySQL, the statement is stopped on the server (KILL QUERY from
//     another connection); a row cap (on
//     MariaDB also sql_select_limit=cap+1, so the server stops at the
//     cap unless the query has its own LIMIT); a bound on the
//     statement's length; and a bound on a result's bytes, counted
//     while rows are read and, on a handle made by Open, on the socket,
//     so that even one row of many large values is never buffered whole.
package mysql

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	mysqldrv "github.com/go-sql-driver/mysql"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/executor/internal/execkit"
	"github.com/text2sql-go/text2sql/internal/sqltext"
	"github.com/text2sql-go/text2sql/schema"
)

// grace is how long the client waits beyond the time limit, so that the
// server's own limit fires first and the connection survives.
const grace = time.Second

// DefaultMaxOpenConns is the pool size of a handle made by Open.
const DefaultMaxOpenConns = 4

// DefaultMaxConnLifetime is how long a handle made by Open reuses a
// statement connection by default: what the reset cannot see of the
// login reaches the executor within it (see Options.MaxConnLifetime),
// and a login every 30 s per connection costs little next to a reset
// per statement.
const DefaultMaxConnLifetime = 30 * time.Second

// Options configures Open and New. Zero values mean the defaults;
// negative values are an error.
type Options struct {
	// MaxRows caps the rows of a result (default executor.DefaultMaxRows).
	// A request's own MaxRows takes precedence.
	MaxRows int
	// Timeout bounds one execution (default executor.DefaultTimeout),
	// enforced by the server. A request's own Timeout takes precedence.
	Timeout time.Duration
	// MaxOpenConns bounds the pool of a handle made by Open (default
	// DefaultMaxOpenConns), which serves the schema inspection at Open,
	// and the statement connections kept, reset, for reuse (statements
	// that run at the same time may open more, closed when they end).
	MaxOpenConns int
	// MaxConnLifetime bounds how long, from its login, a statement
	// connection of a handle made by Open is reused (default
	// DefaultMaxConnLifetime); an older one is closed when its statement
	// ends, or when it is next taken. A reused connection does not log in
	// again: a change of the login's account that SHOW GRANTS or SHOW
	// CREATE USER shows (REVOKE, DROP USER, a revoked role, ACCOUNT LOCK,
	// a new password or resource limit) closes it before its next
	// statement, but what they do not show — a changed init_connect or
	// global variable — reaches the executor only within
	// MaxConnLifetime.
	MaxConnLifetime time.Duration
	// MaxSQLLength bounds the statement text, in bytes (default
	// executor.DefaultMaxSQLLength, 1 MiB); a longer text is refused with
	// KindTooLarge before it is checked.
	MaxSQLLength int
	// MaxResultBytes bounds the memory of one result: the bytes of its
	// values plus executor.ValueOverhead per value (default executor.DefaultMaxResultBytes,
	// 32 MiB). Reading stops as soon as a row passes it and the execution
	// fails with KindTooLarge. On a handle made by Open the socket also
	// stops reading MaxResultBytes plus 4 MiB into a statement's
	// response, so a single row of many large values, which the driver
	// reads whole, is bounded too.
	MaxResultBytes int
	// AllowFunctions extends DefaultFunctions (see NewGuard for the
	// form of the names): stored or loadable functions the model may
	// call.
	AllowFunctions []string

	// skipCheck is a test knob: it switches the statement check off so
	// tests can show that the remaining layers hold on their own.
	skipCheck bool
}

// Flavor is the kind of server.
type Flavor string

// The server flavors.
const (
	MariaDB Flavor = "mariadb"
	MySQL   Flavor = "mysql"
)

// Executor is the guarded MySQL/MariaDB executor. It implements
// text2sql.Executor and text2sql.Guard and is safe for concurrent use.
type Executor struct {
	db       *sql.DB
	owned    bool
	opts     Options
	flavor   Flavor
	version  string
	schema   *schema.Database
	checker  *Guard
	sessions *sessions
	elevated []string
	closed   atomic.Bool
	// prepare sends statements by the binary protocol, prepared, which
	// takes one statement whatever the connection's multiStatements: on
	// a host's handle (New), whose DSN may enable it. Open's connections
	// have it off, and the server then refuses a second statement in a
	// text (error 1064) as it would in a prepared one, so statements go
	// as text, without a round trip for the prepare.
	prepare bool
	// passed remembers the Guard's plans of accepted texts (see plan).
	passed *execkit.Passed[Statement]
	// hostFunctions are Options.AllowFunctions, in lower case; udfsVisible
	// tells whether the login may read mysql.func (see confirmCalls).
	hostFunctions map[string]bool
	udfsVisible   bool
}

// DSN converts a mysql:// URL (mysql://user:password@host:port/db?params)
// to the driver's form (user:password@tcp(host:port)/db?params); any other
// string is returned as it is. The port defaults to 3306.
func DSN(s string) (string, error) {
	if !strings.HasPrefix(s, "mysql://") && !strings.HasPrefix(s, "mariadb://") {
		return s, nil
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", fmt.Errorf("%w: mysql: DSN is not a valid URL", text2sql.ErrInvalidConfig)
	}
	cfg := mysqldrv.NewConfig()
	if u.User != nil {
		cfg.User = u.User.Username()
		cfg.Passwd, _ = u.User.Password()
	}
	cfg.Net = "tcp"
	cfg.Addr = u.Host
	if u.Port() == "" {
		cfg.Addr = u.Hostname() + ":3306"
	}
	cfg.DBName = strings.TrimPrefix(u.Path, "/")
	out := cfg.FormatDSN()
	if u.RawQuery != "" {
		if strings.Contains(out, "?") {
			out += "&" + u.RawQuery
		} else {
			out += "?" + u.RawQuery
		}
	}
	return out, nil
}

// IsDSN reports whether s looks like a MySQL DSN: a mysql:// or
// mariadb:// URL, or the driver's own form (…@tcp(…)/… or …@unix(…)/…).
func IsDSN(s string) bool {
	return strings.HasPrefix(s, "mysql://") || strings.HasPrefix(s, "mariadb://") ||
		strings.Contains(s, "@tcp(") || strings.Contains(s, "@unix(")
}

// Open connects to the server named by dsn (the driver's form or a
// mysql:// URL, see DSN), which must name a database, and returns a guarded
// executor with its own pool, closed by Close. Multi-statement mode is
// forced off and dates stay text (parseTime off). The schema of the DSN's
// database is inspected once (Schema).
//
// A malformed DSN or invalid Options is an error wrapping
// text2sql.ErrInvalidConfig; a server that cannot be reached is a plain
// error. Errors never include the password.
func Open(ctx context.Context, dsn string, opts Options) (*Executor, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	d, err := DSN(dsn)
	if err != nil {
		return nil, err
	}
	cfg, err := mysqldrv.ParseDSN(d)
	if err != nil {
		return nil, fmt.Errorf("%w: mysql: DSN: %v", text2sql.ErrInvalidConfig, redact(err, cfg))
	}
	cfg.MultiStatements = false
	cfg.ParseTime = false
	// Statements go as text (see Executor.prepare), where the server may
	// ask the client for a file (LOAD DATA LOCAL); none is given.
	cfg.AllowAllFiles = false
	conn, err := mysqldrv.NewConnector(cfg)
	if err != nil {
		return nil, fmt.Errorf("%w: mysql: %v", text2sql.ErrInvalidConfig, err)
	}
	db := sql.OpenDB(conn)
	n := opts.MaxOpenConns
	if n == 0 {
		n = DefaultMaxOpenConns
	}
	db.SetMaxOpenConns(n)
	db.SetMaxIdleConns(n)
	e, err := newExecutor(ctx, db, cfg, opts)
	if err != nil {
		db.Close()
		return nil, err
	}
	e.owned = true
	return e, nil
}

func redact(err error, cfg *mysqldrv.Config) string {
	msg := err.Error()
	if cfg != nil && cfg.Passwd != "" {
		msg = strings.ReplaceAll(msg, cfg.Passwd, "…")
	}
	return msg
}

func (o *Options) validate() error {
	if o.MaxRows < 0 || o.Timeout < 0 || o.MaxOpenConns < 0 || o.MaxConnLifetime < 0 || o.MaxSQLLength < 0 || o.MaxResultBytes < 0 {
		return fmt.Errorf("%w: mysql: negative limit in Options", text2sql.ErrInvalidConfig)
	}
	return nil
}

// New returns a guarded executor over db, a handle of the go-sql-driver
// driver on a DSN that names a database and does not enable
// multiStatements. It asks the server for its version (to choose how to
// bound time) and its sql_mode (to lex statements as the server will),
// reads the login's grants (ElevatedPrivileges), and inspects the schema
// once with ctx. It does not take ownership of db: Close leaves it open.
// Each statement runs on a connection taken from db that is closed
// afterwards, never returned to its pool (the executor cannot reset a
// session on the host's connections); unlike Open, the bound on the
// bytes a statement's response may take on the wire is not available.
//
// A session sql_mode of ORACLE (MariaDB), which changes the grammar (s.nextval
// calls a sequence), is an error wrapping text2sql.ErrInvalidConfig.
func New(ctx context.Context, db *sql.DB, opts Options) (*Executor, error) {
	return newExecutor(ctx, db, nil, opts)
}

// pinnedSession selects the session state the check relies on:
// SET NAMES pins the character set the statement text is sent in (it is
// valid UTF-8), and sql_mode the rules the server lexes it by.
const pinnedSession = "SET NAMES utf8mb4, SESSION sql_mode = '%s'"

// newExecutor is New; cfg, when not nil (Open), is the configuration each
// statement's connection is dialled with.
func newExecutor(ctx context.Context, db *sql.DB, cfg *mysqldrv.Config, opts Options) (*Executor, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	if db == nil {
		return nil, fmt.Errorf("%w: mysql: nil *sql.DB", text2sql.ErrInvalidConfig)
	}
	e := &Executor{db: db, opts: opts}
	var sqlMode string
	var database sql.NullString
	var lowerCase int
	if err := db.QueryRowContext(ctx, `SELECT VERSION(), @@SESSION.sql_mode, DATABASE(), @@lower_case_table_names`).Scan(&e.version, &sqlMode, &database, &lowerCase); err != nil {
		return nil, fmt.Errorf("mysql: server version: %w", err)
	}
	if !database.Valid || database.String == "" {
		return nil, fmt.Errorf("%w: mysql: the connection names no database", text2sql.ErrInvalidConfig)
	}
	if strings.Trim(strings.ToUpper(sqlMode), "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_,") != "" {
		return nil, fmt.Errorf("mysql: unexpected sql_mode %q", sqlMode)
	}
	if slices.Contains(strings.Split(strings.ToUpper(sqlMode), ","), "ORACLE") {
		return nil, fmt.Errorf("%w: mysql: sql_mode ORACLE changes the grammar beyond what the statement check follows; connect with another sql_mode", text2sql.ErrInvalidConfig)
	}
	e.flavor = MySQL
	if strings.Contains(strings.ToLower(e.version), "mariadb") {
		e.flavor = MariaDB
	}
	elevated, err := elevatedPrivileges(ctx, db)
	if err != nil {
		return nil, err
	}
	e.elevated = elevated
	sch, err := schema.InspectMySQL(ctx, db)
	if err != nil {
		return nil, err
	}
	e.schema = sch
	e.checker = NewGuard(sqlMode, opts.AllowFunctions).Confine(database.String, lowerCase != 0)
	e.checker.knowLongColumns(sch)
	if err := db.QueryRowContext(ctx, "SELECT @@group_concat_max_len").Scan(&e.checker.groupConcatMax); err != nil {
		return nil, fmt.Errorf("mysql: group_concat_max_len: %w", err)
	}
	if err := e.checker.builtinsOnly(ctx, db, opts.AllowFunctions); err != nil {
		return nil, err
	}
	if e.udfsVisible, err = canReadUDFs(ctx, db); err != nil {
		return nil, err
	}
	e.hostFunctions = map[string]bool{}
	for _, f := range opts.AllowFunctions {
		e.hostFunctions[strings.ToLower(strings.TrimSpace(f))] = true
	}
	idle := opts.MaxOpenConns
	if idle == 0 {
		idle = DefaultMaxOpenConns
	}
	lifetime := cmp.Or(opts.MaxConnLifetime, DefaultMaxConnLifetime)
	roles := e.flavor == MariaDB || !strings.HasPrefix(e.version, "5.") // MySQL 8
	e.sessions = newSessions(db, cfg, fmt.Sprintf(pinnedSession, sqlMode), int64(e.resultBytes())+wireSlack, idle, lifetime, roles, e.flavor == MariaDB)
	if e.flavor == MySQL {
		e.sessions.killer = db
	}
	e.prepare = cfg == nil
	e.passed = execkit.NewPassed[Statement]()
	return e, nil
}

// ElevatedPrivileges implements executor.Privileged: the privileges
// beyond reading that SHOW GRANTS listed when the executor was made
// (see ElevatedGrants), e.g. "ALL PRIVILEGES ON *.*" or "FILE ON *.*";
// nil for a login that only reads. Such a login is not refused.
func (e *Executor) ElevatedPrivileges() []string { return e.elevated }

// Guard returns the statement check the executor runs (configured for
// the session's sql_mode and Options.AllowFunctions).
func (e *Executor) Guard() *Guard { return e.checker }

// statement adds the server-side limits to a checked query: limit is
// the time the server gives it, maxRows its row cap (0: none).
func (e *Executor) statement(q string, maxRows int, limit time.Duration) string {
	if e.flavor == MariaDB {
		return MariaDBStatement(q, maxRows, limit)
	}
	return MySQLStatement(q, limit)
}

// MariaDBStatement returns q run under MariaDB's SET STATEMENT with
// max_statement_time (seconds, microsecond precision) and, when maxRows >
// 0, sql_select_limit = maxRows+1 (which applies to the top-level SELECT
// when it has no LIMIT of its own).
func MariaDBStatement(q string, maxRows int, limit time.Duration) string {
	s := "SET STATEMENT max_statement_time=" + strconv.FormatFloat(limit.Seconds(), 'f', 6, 64)
	if maxRows > 0 {
		s += ", sql_select_limit=" + strconv.Itoa(maxRows+1)
	}
	return s + " FOR " + q
}

// MySQLStatement returns q with a /*+ MAX_EXECUTION_TIME(ms) */ hint after
// its first top-level SELECT keyword (after any WITH clause), or q as it
// is when it has none (a parenthesised query or VALUES): the context
// deadline then bounds it.
func MySQLStatement(q string, limit time.Duration) string {
	ms := limit.Milliseconds()
	if ms < 1 {
		ms = 1
	}
	depth := 0
	for _, t := range sqltext.LexMySQL(q, sqltext.MySQLMode{}) {
		switch {
		case t.Kind == sqltext.Punct && t.Text == "(":
			depth++
		case t.Kind == sqltext.Punct && t.Text == ")":
			depth--
		case depth == 0 && t.Is("select"):
			end := t.Pos + len(t.Text)
			return q[:end] + " /*+ MAX_EXECUTION_TIME(" + strconv.FormatInt(ms, 10) + ") */" + q[end:]
		}
	}
	return q
}

// Flavor reports whether the server is MariaDB or MySQL.
func (e *Executor) Flavor() Flavor { return e.flavor }

// Version is the server's VERSION().
func (e *Executor) Version() string { return e.version }

// Schema returns the schema inspected when the executor was made (dialect
// mysql; see schema.InspectMySQL). Callers must not modify it.
func (e *Executor) Schema() *schema.Database { return e.schema }

// DB returns the underlying handle, unguarded. Callers must not close it.
func (e *Executor) DB() *sql.DB { return e.db }

// Close closes the pool when Open made it. Later calls to Execute and
// Check return executor.ErrClosed. Close is idempotent.
func (e *Executor) Close() error {
	e.sessions.close()
	return execkit.CloseOnce(&e.closed, e.db, e.owned)
}

// Execute runs req.SQL as untrusted input (see the package comment) and
// returns its rows up to the row cap, or the reason it was refused or
// failed in Result.Error: refusals of the Guard, KindTooLarge for a
// statement longer than Options.MaxSQLLength or a result past
// Options.MaxResultBytes, and server errors classified by their error
// number (errcode.go) — unknown table or column (with a hint from the
// schema), syntax, KindNotReadOnly for a write the read-only transaction
// refuses (error 1792), KindTimeout when the time limit stops the
// statement. Values are int64, float64, string (text,
// DECIMAL, dates and times as MySQL prints them), []byte for binary
// columns, or nil.
//
// The error return is non-nil only when the executor cannot work:
// closed (executor.ErrClosed), no connection, or ctx done (ctx.Err()).
func (e *Executor) Execute(ctx context.Context, req text2sql.ExecuteRequest) (*text2sql.Result, error) {
	res, done, err := execkit.Begin(ctx, &e.closed)
	if err != nil {
		return nil, err
	}
	st, se := e.plan(req.SQL)
	if se != nil {
		res.Error = se
		return done()
	}
	maxRows, timeout := execkit.Limits(req, e.opts.MaxRows, e.opts.Timeout)
	cctx, cancel := context.WithTimeout(ctx, timeout+grace)
	defer cancel()
	tripped := new(atomic.Bool)
	conn, release, err := e.sessions.conn(cctx, tripped, true)
	if err != nil {
		return e.connError(ctx, cctx, err, timeout, res, done)
	}
	defer release()
	if err := e.confirm(cctx, conn, st); err != nil {
		if shadow := (*shadowError)(nil); errors.As(err, &shadow) {
			res.Error = shadow.se
			return done()
		}
		return e.connError(ctx, cctx, err, timeout, res, done)
	}
	err = e.run(cctx, conn, e.statement(st.Text, maxRows, timeout), maxRows, res)
	if err == nil {
		return done()
	}
	res.Rows, res.Truncated = nil, false
	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case tripped.Load():
		res.Error = &text2sql.SQLError{Kind: text2sql.KindTooLarge,
			Message: fmt.Sprintf("the result exceeds %d bytes on the wire; select fewer or smaller columns, or fewer rows", e.sessions.wireLimit)}
	case errors.Is(err, errResultTooLarge):
		res.Error = &text2sql.SQLError{Kind: text2sql.KindTooLarge,
			Message: fmt.Sprintf("the result exceeds %d bytes; select fewer or smaller columns, or fewer rows", e.resultBytes())}
	case execkit.ConnectionError(err):
		return nil, fmt.Errorf("mysql: %w", err)
	default:
		res.Error = e.sqlError(cctx, err, st.Text, timeout)
	}
	return done()
}

// Check runs the Guard and then prepares the statement inside a
// read-only transaction, on a clean session (as Execute), without
// running it. It returns nil or a *text2sql.SQLError (refusals, syntax
// errors, unknown tables or columns); any other error means the
// executor cannot work.
func (e *Executor) Check(ctx context.Context, query string) error {
	if err := execkit.Ready(ctx, &e.closed); err != nil {
		return err
	}
	st, se := e.plan(query)
	if se != nil {
		return se
	}
	_, timeout := execkit.Limits(text2sql.ExecuteRequest{}, e.opts.MaxRows, e.opts.Timeout)
	cctx, cancel := context.WithTimeout(ctx, timeout+grace)
	defer cancel()
	conn, release, err := e.sessions.conn(cctx, new(atomic.Bool), true)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("mysql: connection: %w", err)
	}
	defer release()
	stmt, err := conn.PrepareContext(cctx, e.statement(st.Text, 0, timeout))
	switch {
	case err == nil:
		return stmt.Close()
	case ctx.Err() != nil:
		return ctx.Err()
	case execkit.ConnectionError(err):
		return fmt.Errorf("mysql: %w", err)
	}
	return e.sqlError(cctx, err, st.Text, timeout)
}

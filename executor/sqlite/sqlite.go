// Package sqlite is the guarded SQLite executor. It runs generated SQL, which
// is untrusted input, against a SQLite database file in layers, each enough
// on its own where SQLite allows:
//
//  1. guard.Shape (CheckShape): exactly one statement, and a query (SELECT,
//     WITH … SELECT, VALUES), lexically. Whether the query writes or
//     locks anywhere is SQLite's to say, on its own parse (layers 3, 4),
//     so a column named lock or merge is read as SQLite reads it.
//  2. The connection: opened through a "file:" URI with mode=ro (the file
//     is opened read-only) and _query_only=1 (PRAGMA query_only), with no
//     attached databases allowed (SQLITE_LIMIT_ATTACHED = 0) and extension
//     loading left off.
//  3. An authorizer on every connection that allows only reading and
//     allow-listed functions, denying every write, DDL, ATTACH, DETACH,
//     PRAGMA, VACUUM and transaction control when the statement is prepared.
//  4. sqlite3_stmt_readonly on the prepared statement.
//  5. Bounds, set where SQLite does the work: SQLite's own limits on each
//     connection (the length of any string or blob, of LIKE and GLOB
//     patterns and of the statement, result columns, function arguments,
//     expression depth, compound SELECT terms), SQLite's hard heap limit
//     on the memory it may allocate (Options.MaxMemory), built-ins whose
//     one call would be quadratic in its input replaced by linear ones
//     (instr, replace, trim), a time limit per call (sqlite3_interrupt
//     when it passes, checked by SQLite between VM instructions), a row
//     cap and a bound on the bytes of a result.
//
// This package imports github.com/mattn/go-sqlite3, which needs cgo.
package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	sqlite3 "github.com/mattn/go-sqlite3"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/executor"
	"github.com/text2sql-go/text2sql/executor/internal/execkit"
	"github.com/text2sql-go/text2sql/guard"
	"github.com/text2sql-go/text2sql/internal/sqltext"
	"github.com/text2sql-go/text2sql/lint"
	"github.com/text2sql-go/text2sql/schema"
)

// The defaults of Options.
const (
	// DefaultMaxLength is the default SQLITE_LIMIT_LENGTH: the largest
	// string or blob a statement may read, build or return, in bytes
	// (1 MiB). It also bounds the work of one function call, which SQLite
	// cannot interrupt: a LIKE over a value costs up to value length ×
	// pattern length steps (0.2 s at 1 MiB, 1.8 s at 10 MiB).
	DefaultMaxLength = 1 << 20
	// DefaultMaxSQLLength is the default SQLITE_LIMIT_SQL_LENGTH: the
	// longest statement text, in bytes (1 MiB).
	DefaultMaxSQLLength = executor.DefaultMaxSQLLength
	// DefaultMaxOpenConns is the default size of the connection pool.
	DefaultMaxOpenConns = 4
	// DefaultMaxResultBytes is the default bound on the bytes of one
	// result's values (32 MiB).
	DefaultMaxResultBytes = executor.DefaultMaxResultBytes
	// DefaultMaxMemory is the default bound on the memory SQLite may
	// allocate in the process, in bytes (64 MiB): page caches, sorters,
	// the values a statement computes and the row being read. Ordinary
	// queries use a few MiB; the bound is what stops a statement whose
	// rows are small but whose intermediate values are not.
	DefaultMaxMemory = 64 << 20
	// DefaultMaxLikePattern is the default SQLITE_LIMIT_LIKE_PATTERN_LENGTH,
	// in bytes: one LIKE or GLOB comparison costs up to pattern length ×
	// value length steps inside a single call, which SQLite cannot
	// interrupt, so the pattern is what keeps it short.
	DefaultMaxLikePattern = 100
	// DefaultMaxColumns is the default SQLITE_LIMIT_COLUMN, the most
	// result columns (and GROUP BY or ORDER BY terms) of a statement; Open
	// raises it to the widest table's column count.
	DefaultMaxColumns = 1000
	// maxFunctionArgs is SQLITE_LIMIT_FUNCTION_ARG: arguments of one call.
	maxFunctionArgs = 255
	// maxExprDepth is SQLITE_LIMIT_EXPR_DEPTH: SQLite's parser and code
	// generator recurse once per level.
	maxExprDepth = 250
	// maxCompoundSelect is SQLITE_LIMIT_COMPOUND_SELECT: terms of a UNION,
	// INTERSECT or EXCEPT chain, each planned and run on its own.
	maxCompoundSelect = 500
)

// Options configures Open. Zero values mean the defaults; negative values
// are an error.
type Options struct {
	// MaxRows caps the rows of a result (default executor.DefaultMaxRows,
	// 1000). Reading stops at MaxRows+1 and the result is marked
	// truncated. A request's own MaxRows takes precedence.
	MaxRows int
	// Timeout bounds one execution (default executor.DefaultTimeout, 10s).
	// The statement is interrupted when it is reached. A request's own
	// Timeout takes precedence.
	Timeout time.Duration
	// MaxLength bounds every string and blob, in bytes (default
	// DefaultMaxLength). A statement that reads or builds a longer value
	// fails with KindTooLarge.
	MaxLength int
	// MaxSQLLength bounds the statement text, in bytes (default
	// DefaultMaxSQLLength).
	MaxSQLLength int
	// MaxResultBytes bounds the memory of one result: the bytes of its
	// strings and blobs plus executor.ValueOverhead per value (default
	// DefaultMaxResultBytes).
	// Reading stops when it is passed and the execution fails with
	// KindTooLarge, so 1,000 rows of 10 MiB blobs cannot exhaust memory.
	MaxResultBytes int
	// AllowFunctions extends DefaultFunctions with more function names
	// (case-insensitive), e.g. application-defined functions, or
	// "pragma_table_info" to allow that table-valued pragma function.
	AllowFunctions []string
	// MaxOpenConns bounds the connections Execute and Check hold open,
	// and apart from them those of DB() (default DefaultMaxOpenConns).
	MaxOpenConns int
	// MaxMemory bounds the memory SQLite allocates, in bytes (default
	// DefaultMaxMemory). A statement that needs more fails with
	// KindTooLarge. SQLite has one such bound per process
	// (sqlite3_hard_heap_limit64), shared by every SQLite connection in
	// it: Open sets it to the largest MaxMemory of the executors opened,
	// unless the program set a limit of its own first, which is kept.
	MaxMemory int64
	// MaxLikePattern bounds a LIKE or GLOB pattern, in bytes (default
	// DefaultMaxLikePattern); a longer pattern fails with KindTooLarge.
	MaxLikePattern int
	// SchemaSnapshot, when set, is a file where Open keeps the schema it
	// inspected, keyed by the hash of the database's sqlite_schema
	// (schema.InspectSQLiteSnapshot): a later Open of a database with
	// the same definitions reads it instead of inspecting again. The
	// caller's cache, e.g. beside the retriever's index; "" inspects
	// every time.
	SchemaSnapshot string

	// Test knobs: they switch layers off so tests can show that the
	// remaining ones hold on their own.
	skipTextCheck bool // no guard.CheckText
	noAuthorizer  bool // no authorizer
	noQueryOnly   bool // no _query_only=1 in the DSN
}

// Executor is the guarded SQLite executor. It implements text2sql.Executor
// and text2sql.Guard and is safe for concurrent use.
type Executor struct {
	db        *sql.DB
	pool      *pool // Execute's and Check's connections
	dsn       string
	path      string // absolute, for DataVersion
	opts      Options
	allow     map[string]bool
	schema    *schema.Database
	closed    atomic.Bool
	maxLength int
	// maxColumns is SQLITE_LIMIT_COLUMN: DefaultMaxColumns or the widest
	// table's column count.
	maxColumns int
	// authCalls counts authorizer calls on every connection: SQLite calls
	// the authorizer while it compiles a statement, so a statement that
	// leaves it unchanged never reached SQLite.
	authCalls atomic.Int64
	// passed keeps guard.Shape's text of the statements it accepted.
	passed *execkit.Passed[string]
}

// Open opens the SQLite database file at path read-only and returns a
// guarded executor over it, with the schema inspected once (Schema).
//
// The file must exist: Open never creates one. A missing path, a
// directory, a file that is not a SQLite database or a negative option is
// an error wrapping text2sql.ErrInvalidConfig.
func Open(path string, opts Options) (*Executor, error) {
	if opts.MaxRows < 0 || opts.Timeout < 0 || opts.MaxLength < 0 || opts.MaxSQLLength < 0 || opts.MaxOpenConns < 0 ||
		opts.MaxResultBytes < 0 || opts.MaxMemory < 0 || opts.MaxLikePattern < 0 {
		return nil, fmt.Errorf("%w: sqlite: negative limit in Options", text2sql.ErrInvalidConfig)
	}
	st, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("sqlite: database file %s does not exist (%w)", path, text2sql.ErrInvalidConfig)
		}
		return nil, fmt.Errorf("%w: sqlite: %v", text2sql.ErrInvalidConfig, err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("sqlite: %s is not a regular file (%w)", path, text2sql.ErrInvalidConfig)
	}
	opts.MaxLength = cmp.Or(opts.MaxLength, DefaultMaxLength)
	opts.MaxSQLLength = cmp.Or(opts.MaxSQLLength, DefaultMaxSQLLength)
	opts.MaxOpenConns = cmp.Or(opts.MaxOpenConns, DefaultMaxOpenConns)
	opts.MaxResultBytes = cmp.Or(opts.MaxResultBytes, DefaultMaxResultBytes)
	opts.MaxMemory = cmp.Or(opts.MaxMemory, DefaultMaxMemory)
	opts.MaxLikePattern = cmp.Or(opts.MaxLikePattern, DefaultMaxLikePattern)
	limitHeap(opts.MaxMemory)
	dsn, err := DSN(path, !opts.noQueryOnly)
	if err != nil {
		return nil, fmt.Errorf("%w: sqlite: %v", text2sql.ErrInvalidConfig, err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("%w: sqlite: %v", text2sql.ErrInvalidConfig, err)
	}
	e := &Executor{dsn: dsn, path: abs, opts: opts, allow: map[string]bool{}, maxLength: opts.MaxLength, maxColumns: DefaultMaxColumns,
		passed: execkit.NewPassed[string]()}
	for _, f := range DefaultFunctions {
		e.allow[f] = true
	}
	for _, f := range opts.AllowFunctions {
		e.allow[strings.ToLower(strings.TrimSpace(f))] = true
	}

	// Inspect the schema through a handle without the authorizer (which
	// denies the pragma functions introspection needs), but read-only too,
	// and without the column limit, which is set from the widest table.
	ilimits := e.limits()
	delete(ilimits, sqlite3.SQLITE_LIMIT_COLUMN)
	idb := sql.OpenDB(&connector{dsn: dsn, limits: ilimits, noAuth: true})
	idb.SetMaxOpenConns(1)
	sch, err := schema.InspectSQLiteSnapshot(context.Background(), idb, opts.SchemaSnapshot)
	idb.Close()
	if err != nil {
		return nil, fmt.Errorf("%w: sqlite: cannot read %s as a SQLite database: %v", text2sql.ErrInvalidConfig, path, err)
	}
	if sch.Name == "" || sch.Name == "main" {
		sch.Name = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	}
	e.schema = sch
	for _, t := range sch.Tables {
		e.maxColumns = max(e.maxColumns, len(t.Columns))
	}

	guarded := &connector{dsn: dsn, limits: e.limits(), allow: e.allow, noAuth: opts.noAuthorizer, calls: &e.authCalls}
	e.pool = newPool(guarded, opts.MaxOpenConns)
	e.db = sql.OpenDB(guarded)
	e.db.SetMaxOpenConns(opts.MaxOpenConns)
	e.db.SetMaxIdleConns(opts.MaxOpenConns)
	return e, nil
}

// DSN returns the go-sqlite3 data source name Open uses for path: a "file:"
// URI of the absolute path, percent-encoded (so "?", "#" and "%" in a file
// name cannot be read as URI syntax), with mode=ro and, when queryOnly,
// _query_only=1. SQLite honours mode=ro only in a URI filename; a plain
// path with "?mode=ro" would be ignored by some drivers.
func DSN(path string, queryOnly bool) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	p := filepath.ToSlash(abs)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p // a Windows drive path: file:///C:/…
	}
	u := url.URL{Scheme: "file", Path: p}
	dsn := u.String() + "?mode=ro"
	if queryOnly {
		dsn += "&_query_only=1"
	}
	return dsn, nil
}

// limits returns the SQLite limits set on every connection.
func (e *Executor) limits() map[int]int {
	return map[int]int{
		sqlite3.SQLITE_LIMIT_ATTACHED:            0,
		sqlite3.SQLITE_LIMIT_LENGTH:              e.opts.MaxLength,
		sqlite3.SQLITE_LIMIT_SQL_LENGTH:          e.opts.MaxSQLLength,
		sqlite3.SQLITE_LIMIT_WORKER_THREADS:      0,
		sqlite3.SQLITE_LIMIT_LIKE_PATTERN_LENGTH: e.opts.MaxLikePattern,
		sqlite3.SQLITE_LIMIT_COLUMN:              e.maxColumns,
		sqlite3.SQLITE_LIMIT_FUNCTION_ARG:        maxFunctionArgs,
		sqlite3.SQLITE_LIMIT_EXPR_DEPTH:          maxExprDepth,
		sqlite3.SQLITE_LIMIT_COMPOUND_SELECT:     maxCompoundSelect,
	}
}

// Schema returns the schema inspected at Open (dialect sqlite). Callers
// must not modify it.
func (e *Executor) Schema() *schema.Database { return e.schema }

// DB returns the guarded read-only handle: every connection has the
// authorizer and the limits, so statements run through it directly are
// refused the same way at the engine level (without the lexical check,
// the row cap or the time limit). The pragma functions are refused on it
// too, so use Schema rather than schema.InspectSQLite on this handle.
// It has a pool of its own, of up to Options.MaxOpenConns connections
// beside Execute's, opened when it is first used. Callers must not close
// it; use Close.
func (e *Executor) DB() *sql.DB { return e.db }

// Close closes the database handle and the connections of Execute. Later
// calls to Execute and Check return executor.ErrClosed.
func (e *Executor) Close() error {
	err := execkit.CloseOnce(&e.closed, e.db, true)
	return errors.Join(err, e.pool.close())
}

// Execute runs req.SQL as untrusted input and returns its rows, up to the
// row cap, or the reason it was refused or failed in Result.Error:
// refusals of guard.CheckShape (nothing reaches SQLite), denials of the
// authorizer (KindNotReadOnly for writes and DDL, KindForbiddenStatement
// for ATTACH, PRAGMA, VACUUM and transaction control, KindForbiddenFunction
// naming the function), and engine errors (KindUnknownTable and
// KindUnknownColumn with a Hint from the schema, KindSyntax, KindTimeout,
// KindTooLarge, KindRuntime).
//
// Values are int64, float64, string (TEXT), []byte (BLOB) or nil, exactly
// as SQLite stores them: text in DATE, DATETIME, TIMESTAMP columns stays
// text and integers in BOOLEAN columns stay integers.
//
// The error return is non-nil only when the executor cannot work: it is
// closed (executor.ErrClosed), no connection can be had, or ctx is done
// before the statement finishes (then it is ctx.Err()); the executor's own
// time limit gives a KindTimeout result instead.
func (e *Executor) Execute(ctx context.Context, req text2sql.ExecuteRequest) (*text2sql.Result, error) {
	res, done, err := execkit.Begin(ctx, &e.closed)
	if err != nil {
		return nil, err
	}
	var q string
	var se *text2sql.SQLError
	if e.opts.skipTextCheck {
		q = sqltext.StripTrailing(req.SQL)
	} else {
		q, se = e.shape(req.SQL)
	}
	if se != nil {
		res.Error = se
		return done()
	}
	maxRows, timeout := execkit.Limits(req, e.opts.MaxRows, e.opts.Timeout)
	err = e.withConn(ctx, timeout, func(c *guardedConn) error {
		err := e.run(ctx, c, q, maxRows, res)
		if err != nil && ctx.Err() == nil {
			se = e.sqlError(c, err, q, timeout)
		}
		return err
	})
	if err != nil && se == nil {
		switch {
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case errors.Is(err, errPoolWait):
			se = execkit.TimeoutError(timeout)
		default:
			return nil, err
		}
	}
	if se != nil {
		res.Columns, res.Rows, res.Truncated = nil, nil, false
		res.Error = se
	}
	return done()
}

// shape runs guard.Shape, or returns what it returned for the same text
// before (it reads the text alone): the text to prepare, or the refusal.
func (e *Executor) shape(sql string) (string, *text2sql.SQLError) {
	if q, ok := e.passed.Get(sql); ok {
		return q, nil
	}
	q, se := guard.Shape(sql)
	if se == nil {
		e.passed.Put(sql, q)
	}
	return q, se
}

// withConn runs f on a dedicated connection of the pool, so the
// authorizer's record belongs to this call alone, with the statement's
// time limit set on it: timeout from now, the wait for a connection
// included. The errors of getting the connection (ctx.Err(),
// errPoolWait, executor.ErrClosed, failing to open one) are returned as
// they are; errors of f too.
func (e *Executor) withConn(ctx context.Context, timeout time.Duration, f func(*guardedConn) error) error {
	c, left, err := e.pool.get(ctx, timeout)
	switch {
	case err == nil:
	case e.closed.Load():
		return executor.ErrClosed
	case errors.Is(err, errPoolWait) || ctx.Err() != nil:
		return err
	default:
		return fmt.Errorf("sqlite: connection: %w", err)
	}
	defer e.pool.put(c)
	c.auth.reset()
	c.watch.arm(left)
	err = f(c)
	c.watch.disarm()
	c.auth.count()
	return err
}

// run prepares q (its first statement only: SQLite prepares one statement
// at a time), refuses it unless SQLite deems it read-only, and reads up to
// maxRows+1 rows into res.
func (e *Executor) run(ctx context.Context, c *guardedConn, q string, maxRows int, res *text2sql.Result) error {
	ds, err := c.SQLiteConn.PrepareContext(ctx, q)
	if err != nil {
		return err
	}
	defer ds.Close()
	stmt := ds.(*sqlite3.SQLiteStmt)
	if !stmt.Readonly() {
		return errNotReadOnlyStmt
	}
	dr, err := stmt.QueryContext(ctx, nil)
	if err != nil {
		return err
	}
	defer dr.Close()
	rows := dr.(*sqlite3.SQLiteRows)
	res.Columns = append([]string(nil), rows.Columns()...)
	// go-sqlite3 turns values of columns declared DATE, DATETIME or
	// TIMESTAMP into time.Time (the zero time when the text does not parse)
	// and of BOOLEAN columns into bool, keyed on the declared types it
	// caches for the statement. Blank them so values come back exactly as
	// SQLite stores them. rawValue below covers a driver that stops
	// honouring this.
	dts := rows.DeclTypes()
	for i := range dts {
		dts[i] = ""
	}
	dest := make([]driver.Value, len(res.Columns))
	size := 0
	for {
		if err := rows.Next(dest); err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
		if len(res.Rows) == maxRows {
			res.Truncated = true
			return nil
		}
		row := make([]any, len(dest))
		for i, v := range dest {
			row[i] = rawValue(v)
			size += executor.ValueOverhead
			switch x := row[i].(type) {
			case string:
				size += len(x)
			case []byte:
				size += len(x)
			}
		}
		if size > e.opts.MaxResultBytes {
			return errResultTooLarge
		}
		res.Rows = append(res.Rows, row)
	}
}

var (
	errNotReadOnlyStmt = errors.New("statement is not read-only")
	errResultTooLarge  = errors.New("result too large")
)

// rawValue returns v as SQLite stores it.
func rawValue(v driver.Value) any {
	switch x := v.(type) {
	case time.Time:
		return x.Format(sqlite3.SQLiteTimestampFormats[0])
	case bool:
		if x {
			return int64(1)
		}
		return int64(0)
	}
	return v
}

// sqlError maps an error of run on c to a *text2sql.SQLError.
func (e *Executor) sqlError(c *guardedConn, err error, q string, timeout time.Duration) *text2sql.SQLError {
	if errors.Is(err, errNotReadOnlyStmt) {
		return &text2sql.SQLError{Kind: text2sql.KindNotReadOnly, Message: "SQLite reports the statement is not read-only"}
	}
	if errors.Is(err, errResultTooLarge) {
		return &text2sql.SQLError{Kind: text2sql.KindTooLarge,
			Message: fmt.Sprintf("the result exceeds %d bytes; select fewer or smaller columns, or fewer rows", e.opts.MaxResultBytes)}
	}
	if c.watch.expired() {
		return execkit.TimeoutError(timeout)
	}
	msg := err.Error()
	var serr sqlite3.Error
	if errors.As(err, &serr) {
		switch serr.Code {
		case sqlite3.ErrInterrupt:
			return execkit.TimeoutError(timeout)
		case sqlite3.ErrTooBig:
			return &text2sql.SQLError{Kind: text2sql.KindTooLarge,
				Message: msg + fmt.Sprintf(" (strings and blobs are limited to %d bytes)", e.maxLength)}
		case sqlite3.ErrNomem:
			return &text2sql.SQLError{Kind: text2sql.KindTooLarge,
				Message: fmt.Sprintf("the statement needs more memory than SQLite may use in this process (%d bytes); compute smaller values or fewer of them", hardHeapLimit(-1))}
		case sqlite3.ErrReadonly:
			return &text2sql.SQLError{Kind: text2sql.KindNotReadOnly, Message: msg}
		}
	}
	if se := e.limitError(msg); se != nil {
		return se
	}
	if d := c.auth.denied(); d == nil && !e.opts.skipTextCheck && strings.Contains(msg, "syntax error") {
		// SQLite could not prepare the statement: a construct of another
		// engine that writes or locks (SELECT … INTO, FOR UPDATE, a
		// data-modifying WITH query) is named as the refusal it is.
		if se := guard.DeepScan(q); se != nil {
			return se
		}
	}
	if d := c.auth.denied(); d != nil {
		low := strings.ToLower(msg)
		if strings.Contains(low, "not authorized") || strings.Contains(low, "authorization denied") ||
			strings.Contains(low, "prohibited") || errors.As(err, &serr) && serr.Code == sqlite3.ErrAuth {
			return d
		}
	}
	return lint.EngineError(errorKind(err), msg, e.schema, q)
}

// limitError returns the KindTooLarge error of an SQLite message that
// reports one of the limits Open sets (sqlite3_limit), or bounds.c's
// refusal of a long trim set, saying what the limit is; nil for any
// other message.
func (e *Executor) limitError(msg string) *text2sql.SQLError {
	var advice string
	switch {
	case strings.HasPrefix(msg, "LIKE or GLOB pattern too complex"):
		advice = fmt.Sprintf("LIKE and GLOB patterns are limited to %d bytes", e.opts.MaxLikePattern)
	case strings.HasPrefix(msg, "too many columns"):
		advice = fmt.Sprintf("a statement may have %d result columns", e.maxColumns)
	case strings.HasPrefix(msg, "too many arguments on function"):
		advice = fmt.Sprintf("a function call may have %d arguments", maxFunctionArgs)
	case strings.HasPrefix(msg, "Expression tree is too large"):
		advice = fmt.Sprintf("expressions may nest %d deep", maxExprDepth)
	case strings.HasPrefix(msg, "too many terms in compound SELECT"):
		advice = fmt.Sprintf("a compound SELECT may have %d terms", maxCompoundSelect)
	case strings.HasPrefix(msg, "trim: the set of characters"):
		advice = "trim a few characters at a time"
	default:
		return nil
	}
	return &text2sql.SQLError{Kind: text2sql.KindTooLarge, Message: msg + " (" + advice + ")"}
}

// Check runs the checks of Execute without running the statement:
// guard.CheckShape, then preparing it on a guarded connection (the authorizer
// runs at prepare time) and sqlite3_stmt_readonly. It returns nil, or a
// *text2sql.SQLError: a refusal, or an error SQLite reports when it
// prepares the statement (syntax, unknown table or column, unknown
// function). Any other error means the executor cannot work.
func (e *Executor) Check(ctx context.Context, query string) error {
	if e.closed.Load() {
		return executor.ErrClosed
	}
	q, se := e.shape(query)
	if se != nil {
		return se
	}
	_, timeout := execkit.Limits(text2sql.ExecuteRequest{}, e.opts.MaxRows, e.opts.Timeout)
	err := e.withConn(ctx, timeout, func(c *guardedConn) error {
		ds, err := c.SQLiteConn.PrepareContext(ctx, q)
		if err == nil {
			if !ds.(*sqlite3.SQLiteStmt).Readonly() {
				err = errNotReadOnlyStmt
			}
			ds.Close()
		}
		if err != nil && ctx.Err() == nil {
			se = e.sqlError(c, err, q, timeout)
		}
		return err
	})
	if se != nil {
		return se
	}
	if errors.Is(err, errPoolWait) {
		return execkit.TimeoutError(timeout)
	}
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return err
	}
	return nil
}

// connector opens guarded connections: the go-sqlite3 driver on a
// read-only DSN, then the limits and the authorizer on each new
// connection. A connector per Executor (rather than one globally
// registered driver) lets each executor have its own allow-list.
type connector struct {
	dsn    string
	limits map[int]int
	allow  map[string]bool
	noAuth bool
	calls  *atomic.Int64
}

var baseDriver = &sqlite3.SQLiteDriver{}

// Connect opens one connection.
func (c *connector) Connect(context.Context) (driver.Conn, error) {
	dc, err := baseDriver.Open(c.dsn)
	if err != nil {
		return nil, err
	}
	conn := dc.(*sqlite3.SQLiteConn)
	for id, v := range c.limits {
		conn.SetLimit(id, v)
	}
	for id, v := range c.limits {
		if got := conn.GetLimit(id); got > v {
			conn.Close()
			return nil, fmt.Errorf("sqlite: limit %d is %d, want at most %d", id, got, v)
		}
	}
	if err := registerBounded(conn); err != nil {
		conn.Close()
		return nil, err
	}
	db := dbHandle(conn)
	g := &guardedConn{SQLiteConn: conn, auth: &authState{allow: c.allow, calls: c.calls}, watch: newWatchdog(db)}
	if !c.noAuth {
		if err := g.auth.install(db); err != nil {
			conn.Close()
			return nil, err
		}
	}
	return g, nil
}

// Driver returns the underlying go-sqlite3 driver.
func (c *connector) Driver() driver.Driver { return baseDriver }

// guardedConn is a go-sqlite3 connection with its authorizer state and
// its time limit. It resets the authorizer's record before each statement
// it is given.
type guardedConn struct {
	*sqlite3.SQLiteConn
	auth  *authState
	watch *watchdog
}

// Close closes the connection, then frees its authorizer's state.
func (g *guardedConn) Close() error {
	g.watch.stop()
	if err := g.SQLiteConn.Close(); err != nil {
		return err // SQLite may still call the authorizer: its state stays
	}
	g.auth.free()
	return nil
}

func (g *guardedConn) Prepare(query string) (driver.Stmt, error) {
	g.auth.reset()
	return g.SQLiteConn.Prepare(query)
}

func (g *guardedConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	g.auth.reset()
	return g.SQLiteConn.PrepareContext(ctx, query)
}

func (g *guardedConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	g.auth.reset()
	return g.SQLiteConn.QueryContext(ctx, query, args)
}

func (g *guardedConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	g.auth.reset()
	return g.SQLiteConn.ExecContext(ctx, query, args)
}

// Package lint decides whether a statement that may run (package guard
// decides that) will answer the question, and tells the repair loop what
// to change: deterministic checks run on generated SQL before any judge
// call — cheap, lexical and schema-based, no model and (unless a probe is
// configured) no database access — and the reading of the errors engines
// raise. Security is not its business: nothing here allows or refuses a
// statement.
//
// Check reports failures — names that do not exist in the schema model
// (tables, columns, aliases; CTEs, subquery aliases and select-list
// aliases are resolved) and constructs of another dialect (TOP on SQLite,
// ILIKE on MySQL, backticks on PostgreSQL…) — as *text2sql.SQLError values
// of the kinds KindUnknownTable, KindUnknownColumn and KindDialect, each
// with a hint where one is known (the closest real name). A pipeline sends
// failures back to the generator like execution errors.
//
// Warn reports what is legal but often wrong, for a judge to weigh:
// integer division in a ratio, comparison with NULL, ORDER BY … LIMIT over
// a column with NULLs or over numbers stored as text, an empty result, a
// LIMIT that cuts through ties. Some warnings need data: they come from
// the execution result when one is given, from cheap probe queries when
// the Checker has a probe executor (WithProbe), and otherwise from the
// schema model (declared NOT NULL, primary keys), worded as a possibility.
//
// The checks are conservative: a construct the checker does not
// understand is never a failure. Every Spider dev and BIRD mini-dev gold
// query passes without failure (see the tests).
//
// EngineError reads an error an engine raised into the same
// *text2sql.SQLError: its kind from the engine's error code where the
// executor knows it (SQLSTATE, MySQL error number, SQLite result code),
// else from the message (Classify), and for unknown tables and columns
// the hint of Suggest.
package lint

import (
	"context"
	"strings"
	"time"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/sqltext"
	"github.com/text2sql-go/text2sql/schema"
)

// Checker runs the deterministic checks for one database. It is safe for
// concurrent use; it never modifies the schema model.
type Checker struct {
	db      *schema.Database
	dialect text2sql.Dialect
	probe   text2sql.Executor
	// probeTimeout bounds each probe query.
	probeTimeout time.Duration
	// maxProbes bounds the probe queries of one Warn call.
	maxProbes int
}

// Probe defaults.
const (
	// DefaultProbeTimeout bounds each probe query.
	DefaultProbeTimeout = 2 * time.Second
	// DefaultMaxProbes bounds the probe queries of one Warn call.
	DefaultMaxProbes = 4
	// probeSample is the number of non-NULL values a probe reads to tell
	// whether a text column holds numbers.
	probeSample = 20
)

// New returns a Checker for db in dialect. An empty dialect means
// db.Dialect, else SQLite. db may be nil: the name checks are then
// skipped and only the dialect checks and warnings that need no schema
// run.
func New(db *schema.Database, dialect text2sql.Dialect) *Checker {
	if dialect == "" && db != nil {
		dialect = db.Dialect
	}
	switch dialect {
	case text2sql.DialectSQLite, text2sql.DialectPostgres, text2sql.DialectMySQL:
	default:
		dialect = text2sql.DialectSQLite
	}
	return &Checker{db: db, dialect: dialect, probeTimeout: DefaultProbeTimeout, maxProbes: DefaultMaxProbes}
}

var _ text2sql.Checker = (*Checker)(nil)

// WithProbe returns a copy of c that runs probe queries through ex in
// Warn: at most DefaultMaxProbes read-only SELECTs per call, built from
// the schema model's quoted names (never from the checked SQL, except the
// tie probe, which reruns the checked query with its LIMIT raised by one
// and its ORDER BY keys added to the select list), each bounded by
// DefaultProbeTimeout and a small row cap. Use the same guarded executor
// as the pipeline. A probe that fails or returns an SQL error simply gives
// no warning.
func (c *Checker) WithProbe(ex text2sql.Executor) *Checker {
	cp := *c
	cp.probe = ex
	return &cp
}

// Dialect returns the dialect c checks for.
func (c *Checker) Dialect() text2sql.Dialect { return c.dialect }

// Report is the outcome of Check.
type Report struct {
	// Failures are errors the SQL certainly has: KindUnknownTable,
	// KindUnknownColumn or KindDialect, in the order found, each once.
	Failures []*text2sql.SQLError
	// Warnings are the static warnings (no result, no probe), each
	// "kind: message" where kind is one of the Warn* constants.
	Warnings []string
}

// OK reports whether r has no failures.
func (r Report) OK() bool { return len(r.Failures) == 0 }

// Err returns nil when r has no failures, else one *text2sql.SQLError
// standing for all of them, fit for Result.Error: the first failure's
// kind, the messages joined with "; " and the hints joined with "; ".
func (r Report) Err() *text2sql.SQLError {
	switch len(r.Failures) {
	case 0:
		return nil
	case 1:
		e := *r.Failures[0]
		return &e
	}
	var msgs, hints []string
	for _, f := range r.Failures {
		msgs = append(msgs, f.Message)
		if f.Hint != "" {
			hints = append(hints, f.Hint)
		}
	}
	return &text2sql.SQLError{Kind: r.Failures[0].Kind, Message: strings.Join(msgs, "; "), Hint: strings.Join(hints, "; ")}
}

// Check runs the static checks on sql: names against the schema model
// and constructs of another dialect, plus the warnings that need neither
// data nor a result. It never panics and never touches a database.
//
// Text that is not exactly one statement yields an empty report: refusing
// it is the guard's job. Whatever the checker cannot parse with certainty
// is left alone.
func (c *Checker) Check(sql string) Report {
	a := c.analyze(sql)
	return Report{Failures: a.fails, Warnings: a.warnings}
}

// Failure is Check(sql).Err(): nil, or one *text2sql.SQLError standing
// for every failure of sql. It lets the Checker satisfy a one-method
// interface in a package that cannot import this one.
func (c *Checker) Failure(sql string) *text2sql.SQLError { return c.Check(sql).Err() }

// Warn returns every warning about sql for a judge: the static ones of
// Check, then those that need data — from res (the execution result;
// nil when it has not run) and, with WithProbe, from probe queries, else
// from the schema model. Each warning is "kind: message" with a kind of
// the Warn* constants. It returns nil when there is nothing to say.
// ctx bounds the probes; when it ends, the remaining probes are skipped.
func (c *Checker) Warn(ctx context.Context, sql string, res *text2sql.Result) []string {
	a := c.analyze(sql)
	w := &warner{c: c, a: a, res: res, ctx: ctx, probes: c.maxProbes}
	return w.run()
}

// analysis is the parse of one statement.
type analysis struct {
	sql      string
	toks     []sqltext.Token
	fails    []*text2sql.SQLError
	warnings []string
	p        *parser // nil when the text is not one statement
}

func (c *Checker) analyze(sql string) *analysis {
	// MySQL-target text is lexed by MySQL's rules ("…" strings, backslash
	// escapes, "#" comments), every other by the standard ones.
	statements, strip := sqltext.Statements, sqltext.StripTrailing
	if c.dialect == text2sql.DialectMySQL {
		statements = func(s string) []string { return sqltext.StatementsMySQL(s, sqltext.MySQLMode{}) }
		strip = func(s string) string { return sqltext.StripTrailingMySQL(s, sqltext.MySQLMode{}) }
	}
	stmts := statements(sql)
	if len(stmts) != 1 {
		return &analysis{sql: sql}
	}
	text := strip(stmts[0])
	p := newParser(c, text)
	a := &analysis{sql: text, toks: p.toks}
	a.fails = append(a.fails, dialectFailures(c.dialect, text, p.toks)...)
	p.run()
	a.p = p
	if c.db != nil && !p.unsure {
		a.fails = append(a.fails, p.fails...)
	}
	a.fails = dedupe(a.fails)
	a.warnings = staticWarnings(c, p)
	return a
}

func dedupe(fs []*text2sql.SQLError) []*text2sql.SQLError {
	seen := map[string]bool{}
	var out []*text2sql.SQLError
	for _, f := range fs {
		k := string(f.Kind) + "\x00" + f.Message
		if !seen[k] {
			seen[k] = true
			out = append(out, f)
		}
	}
	return out
}

// Executor returns an Executor that runs Check before next: a statement
// with failures is not executed and comes back as a Result whose Error is
// Report.Err() (a refusal when the first failure is KindDialect, else an
// unknown table or column), as an engine error would; anything else is
// passed to next unchanged. It lets a pipeline feed check failures to the
// generator like execution errors without another stage.
func (c *Checker) Executor(next text2sql.Executor) text2sql.Executor {
	return text2sql.ExecutorFunc(func(ctx context.Context, req text2sql.ExecuteRequest) (*text2sql.Result, error) {
		start := time.Now()
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if e := c.Failure(req.SQL); e != nil {
			return &text2sql.Result{Error: e, Duration: time.Since(start)}, nil
		}
		return next.Execute(ctx, req)
	})
}

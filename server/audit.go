package server

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"time"

	"github.com/text2sql-go/text2sql/schema"
)

// AuditEvent records one statement the service ran or refused on a
// caller's behalf: every execution of /v1/run, each executed attempt of
// /v1/ask, and the MCP tools run_sql and ask. Answer-key queries are not
// audited.
type AuditEvent struct {
	Time      time.Time // when the statement finished
	RequestID string    // the HTTP request id; "" for MCP over stdio
	// Principal is the caller's Principal.ID; Method how it was
	// authenticated.
	Principal string
	Method    string
	// Source is the entry point: "POST /v1/run", "POST /v1/ask",
	// "mcp run_sql", "mcp ask".
	Source     string
	Question   string // the question asked; "" for run
	QuestionID string // run's question_id, when given
	SQL        string // the statement, as sent to the guard
	// Outcome is "ok", "cached" (the rows of an earlier run, delivered
	// from the answer cache: no statement ran, Duration is 0), "saved"
	// (a saved answer's rows, delivered while its data version is
	// unchanged: no statement ran either), or the
	// error kind of the refusal or failure (text2sql.ErrorKind:
	// "not_read_only", "syntax", …).
	Outcome   string
	Message   string // the refusal or error message; "" when ok
	RowCount  int    // rows returned (at most the row cap)
	Truncated bool   // more rows existed than the cap
	// Duration is the statement's execution time as the executor measured
	// it (0 for a refusal decided before execution).
	Duration time.Duration
}

// Auditor receives audit events. Audit is called synchronously after each
// statement, from many goroutines at once. An error is logged and, unless
// Config.AuditFailOpen is set, fails the request with 503
// audit_unavailable: the rows or outcome it recorded are withheld.
type Auditor interface {
	Audit(ctx context.Context, e AuditEvent) error
}

// AuditorFunc lets a plain function serve as an Auditor.
type AuditorFunc func(ctx context.Context, e AuditEvent) error

// Audit calls f.
func (f AuditorFunc) Audit(ctx context.Context, e AuditEvent) error { return f(ctx, e) }

// SlogAuditor writes each event as one log record, message "audit", at
// level Info (ok) or Warn (refused or failed). It is the default Auditor,
// on Config.Logger.
type SlogAuditor struct {
	Logger *slog.Logger // nil means slog.Default()
}

// Audit implements Auditor.
func (a SlogAuditor) Audit(ctx context.Context, e AuditEvent) error {
	l := a.Logger
	if l == nil {
		l = slog.Default()
	}
	level := slog.LevelInfo
	if e.Outcome != "ok" {
		level = slog.LevelWarn
	}
	attrs := []slog.Attr{
		slog.String("request_id", e.RequestID),
		slog.String("principal", e.Principal),
		slog.String("source", e.Source),
		slog.String("outcome", e.Outcome),
		slog.Int("row_count", e.RowCount),
		slog.Bool("truncated", e.Truncated),
		slog.Float64("duration_ms", ms(e.Duration)),
		slog.String("sql", e.SQL),
	}
	if e.Question != "" {
		attrs = append(attrs, slog.String("question", e.Question))
	}
	if e.QuestionID != "" {
		attrs = append(attrs, slog.String("question_id", e.QuestionID))
	}
	if e.Message != "" {
		attrs = append(attrs, slog.String("message", e.Message))
	}
	l.LogAttrs(ctx, level, "audit", attrs...)
	return nil
}

// SQLAuditor appends events to a table of a database/sql database: an
// append-only audit log. NewSQLAuditor creates the table when missing,
// with SQLite types (NewPostgresAuditor: PostgreSQL's); the database must be writable (keep it apart from
// the read-only database questions run against). It is safe for
// concurrent use.
type SQLAuditor struct {
	db     *sql.DB
	insert string
	pg     bool // PostgreSQL: timestamptz and boolean columns, $n parameters
}

var identRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,62}$`)

// auditTable checks an auditor's database and table name ("" means
// "text2sql_audit") and returns the name.
func auditTable(db *sql.DB, table string) (string, error) {
	if db == nil {
		return "", errors.New("server: audit: no database")
	}
	if table == "" {
		table = schema.AuditTable
	}
	if !identRe.MatchString(table) {
		return "", fmt.Errorf("server: audit: %q is not a plain table name", table)
	}
	return table, nil
}

// NewSQLAuditor creates table (a plain identifier; "" means
// "text2sql_audit") in db if it does not exist and returns an Auditor
// inserting into it. The columns are id, time (RFC 3339 UTC with
// nanoseconds), request_id, principal, method, source, question,
// question_id, sql, outcome, message, row_count, truncated (0/1) and
// duration_ms.
func NewSQLAuditor(ctx context.Context, db *sql.DB, table string) (*SQLAuditor, error) {
	table, err := auditTable(db, table)
	if err != nil {
		return nil, err
	}
	ddl := `CREATE TABLE IF NOT EXISTS ` + table + ` (
	id          INTEGER PRIMARY KEY AUTOINCREMENT,
	time        TEXT    NOT NULL,
	request_id  TEXT    NOT NULL,
	principal   TEXT    NOT NULL,
	method      TEXT    NOT NULL,
	source      TEXT    NOT NULL,
	question    TEXT    NOT NULL,
	question_id TEXT    NOT NULL,
	sql         TEXT    NOT NULL,
	outcome     TEXT    NOT NULL,
	message     TEXT    NOT NULL,
	row_count   INTEGER NOT NULL,
	truncated   INTEGER NOT NULL,
	duration_ms REAL    NOT NULL
)`
	if _, err := db.ExecContext(ctx, ddl); err != nil {
		return nil, fmt.Errorf("server: audit: creating %s: %w", table, err)
	}
	return &SQLAuditor{db: db, insert: `INSERT INTO ` + table + ` (` + auditColumns + `)
		 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`}, nil
}

// auditColumns are the columns an event fills, in the order of Audit's
// parameters.
const auditColumns = "time, request_id, principal, method, source, question, question_id, sql, outcome, message, row_count, truncated, duration_ms"

// NewPostgresAuditor returns an Auditor appending to table (a plain
// identifier; "" means "text2sql_audit", in the first schema of the
// search_path) of a PostgreSQL database, for replicas that share one
// audit log where the data is. db must use a PostgreSQL driver (pgx's
// stdlib); bound its pool (SetMaxOpenConns) below the server's connection
// limit, as Audit runs once per statement from every request.
//
// When the table is missing it is created (id bigint identity, time
// timestamptz, the text columns of NewSQLAuditor, row_count integer,
// truncated boolean, duration_ms double precision), which needs CREATE on
// the schema; with the table in place the role needs only INSERT on it,
// which keeps the log append-only for the service:
//
//	GRANT INSERT ON text2sql_audit TO text2sql_service;
//
// (no SELECT, UPDATE or DELETE; identity columns need no sequence grant).
// Errors: a bad table name, an unreachable database, or a missing table
// that cannot be created.
func NewPostgresAuditor(ctx context.Context, db *sql.DB, table string) (*SQLAuditor, error) {
	table, err := auditTable(db, table)
	if err != nil {
		return nil, err
	}
	var exists bool
	if err := db.QueryRowContext(ctx, `SELECT to_regclass($1) IS NOT NULL`, table).Scan(&exists); err != nil {
		return nil, fmt.Errorf("server: audit: %w", err)
	}
	if !exists {
		ddl := `CREATE TABLE IF NOT EXISTS ` + table + ` (
	id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	time        timestamptz      NOT NULL,
	request_id  text             NOT NULL,
	principal   text             NOT NULL,
	method      text             NOT NULL,
	source      text             NOT NULL,
	question    text             NOT NULL,
	question_id text             NOT NULL,
	sql         text             NOT NULL,
	outcome     text             NOT NULL,
	message     text             NOT NULL,
	row_count   integer          NOT NULL,
	truncated   boolean          NOT NULL,
	duration_ms double precision NOT NULL
)`
		if err := createOnce(ctx, db, table, ddl); err != nil {
			return nil, fmt.Errorf("server: audit: creating %s (grant CREATE, or create it as its owner): %w", table, err)
		}
	}
	return &SQLAuditor{db: db, pg: true, insert: `INSERT INTO ` + table + ` (` + auditColumns + `)
		 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`}, nil
}

// createOnce runs ddl under a transaction-level advisory lock on the
// table's name: replicas starting together on a new database would
// otherwise race in CREATE TABLE IF NOT EXISTS, which PostgreSQL does
// not make safe against a concurrent create (42P07, or 23505 on
// pg_type), and one of them would exit.
func createOnce(ctx context.Context, db *sql.DB, table, ddl string) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // after Commit it is a no-op
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtext($1))`, "text2sql audit "+table); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, ddl); err != nil {
		return err
	}
	return tx.Commit()
}

// Audit implements Auditor. It runs on a context detached from the
// request's cancellation, so a client hanging up does not lose the
// record.
func (a *SQLAuditor) Audit(ctx context.Context, e AuditEvent) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	var when, trunc any = e.Time.UTC().Format(time.RFC3339Nano), 0
	switch {
	case a.pg:
		when, trunc = e.Time.UTC(), e.Truncated
	case e.Truncated:
		trunc = 1
	}
	_, err := a.db.ExecContext(ctx, a.insert, when, e.RequestID, e.Principal, e.Method, e.Source,
		e.Question, e.QuestionID, e.SQL, e.Outcome, e.Message, e.RowCount, trunc, ms(e.Duration))
	if err != nil {
		return fmt.Errorf("server: audit: %w", err)
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// Ping implements AuditPinger: whether the audit database answers now,
// as PingProbe tells it: a pool whose every connection is busy writing
// records counts as reachable, so a burst of requests does not wait for
// a connection only to ping (200 concurrent runs over 4 connections got
// 503s). Should the database fail meanwhile, the record's own failure
// still withholds the rows.
func (a *SQLAuditor) Ping(ctx context.Context) error { return PingProbe(a.db)(ctx) }

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	mysqldrv "github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/spf13/cobra"

	"github.com/text2sql-go/text2sql/executor"
	"github.com/text2sql-go/text2sql/executor/mysql"
	"github.com/text2sql-go/text2sql/executor/postgres"
)

// defaultGrantUser is the login text2sql grant creates unless --user names
// another.
const defaultGrantUser = "text2sql_reader"

// passwordPlaceholder stands for the new login's password in the printed
// SQL: the user replaces it before running the script.
const passwordPlaceholder = "change-me"

// grantSpec is what a grant script is made of.
type grantSpec struct {
	User     string   // the login to create
	Database string   // PostgreSQL: the database the login may connect to
	Schemas  []string // PostgreSQL schemas, or MySQL databases, it may read
	// The login's own bounds, for the paths that cannot set them per
	// statement (--mcp, PostgREST, a sandbox function); 0 leaves one out.
	// StatementTimeout becomes PostgreSQL's statement_timeout (whole
	// milliseconds) or MariaDB's MAX_STATEMENT_TIME (seconds);
	// IdleTimeout PostgreSQL's idle_in_transaction_session_timeout
	// (milliseconds); ClientCheck PostgreSQL's
	// client_connection_check_interval (milliseconds); WorkMem and
	// TempFileLimit, in bytes, PostgreSQL's work_mem and temp_file_limit
	// (whole kB).
	StatementTimeout, IdleTimeout, ClientCheck time.Duration
	WorkMem, TempFileLimit                     int64
	// MemberOf are PostgreSQL roles the login becomes a member of: the
	// roles serve --run-as switches to per caller.
	MemberOf []string
}

// grantFlags are the flags of the grant command.
type grantFlags struct {
	spec                   grantSpec
	schemas                []string
	workMem, tempFileLimit string
}

// grantLong is the grant command's help.
const grantLong = `Print, on standard output, the SQL that creates a login which can only read:
run it yourself (as a superuser or the tables' owner) after replacing the
password placeholder ` + passwordPlaceholder + `, then give text2sql that login's DSN.
Nothing is executed.

PostgreSQL: CREATE ROLE ... LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE
NOREPLICATION NOBYPASSRLS, default_transaction_read_only on the role,
CONNECT on the DSN's database, USAGE and SELECT on all tables of each
schema, and default privileges so that tables created later in those
schemas by the role running the script are readable too. The schemas are
--schema, or else every non-system schema of the DSN's database: grant then
connects to list them (and only reads the catalog). --member-of ROLE makes
the login a member of a role serve --run-as switches to (see the README's
"Who can read what").

MySQL/MariaDB: CREATE USER ... IDENTIFIED BY the placeholder and GRANT
SELECT ON db.* for the DSN's database (or each --schema), nothing else.
The account's host is '%'; narrow it to where text2sql runs.

The login also carries server-side bounds, so that paths which cannot set
them per statement (--mcp, PostgREST, a sandbox function) are bounded by
the login itself: PostgreSQL statement_timeout, idle_in_transaction_session_timeout,
client_connection_check_interval (a statement whose client went away
stops), work_mem and temp_file_limit (the last can be set only by a
superuser: it comes after COMMIT, so run by the tables' owner it fails
alone); MariaDB MAX_STATEMENT_TIME (MySQL has no per-account limit). The
defaults are the executors' own (--statement-timeout 10s, --idle-timeout
10s, --work-mem 16MB, --temp-file-limit 512MB) and --client-check 1s; 0
leaves a bound out.

Such a login keeps a statement that slipped past the guard from using a
superuser's powers: COPY ... TO PROGRAM, pg_read_file and lo_import on
PostgreSQL, INTO OUTFILE and LOAD_FILE (the FILE privilege) on MySQL.`

func grantCmd(o *options) *cobra.Command {
	f := &grantFlags{}
	c := &cobra.Command{
		Use:   "grant --dsn DSN [--schema NAME ...] [--user NAME]",
		Short: "Print the SQL that creates a read-only login for text2sql (nothing is executed)",
		Long:  grantLong,
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return runGrant(cmd, o, f) },
	}
	spec := &f.spec
	fl := c.Flags()
	fl.StringArrayVar(&f.schemas, "schema", nil, "schema (PostgreSQL) or database (MySQL) the login may read; repeatable (default: PostgreSQL every non-system schema, MySQL the DSN's database)")
	fl.StringVar(&spec.User, "user", defaultGrantUser, "name of the login to create")
	fl.StringArrayVar(&spec.MemberOf, "member-of", nil, "PostgreSQL: a role the login may switch to (serve --run-as), e.g. a NOLOGIN role under row-level security; repeatable")
	fl.DurationVar(&spec.StatementTimeout, "statement-timeout", executor.DefaultTimeout, "the login's statement time limit: PostgreSQL statement_timeout, MariaDB MAX_STATEMENT_TIME (0: none)")
	fl.DurationVar(&spec.IdleTimeout, "idle-timeout", executor.DefaultTimeout, "PostgreSQL: the login's idle_in_transaction_session_timeout (0: none)")
	fl.DurationVar(&spec.ClientCheck, "client-check", defaultClientCheck, "PostgreSQL 14+: the login's client_connection_check_interval, how soon a statement whose client went away stops (0: none)")
	fl.StringVar(&f.workMem, "work-mem", sizeFlag(postgres.DefaultWorkMem), "PostgreSQL: the login's work_mem, per sort or hash, in kB, MB or GB (0: none)")
	fl.StringVar(&f.tempFileLimit, "temp-file-limit", sizeFlag(postgres.DefaultTempFileLimit), "PostgreSQL: the login's temp_file_limit, in kB, MB or GB (0: none)")
	return c
}

// runGrant checks the flags, completes the spec from the DSN and prints
// the grant script of the DSN's engine.
func runGrant(cmd *cobra.Command, o *options, f *grantFlags) error {
	spec := f.spec
	switch {
	case o.dsn == "":
		return usageError("grant needs --dsn: the PostgreSQL or MySQL/MariaDB database to read")
	case strings.TrimSpace(spec.User) == "":
		return usageError("--user must name the login to create")
	case spec.StatementTimeout < 0 || spec.IdleTimeout < 0 || spec.ClientCheck < 0:
		return usageError("--statement-timeout, --idle-timeout and --client-check must be 0 (none) or more")
	case len(spec.MemberOf) > 0 && !isPostgresDSN(o.dsn):
		return usageError("--member-of is for PostgreSQL roles (MySQL/MariaDB: --login-map gives each principal a login)")
	}
	var err error
	if spec.WorkMem, err = parseSize(f.workMem); err != nil {
		return usageError("--work-mem: %v", err)
	}
	if spec.TempFileLimit, err = parseSize(f.tempFileLimit); err != nil {
		return usageError("--temp-file-limit: %v", err)
	}
	spec.Schemas = f.schemas
	switch {
	case isPostgresDSN(o.dsn):
		return postgresGrant(cmd.Context(), cmd.OutOrStdout(), o.dsn, spec)
	case mysql.IsDSN(o.dsn):
		return mysqlGrant(cmd.OutOrStdout(), o.dsn, spec)
	}
	return usageError("--dsn must be a postgres://… or mysql://… DSN")
}

// postgresGrant writes the PostgreSQL grant script for the database of
// dsn; without spec.Schemas, for every non-system schema of it (read
// from the catalog).
func postgresGrant(ctx context.Context, out io.Writer, dsn string, spec grantSpec) error {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return usageError("--dsn: %v", err) // pgx masks the password
	}
	spec.Database = cfg.Database
	if len(spec.Schemas) == 0 {
		if spec.Schemas, err = postgresSchemas(ctx, cfg); err != nil {
			return err
		}
	}
	return writePostgresGrant(out, spec)
}

// mysqlGrant writes the MySQL/MariaDB grant script; without
// spec.Schemas, for the database of dsn.
func mysqlGrant(out io.Writer, dsn string, spec grantSpec) error {
	d, err := mysql.DSN(dsn)
	if err != nil {
		return usageError("--dsn: %v", err)
	}
	cfg, err := mysqldrv.ParseDSN(d)
	if err != nil {
		return usageError("--dsn: %v", err) // the driver's errors do not repeat the DSN
	}
	if len(spec.Schemas) == 0 && cfg.DBName != "" {
		spec.Schemas = []string{cfg.DBName}
	}
	if len(spec.Schemas) == 0 {
		return usageError("name the database to read: in the DSN (mysql://user@host/db) or with --schema")
	}
	return writeMySQLGrant(out, spec)
}

// postgresSchemas lists the non-system schemas of cfg's database, in name
// order. It connects and reads pg_namespace; nothing else.
func postgresSchemas(ctx context.Context, cfg *pgx.ConnConfig) ([]string, error) {
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("grant: listing the schemas of database %s: %w", cfg.Database, err)
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(ctx, `SELECT nspname FROM pg_catalog.pg_namespace
		WHERE nspname NOT LIKE 'pg\_%' AND nspname <> 'information_schema' ORDER BY nspname`)
	if err != nil {
		return nil, fmt.Errorf("grant: listing the schemas of database %s: %w", cfg.Database, err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("grant: listing the schemas of database %s: %w", cfg.Database, err)
	}
	if len(names) == 0 {
		return nil, errors.New("grant: database " + cfg.Database + " has no schema outside the system ones: name one with --schema")
	}
	return names, nil
}

// The printed scripts quote every identifier, unlike schema.Quote (which
// quotes only where a query needs it): a role, schema or database name
// here may be any word, reserved in one engine or another.

// pgIdent quotes a PostgreSQL identifier.
func pgIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// myIdent quotes a MySQL/MariaDB identifier, or one part of an account
// name (user or host), with backticks.
func myIdent(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

// writePostgresGrant prints the PostgreSQL script for g, in one
// transaction so that a failure leaves nothing behind.
func writePostgresGrant(w io.Writer, g grantSpec) error {
	role := pgIdent(g.User)
	quoted := make([]string, len(g.Schemas))
	for i, s := range g.Schemas {
		quoted[i] = pgIdent(s)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "-- A read-only PostgreSQL login for text2sql: SELECT on the tables of schemas %s\n", strings.Join(quoted, ", "))
	fmt.Fprintf(&b, "-- of database %s, nothing else. Replace %s with a strong password, then run this\n", pgIdent(g.Database), passwordPlaceholder)
	b.WriteString("-- as a superuser or the owner of those tables (psql -f FILE). text2sql printed it and executed nothing.\n")
	b.WriteString("BEGIN;\n")
	fmt.Fprintf(&b, "CREATE ROLE %s LOGIN PASSWORD '%s' NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS;\n", role, passwordPlaceholder)
	fmt.Fprintf(&b, "ALTER ROLE %s SET default_transaction_read_only = on;\n", role)
	if g.StatementTimeout > 0 || g.IdleTimeout > 0 || g.ClientCheck > 0 || g.WorkMem > 0 {
		b.WriteString("-- Bounds on every statement of the login, also where text2sql cannot set them per statement (--mcp, PostgREST, a sandbox function).\n")
	}
	if g.StatementTimeout > 0 {
		fmt.Fprintf(&b, "ALTER ROLE %s SET statement_timeout = %d; -- milliseconds\n", role, g.StatementTimeout.Milliseconds())
	}
	if g.IdleTimeout > 0 {
		fmt.Fprintf(&b, "ALTER ROLE %s SET idle_in_transaction_session_timeout = %d; -- milliseconds\n", role, g.IdleTimeout.Milliseconds())
	}
	if g.ClientCheck > 0 {
		fmt.Fprintf(&b, "ALTER ROLE %s SET client_connection_check_interval = %d; -- milliseconds (PostgreSQL 14+): a statement whose client went away stops\n", role, g.ClientCheck.Milliseconds())
	}
	if g.WorkMem > 0 {
		fmt.Fprintf(&b, "ALTER ROLE %s SET work_mem = %d; -- kB, per sort or hash\n", role, max(g.WorkMem>>10, minWorkMemKB))
	}
	fmt.Fprintf(&b, "GRANT CONNECT ON DATABASE %s TO %s;\n", pgIdent(g.Database), role)
	for _, r := range g.MemberOf {
		fmt.Fprintf(&b, "GRANT %s TO %s; -- a role --run-as may switch to\n", pgIdent(r), role)
	}
	for _, s := range quoted {
		fmt.Fprintf(&b, "GRANT USAGE ON SCHEMA %s TO %s;\n", s, role)
		fmt.Fprintf(&b, "GRANT SELECT ON ALL TABLES IN SCHEMA %s TO %s;\n", s, role)
		fmt.Fprintf(&b, "ALTER DEFAULT PRIVILEGES IN SCHEMA %s GRANT SELECT ON TABLES TO %s; -- tables the role running this creates later\n", s, role)
	}
	b.WriteString("COMMIT;\n")
	if kb := g.TempFileLimit >> 10; kb > 0 {
		b.WriteString("-- temp_file_limit can be set only by a superuser: run this script as one. Run by the tables' owner,\n")
		b.WriteString("-- this last statement fails on its own (after COMMIT) and the login's temporary files stay unbounded.\n")
		fmt.Fprintf(&b, "ALTER ROLE %s SET temp_file_limit = %d; -- kB\n", role, kb)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeMySQLGrant prints the MySQL/MariaDB script for g.
func writeMySQLGrant(w io.Writer, g grantSpec) error {
	account := myIdent(g.User) + "@" + myIdent("%")
	quoted := make([]string, len(g.Schemas))
	for i, s := range g.Schemas {
		quoted[i] = myIdent(s)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "-- A read-only MySQL/MariaDB login for text2sql: SELECT on database %s, nothing else.\n", strings.Join(quoted, ", "))
	fmt.Fprintf(&b, "-- Replace %s with a strong password and '%%' with the host text2sql connects from,\n", passwordPlaceholder)
	b.WriteString("-- then run this as an account that may create users and grant (e.g. root). text2sql printed it and executed nothing.\n")
	fmt.Fprintf(&b, "CREATE USER %s IDENTIFIED BY '%s';\n", account, passwordPlaceholder)
	if g.StatementTimeout > 0 {
		b.WriteString("-- MariaDB: every statement of the login stops at this time limit, in seconds, also where text2sql cannot set one per\n")
		b.WriteString("-- statement. MySQL has no per-account limit (text2sql sets max_execution_time per statement): drop this line there.\n")
		fmt.Fprintf(&b, "ALTER USER %s WITH MAX_STATEMENT_TIME %s;\n", account, strconv.FormatFloat(g.StatementTimeout.Seconds(), 'f', -1, 64))
	}
	b.WriteString("-- max_allowed_packet, the largest string one function may build (REPEAT, SPACE, CONCAT, ...), is server-wide,\n")
	b.WriteString("-- not per account: keep it at MariaDB's default of 16 MiB or below (SET GLOBAL needs SUPER and applies to every login).\n")
	for _, s := range quoted {
		fmt.Fprintf(&b, "GRANT SELECT ON %s.* TO %s;\n", s, account)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// defaultClientCheck is --client-check's default: a statement whose
// client went away (a CLI or an MCP server that exited) stops within a
// second instead of running to its time limit; the check is one poll of
// the socket per interval.
const defaultClientCheck = time.Second

// minWorkMemKB is PostgreSQL's smallest work_mem, in kB.
const minWorkMemKB = 64

// sizeUnits are the units of a size flag, PostgreSQL's spelling.
var sizeUnits = []struct {
	suffix string
	shift  uint
}{{"kB", 10}, {"MB", 20}, {"GB", 30}, {"TB", 40}}

// parseSize reads a size flag: a whole number of kB, MB, GB or TB (case
// does not matter), or 0 for none; it returns bytes.
func parseSize(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "0" {
		return 0, nil
	}
	for _, u := range sizeUnits {
		if len(s) > len(u.suffix) && strings.EqualFold(s[len(s)-len(u.suffix):], u.suffix) {
			n, err := strconv.ParseInt(strings.TrimSpace(s[:len(s)-len(u.suffix)]), 10, 64)
			if err != nil || n < 0 || n > (1<<62)>>u.shift {
				return 0, fmt.Errorf("%q: want a whole number of kB, MB, GB or TB, or 0", s)
			}
			return n << u.shift, nil
		}
	}
	return 0, fmt.Errorf("%q: want a whole number of kB, MB, GB or TB, or 0", s)
}

// sizeFlag writes bytes as parseSize reads it, in the largest whole unit.
func sizeFlag(bytes int64) string {
	for i := len(sizeUnits) - 1; i >= 0; i-- {
		u := sizeUnits[i]
		if bytes >= 1<<u.shift && bytes%(1<<u.shift) == 0 {
			return strconv.FormatInt(bytes>>u.shift, 10) + u.suffix
		}
	}
	return "0"
}

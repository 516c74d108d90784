package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	mysqldrv "github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/spf13/cobra"

	"github.com/text2sql-go/text2sql/executor/mysql"
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
	// StatementTimeout, when positive, becomes the PostgreSQL login's
	// statement_timeout (whole milliseconds).
	StatementTimeout time.Duration
	// MemberOf are PostgreSQL roles the login becomes a member of: the
	// roles serve --run-as switches to per caller.
	MemberOf []string
}

func grantCmd(o *options) *cobra.Command {
	var (
		spec    grantSpec
		schemas []string
	)
	c := &cobra.Command{
		Use:   "grant --dsn DSN [--schema NAME ...] [--user NAME]",
		Short: "Print the SQL that creates a read-only login for text2sql (nothing is executed)",
		Long: `Print, on standard output, the SQL that creates a login which can only read:
run it yourself (as a superuser or the tables' owner) after replacing the
password placeholder ` + passwordPlaceholder + `, then give text2sql that login's DSN.
Nothing is executed.

PostgreSQL: CREATE ROLE ... LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE
NOREPLICATION NOBYPASSRLS, default_transaction_read_only on the role,
CONNECT on the DSN's database, USAGE and SELECT on all tables of each
schema, and default privileges so that tables created later in those
schemas by the role running the script are readable too. The schemas are
--schema, or else every non-system schema of the DSN's database: grant then
connects to list them (and only reads the catalog). --statement-timeout
also sets the role's statement_timeout; --member-of ROLE makes the login a
member of a role serve --run-as switches to (see the README's "Who can
read what").

MySQL/MariaDB: CREATE USER ... IDENTIFIED BY the placeholder and GRANT
SELECT ON db.* for the DSN's database (or each --schema), nothing else.
The account's host is '%'; narrow it to where text2sql runs.

Such a login keeps a statement that slipped past the guard from using a
superuser's powers: COPY ... TO PROGRAM, pg_read_file and lo_import on
PostgreSQL, INTO OUTFILE and LOAD_FILE (the FILE privilege) on MySQL.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			usage := func(format string, args ...any) error {
				return &exitErr{code: exitUsage, err: fmt.Errorf(format, args...)}
			}
			switch {
			case o.dsn == "":
				return usage("grant needs --dsn: the PostgreSQL or MySQL/MariaDB database to read")
			case strings.TrimSpace(spec.User) == "":
				return usage("--user must name the login to create")
			case spec.StatementTimeout < 0:
				return usage("--statement-timeout %v: must be 0 (none) or more", spec.StatementTimeout)
			case len(spec.MemberOf) > 0 && !isPostgresDSN(o.dsn):
				return usage("--member-of is for PostgreSQL roles (MySQL/MariaDB: --login-map gives each principal a login)")
			}
			spec.Schemas = schemas
			out := cmd.OutOrStdout()
			switch {
			case isPostgresDSN(o.dsn):
				cfg, err := pgx.ParseConfig(o.dsn)
				if err != nil {
					return usage("--dsn: %v", err) // pgx masks the password
				}
				spec.Database = cfg.Database
				if len(spec.Schemas) == 0 {
					if spec.Schemas, err = postgresSchemas(cmd.Context(), cfg); err != nil {
						return err
					}
				}
				return writePostgresGrant(out, spec)
			case mysql.IsDSN(o.dsn):
				if spec.StatementTimeout > 0 {
					return usage("--statement-timeout is for PostgreSQL; on MySQL/MariaDB the executor limits every statement itself")
				}
				d, err := mysql.DSN(o.dsn)
				if err != nil {
					return usage("--dsn: %v", err)
				}
				cfg, err := mysqldrv.ParseDSN(d)
				if err != nil {
					return usage("--dsn: %v", err) // the driver's errors do not repeat the DSN
				}
				if len(spec.Schemas) == 0 && cfg.DBName != "" {
					spec.Schemas = []string{cfg.DBName}
				}
				if len(spec.Schemas) == 0 {
					return usage("name the database to read: in the DSN (mysql://user@host/db) or with --schema")
				}
				return writeMySQLGrant(out, spec)
			}
			return usage("--dsn must be a postgres://… or mysql://… DSN")
		},
	}
	fl := c.Flags()
	fl.StringArrayVar(&schemas, "schema", nil, "schema (PostgreSQL) or database (MySQL) the login may read; repeatable (default: PostgreSQL every non-system schema, MySQL the DSN's database)")
	fl.StringVar(&spec.User, "user", defaultGrantUser, "name of the login to create")
	fl.StringArrayVar(&spec.MemberOf, "member-of", nil, "PostgreSQL: a role the login may switch to (serve --run-as), e.g. a NOLOGIN role under row-level security; repeatable")
	fl.DurationVar(&spec.StatementTimeout, "statement-timeout", 0, "PostgreSQL: also set the login's statement_timeout (0: none; the executor sets its own per query)")
	return c
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
	if g.StatementTimeout > 0 {
		fmt.Fprintf(&b, "ALTER ROLE %s SET statement_timeout = %d; -- milliseconds\n", role, g.StatementTimeout.Milliseconds())
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
	for _, s := range quoted {
		fmt.Fprintf(&b, "GRANT SELECT ON %s.* TO %s;\n", s, account)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

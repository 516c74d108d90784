package main

import (
	"bytes"
	"context"
	"database/sql"
	"net/url"
	"strings"
	"testing"
	"time"

	mysqldrv "github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/text2sql-go/text2sql/demo"
	"github.com/text2sql-go/text2sql/executor/postgres"
	"github.com/text2sql-go/text2sql/executor/sqlite"
	"github.com/text2sql-go/text2sql/internal/dbtest"
)

// The printed scripts, byte for byte: every identifier quoted for its
// engine, quote characters doubled.
func TestGrantScripts(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, writePostgresGrant(&b, grantSpec{User: `app "reader"`, Database: "shop db", Schemas: []string{"sales", "Order"},
		StatementTimeout: 30 * time.Second, IdleTimeout: time.Minute, ClientCheck: 2 * time.Second, WorkMem: 32 << 20, TempFileLimit: 1 << 30}))
	assert.Equal(t, `-- A read-only PostgreSQL login for text2sql: SELECT on the tables of schemas "sales", "Order"
-- of database "shop db", nothing else. Replace change-me with a strong password, then run this
-- as a superuser or the owner of those tables (psql -f FILE). text2sql printed it and executed nothing.
BEGIN;
CREATE ROLE "app ""reader""" LOGIN PASSWORD 'change-me' NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS;
ALTER ROLE "app ""reader""" SET default_transaction_read_only = on;
-- Bounds on every statement of the login, also where text2sql cannot set them per statement (--mcp, PostgREST, a sandbox function).
ALTER ROLE "app ""reader""" SET statement_timeout = 30000; -- milliseconds
ALTER ROLE "app ""reader""" SET idle_in_transaction_session_timeout = 60000; -- milliseconds
ALTER ROLE "app ""reader""" SET client_connection_check_interval = 2000; -- milliseconds (PostgreSQL 14+): a statement whose client went away stops
ALTER ROLE "app ""reader""" SET work_mem = 32768; -- kB, per sort or hash
GRANT CONNECT ON DATABASE "shop db" TO "app ""reader""";
GRANT USAGE ON SCHEMA "sales" TO "app ""reader""";
GRANT SELECT ON ALL TABLES IN SCHEMA "sales" TO "app ""reader""";
ALTER DEFAULT PRIVILEGES IN SCHEMA "sales" GRANT SELECT ON TABLES TO "app ""reader"""; -- tables the role running this creates later
GRANT USAGE ON SCHEMA "Order" TO "app ""reader""";
GRANT SELECT ON ALL TABLES IN SCHEMA "Order" TO "app ""reader""";
ALTER DEFAULT PRIVILEGES IN SCHEMA "Order" GRANT SELECT ON TABLES TO "app ""reader"""; -- tables the role running this creates later
COMMIT;
-- temp_file_limit can be set only by a superuser: run this script as one. Run by the tables' owner,
-- this last statement fails on its own (after COMMIT) and the login's temporary files stay unbounded.
ALTER ROLE "app ""reader""" SET temp_file_limit = 1048576; -- kB
`, b.String())
	// Without bounds, none is printed.
	b.Reset()
	require.NoError(t, writePostgresGrant(&b, grantSpec{User: "r", Database: "d", Schemas: []string{"s"}}))
	assert.NotContains(t, b.String(), "Bounds")
	assert.NotContains(t, b.String(), "_timeout")
	assert.NotContains(t, b.String(), "work_mem")
	assert.NotContains(t, b.String(), "temp_file_limit")

	b.Reset()
	require.NoError(t, writeMySQLGrant(&b, grantSpec{User: "app`reader", Schemas: []string{"shop", "order"}, StatementTimeout: 2500 * time.Millisecond}))
	assert.Equal(t, "-- A read-only MySQL/MariaDB login for text2sql: SELECT on database `shop`, `order`, nothing else.\n"+
		"-- Replace change-me with a strong password and '%' with the host text2sql connects from,\n"+
		"-- then run this as an account that may create users and grant (e.g. root). text2sql printed it and executed nothing.\n"+
		"CREATE USER `app``reader`@`%` IDENTIFIED BY 'change-me';\n"+
		"-- MariaDB: every statement of the login stops at this time limit, in seconds, also where text2sql cannot set one per\n"+
		"-- statement. MySQL has no per-account limit (text2sql sets max_execution_time per statement): drop this line there.\n"+
		"ALTER USER `app``reader`@`%` WITH MAX_STATEMENT_TIME 2.5;\n"+
		"-- max_allowed_packet, the largest string one function may build (REPEAT, SPACE, CONCAT, ...), is server-wide,\n"+
		"-- not per account: keep it at MariaDB's default of 16 MiB or below (SET GLOBAL needs SUPER and applies to every login).\n"+
		"GRANT SELECT ON `shop`.* TO `app``reader`@`%`;\n"+
		"GRANT SELECT ON `order`.* TO `app``reader`@`%`;\n", b.String())

	for _, args := range [][]string{
		{"grant"}, // no --dsn
		{"grant", "--dsn", "postgres://u@h/db", "--user", " "},
		{"grant", "--dsn", "root@tcp(127.0.0.1:3306)/"}, // no database
		{"grant", "--dsn", "postgres://u@h/db", "--schema", "s", "--statement-timeout", "-1s"},
		{"grant", "--dsn", "postgres://u@h/db", "--schema", "s", "--idle-timeout", "-1s"},
		{"grant", "--dsn", "postgres://u@h/db", "--schema", "s", "--client-check", "-1s"},
		{"grant", "--dsn", "postgres://u@h/db", "--schema", "s", "--work-mem", "16"},
		{"grant", "--dsn", "postgres://u@h/db", "--schema", "s", "--work-mem", "-1MB"},
		{"grant", "--dsn", "postgres://u@h/db", "--schema", "s", "--temp-file-limit", "1 PB"},
		{"grant", "--dsn", "postgres://u@h/db", "--schema", "s", "--temp-file-limit", "1e3MB"},
		{"grant", "--dsn", "sqlserver://h/db"},
	} {
		_, errOut, code := cli(t, args...)
		assert.Equal(t, exitUsage, code, "%v: %s", args, errOut)
	}
	for in, want := range map[string]int64{"0": 0, "64kB": 64 << 10, "16MB": 16 << 20, "16mb": 16 << 20, "2 GB": 2 << 30, "1TB": 1 << 40} {
		got, err := parseSize(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	assert.Equal(t, "16MB", sizeFlag(postgres.DefaultWorkMem))
	assert.Equal(t, "512MB", sizeFlag(postgres.DefaultTempFileLimit))
	assert.Equal(t, "1536kB", sizeFlag(1536<<10))
}

// withPassword replaces the password placeholder of a printed script.
func withPassword(script, pw string) string {
	return strings.ReplaceAll(script, "'"+passwordPlaceholder+"'", "'"+pw+"'")
}

// The printed PostgreSQL script, run by a superuser, makes a login that
// reads every schema of the database (found by grant itself) and can do
// nothing else: no write, no DDL, no server files or programs, even once
// it turns its session's read-only default off. text2sql run as that
// login works without the elevated-login warning that the superuser gets.
func TestGrantPostgres(t *testing.T) {
	admin, dsn := dbtest.Postgres(t)
	dbtest.Exec(t, admin,
		`CREATE SCHEMA sales`, `CREATE TABLE sales.orders (id int PRIMARY KEY, total numeric)`, `INSERT INTO sales.orders VALUES (1, 9.5), (2, 20)`,
		`CREATE SCHEMA "Mixed Case"`, `CREATE TABLE "Mixed Case"."Items" (id int)`, `INSERT INTO "Mixed Case"."Items" VALUES (7)`,
		`CREATE TABLE public.notes (n text)`)
	role := dbtest.Name("t2s_reader")
	// The bounds are the executors' defaults but the time limit.
	out, errOut, code := cli(t, "grant", "--dsn", dsn, "--user", role, "--statement-timeout", "1s")
	require.Equal(t, 0, code, errOut)
	for _, s := range []string{`"Mixed Case"`, `"public"`, `"sales"`} {
		assert.Contains(t, out, "GRANT SELECT ON ALL TABLES IN SCHEMA "+s+" TO \""+role+"\";")
	}
	assert.NotContains(t, out, "pg_catalog")
	assert.NotContains(t, out, "information_schema")

	const pw = "test-password-0123"
	t.Cleanup(func() {
		_, err := admin.Exec(`DROP OWNED BY ` + role)
		assert.NoError(t, err)
		_, err = admin.Exec(`DROP ROLE ` + role)
		assert.NoError(t, err)
	})
	_, err := admin.Exec(withPassword(out, pw))
	require.NoError(t, err)
	dbtest.Exec(t, admin, `CREATE TABLE sales.later (x int)`) // covered by the default privileges

	u, err := url.Parse(dsn)
	require.NoError(t, err)
	u.User = url.UserPassword(role, pw)
	roleDSN := u.String()
	db, err := sql.Open("pgx", roleDSN)
	require.NoError(t, err)
	defer db.Close()
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	require.NoError(t, err)
	defer conn.Close()

	var n int
	require.NoError(t, conn.QueryRowContext(ctx, `SELECT count(*) FROM sales.orders`).Scan(&n))
	assert.Equal(t, 2, n)
	require.NoError(t, conn.QueryRowContext(ctx, `SELECT count(*) FROM "Mixed Case"."Items"`).Scan(&n))
	require.NoError(t, conn.QueryRowContext(ctx, `SELECT count(*) FROM sales.later`).Scan(&n))
	for setting, want := range map[string]string{
		"default_transaction_read_only":       "on",
		"statement_timeout":                   "1s",
		"idle_in_transaction_session_timeout": "10s",
		"client_connection_check_interval":    "1s",
		"work_mem":                            "16MB",
		"temp_file_limit":                     "512MB",
	} {
		var got string
		require.NoError(t, conn.QueryRowContext(ctx, `SHOW `+setting).Scan(&got))
		assert.Equal(t, want, got, setting)
	}

	sqlstate := func(stmt string) string {
		_, err := conn.ExecContext(ctx, stmt)
		var pe *pgconn.PgError
		if !assert.ErrorAs(t, err, &pe, stmt) {
			return ""
		}
		return pe.Code
	}
	assert.Equal(t, "25006", sqlstate(`INSERT INTO sales.orders VALUES (3, 1)`), "read-only transaction")
	start := time.Now()
	assert.Equal(t, "57014", sqlstate(`SELECT pg_sleep(30)`), "statement_timeout") // query_canceled
	assert.Less(t, time.Since(start), 10*time.Second)
	_, err = conn.ExecContext(ctx, `SET default_transaction_read_only = off`) // a session may; the privileges still hold
	require.NoError(t, err)
	for _, stmt := range []string{
		`INSERT INTO sales.orders VALUES (3, 1)`,
		`UPDATE sales.orders SET total = 0`,
		`CREATE TABLE sales.x (a int)`,
		`CREATE TABLE public.x (a int)`,
		`CREATE SCHEMA x`,
		`SELECT pg_read_file('/etc/hostname')`,
		`SELECT pg_ls_dir('.')`,
		`SELECT lo_import('/etc/hostname')`,
		`COPY (SELECT 1) TO PROGRAM 'true'`,
		`COPY (SELECT 1) TO '/tmp/text2sql-grant-test'`,
	} {
		assert.Equal(t, "42501", sqlstate(stmt), stmt) // insufficient_privilege
	}
	require.NoError(t, admin.QueryRow(`SELECT count(*) FROM sales.orders WHERE total > 0`).Scan(&n))
	assert.Equal(t, 2, n, "the rows are unchanged")

	// The CLI as this login: no warning; as the superuser: one.
	wantElevatedWarning(t, roleDSN, dsn, "SELECT count(*) FROM sales.orders", "elevated privileges (superuser", "text2sql grant")
}

// wantElevatedWarning runs query through the CLI with --dsn limited (no
// elevated-login warning) and elevated (exactly one warning starting with
// marker, and hint in what it prints); both must succeed.
func wantElevatedWarning(t *testing.T, limited, elevated, query, marker, hint string) {
	t.Helper()
	_, errOut, code := cli(t, "run", "--dsn", limited, query)
	assert.Equal(t, 0, code, errOut)
	assert.NotContains(t, errOut, "elevated privileges")
	_, errOut, code = cli(t, "run", "--dsn", elevated, query)
	assert.Equal(t, 0, code, errOut)
	assert.Equal(t, 1, strings.Count(errOut, marker), errOut)
	assert.Contains(t, errOut, hint)
}

// The printed MySQL/MariaDB script makes an account with SELECT on the
// DSN's database and nothing else: no write, no DDL, no file access.
// text2sql run as that account works without the elevated-login warning
// that root gets.
func TestGrantMySQL(t *testing.T) {
	admin, dsn := dbtest.MySQL(t)
	dbtest.Exec(t, admin, "CREATE TABLE singer (id INT PRIMARY KEY, name TEXT)", "INSERT INTO singer VALUES (1, 'Ann'), (2, 'Bo')")
	user := dbtest.Name("t2s_reader")
	out, errOut, code := cli(t, "grant", "--dsn", dsn, "--user", user, "--statement-timeout", "1.5s")
	require.Equal(t, 0, code, errOut)
	cfg, err := mysqldrv.ParseDSN(dsn)
	require.NoError(t, err)
	assert.Contains(t, out, "GRANT SELECT ON `"+cfg.DBName+"`.* TO `"+user+"`@`%`;")

	const pw = "test-password-0123"
	t.Cleanup(func() {
		_, err := admin.Exec("DROP USER `" + user + "`@`%`")
		assert.NoError(t, err)
	})
	for _, stmt := range strings.Split(withPassword(out, pw), ";\n") {
		var lines []string
		for _, l := range strings.Split(stmt, "\n") {
			if !strings.HasPrefix(l, "--") {
				lines = append(lines, l)
			}
		}
		if s := strings.TrimSpace(strings.Join(lines, "\n")); s != "" {
			_, err := admin.Exec(s)
			require.NoError(t, err, s)
		}
	}

	ucfg := cfg.Clone()
	ucfg.User, ucfg.Passwd = user, pw
	db, err := sql.Open("mysql", ucfg.FormatDSN())
	require.NoError(t, err)
	defer db.Close()
	var n int
	require.NoError(t, db.QueryRow("SELECT count(*) FROM singer").Scan(&n))
	assert.Equal(t, 2, n)
	var grants []string
	rows, err := db.Query("SHOW GRANTS FOR CURRENT_USER")
	require.NoError(t, err)
	for rows.Next() {
		var g string
		require.NoError(t, rows.Scan(&g))
		grants = append(grants, g)
	}
	require.NoError(t, rows.Err())
	require.Len(t, grants, 2, "%q", grants) // USAGE (the account itself) and SELECT on the database
	assert.True(t, strings.HasPrefix(grants[0], "GRANT USAGE ON *.* TO "), grants[0])
	assert.True(t, strings.HasSuffix(grants[0], " WITH MAX_STATEMENT_TIME 1.500000"), grants[0])
	// The login's sessions carry the limit, and MariaDB stops a longer
	// statement at it.
	var limit float64
	require.NoError(t, db.QueryRow("SELECT @@max_statement_time").Scan(&limit))
	assert.Equal(t, 1.5, limit)
	start := time.Now()
	_, err = db.Exec("SELECT count(*) FROM information_schema.collations a, information_schema.collations b, information_schema.collations c, information_schema.collations d")
	var timedOut *mysqldrv.MySQLError
	if assert.ErrorAs(t, err, &timedOut) {
		assert.Equal(t, uint16(1969), timedOut.Number, "%v", err) // ER_STATEMENT_TIMEOUT
	}
	assert.Less(t, time.Since(start), 10*time.Second)
	assert.Equal(t, "GRANT SELECT ON `"+cfg.DBName+"`.* TO `"+user+"`@`%`", grants[1])

	for _, stmt := range []string{
		"INSERT INTO singer VALUES (3, 'Cy')",
		"UPDATE singer SET name = 'x'",
		"CREATE TABLE x (a INT)",
		"DROP TABLE singer",
		"SELECT 1 INTO OUTFILE '/tmp/text2sql-grant-test'",
		"CREATE DATABASE " + user,
	} {
		_, err := db.Exec(stmt)
		var me *mysqldrv.MySQLError
		if assert.ErrorAs(t, err, &me, stmt) {
			assert.Contains(t, []uint16{1044, 1045, 1142, 1227}, me.Number, "%s: %v", stmt, err) // access denied
		}
	}
	var file sql.NullString
	require.NoError(t, db.QueryRow("SELECT LOAD_FILE('/etc/hostname')").Scan(&file))
	assert.False(t, file.Valid, "LOAD_FILE read a file without the FILE privilege")
	require.NoError(t, admin.QueryRow("SELECT count(*) FROM singer").Scan(&n))
	assert.Equal(t, 2, n)

	// The CLI as this account: no warning; as root: one.
	wantElevatedWarning(t, ucfg.FormatDSN(), dsn, "SELECT count(*) FROM singer", "elevated privileges (", "ALL PRIVILEGES ON *.*")
}

// The elevated-login warning, with a fake executor that reports powers:
// once, naming them and text2sql grant; nothing for a login that only
// reads or an executor that cannot tell.
func TestWarnElevated(t *testing.T) {
	path, err := demo.Ensure("")
	require.NoError(t, err)
	ex, err := sqlite.Open(path, sqlite.Options{})
	require.NoError(t, err)
	defer ex.Close()
	for _, tc := range []struct {
		ex   guarded
		want string
	}{
		{fakeLogin{ex, []string{"FILE privilege", "SUPER privilege"}}, "text2sql: warning: the database login has elevated privileges (FILE privilege, SUPER privilege)"},
		{fakeLogin{ex, nil}, ""},
		{ex, ""},
	} {
		var b bytes.Buffer
		(&options{errOut: &b}).warnElevated(tc.ex)
		if tc.want == "" {
			assert.Empty(t, b.String())
			continue
		}
		assert.True(t, strings.HasPrefix(b.String(), tc.want), b.String())
		assert.Contains(t, b.String(), "text2sql grant --dsn")
		assert.Equal(t, 1, strings.Count(b.String(), "\n"))
	}
}

type fakeLogin struct {
	guarded
	privs []string
}

func (f fakeLogin) ElevatedPrivileges() []string { return f.privs }

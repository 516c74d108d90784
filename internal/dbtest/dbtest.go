// Package dbtest gives tests a database of their own on the PostgreSQL and
// MariaDB/MySQL servers the project's tests use: a uniquely named database
// created for the test and dropped when it ends, optionally holding the
// table the executortest kit reads (PostgresKit, MySQLKit, and SQLiteKit
// for a SQLite file), and plain database/sql helpers: Exec, Rows,
// Checksum, PostgresDSNWith; and a SQLite file made from a script
// (SQLiteFile).
//
// The servers are found through environment variables:
//
//	TEXT2SQL_TEST_POSTGRES_DSN  default postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable
//	TEXT2SQL_TEST_MYSQL_DSN     default root@tcp(127.0.0.1:3306)/test
//
// When a server cannot be reached the test is skipped with a message that
// says how to point it at one — unless the environment variable CI is
// "true", where an unreachable server fails the test.
package dbtest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	mysql "github.com/go-sql-driver/mysql"
	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver
	_ "github.com/mattn/go-sqlite3"    // the "sqlite3" driver

	"github.com/text2sql-go/text2sql/executor/executortest"
)

// The default DSNs of the servers on the project's machines.
const (
	DefaultPostgresDSN = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
	DefaultMySQLDSN    = "root@tcp(127.0.0.1:3306)/test"
)

// PostgresDSN returns $TEXT2SQL_TEST_POSTGRES_DSN or DefaultPostgresDSN.
func PostgresDSN() string {
	if d := os.Getenv("TEXT2SQL_TEST_POSTGRES_DSN"); d != "" {
		return d
	}
	return DefaultPostgresDSN
}

// MySQLDSN returns $TEXT2SQL_TEST_MYSQL_DSN or DefaultMySQLDSN.
func MySQLDSN() string {
	if d := os.Getenv("TEXT2SQL_TEST_MYSQL_DSN"); d != "" {
		return d
	}
	return DefaultMySQLDSN
}

// Name returns a fresh identifier "<prefix>_<16 hex digits>", lower case,
// usable unquoted as a database, schema or role name.
func Name(prefix string) string {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return prefix + "_" + hex.EncodeToString(b)
}

func unreachable(tb testing.TB, what, env string, err error) {
	tb.Helper()
	if os.Getenv("CI") == "true" {
		tb.Fatalf("%s is not reachable in CI: %v", what, err)
	}
	tb.Skipf("%s not reachable (%v): set %s to a server's DSN to run this test", what, err, env)
}

// server describes how to make and drop a test database on one server.
type server struct {
	what, env    string // its name in messages and the variable that gives its DSN
	driver       string // the database/sql driver
	admin        string // the DSN of the connection that creates and drops databases
	create, drop string // the CREATE DATABASE and DROP DATABASE statements, %s for the name
	dsn          func(name string) string
}

// fresh creates a uniquely named database on s, registers its removal
// with tb.Cleanup, and returns a handle on it (closed at cleanup) and its
// DSN.
func (s server) fresh(tb testing.TB) (*sql.DB, string) {
	tb.Helper()
	admin, err := sql.Open(s.driver, s.admin)
	if err != nil {
		unreachable(tb, s.what, s.env, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := admin.PingContext(ctx); err != nil {
		admin.Close()
		unreachable(tb, s.what, s.env, err)
	}
	name := Name("text2sql_test")
	if _, err := admin.ExecContext(ctx, fmt.Sprintf(s.create, name)); err != nil {
		admin.Close()
		tb.Fatalf("create test database: %v", err)
	}
	dsn := s.dsn(name)
	db, err := sql.Open(s.driver, dsn)
	if err != nil {
		admin.Close()
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		db.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := admin.ExecContext(ctx, fmt.Sprintf(s.drop, name)); err != nil {
			tb.Errorf("drop test database %s: %v", name, err)
		}
		admin.Close()
	})
	return db, dsn
}

// Postgres creates a fresh database on the PostgreSQL server, registers
// its removal with tb.Cleanup, and returns a handle on it (through the
// pgx stdlib driver, "pgx") and its DSN. The handle is closed at cleanup.
func Postgres(tb testing.TB) (*sql.DB, string) {
	tb.Helper()
	u, err := url.Parse(PostgresDSN())
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		tb.Fatalf("TEXT2SQL_TEST_POSTGRES_DSN must be a postgres:// URL")
	}
	return server{
		what: "PostgreSQL", env: "TEXT2SQL_TEST_POSTGRES_DSN", driver: "pgx", admin: PostgresDSN(),
		create: "CREATE DATABASE %s", drop: "DROP DATABASE IF EXISTS %s WITH (FORCE)",
		dsn: func(name string) string {
			u.Path = "/" + name
			return u.String()
		},
	}.fresh(tb)
}

// MySQL creates a fresh database on the MariaDB/MySQL server, registers
// its removal with tb.Cleanup, and returns a handle on it and its DSN
// (go-sql-driver form). The handle is closed at cleanup.
func MySQL(tb testing.TB) (*sql.DB, string) {
	tb.Helper()
	cfg, err := mysql.ParseDSN(MySQLDSN())
	if err != nil {
		tb.Fatalf("TEXT2SQL_TEST_MYSQL_DSN: %v", err)
	}
	cfg.Timeout = 5 * time.Second
	return server{
		what: "MySQL/MariaDB", env: "TEXT2SQL_TEST_MYSQL_DSN", driver: "mysql", admin: cfg.FormatDSN(),
		create: "CREATE DATABASE %s CHARACTER SET utf8mb4", drop: "DROP DATABASE IF EXISTS %s",
		dsn: func(name string) string {
			cfg.DBName = name
			return cfg.FormatDSN()
		},
	}.fresh(tb)
}

// Exec runs each statement on db, failing the test on the first error;
// blank statements are skipped.
func Exec(tb testing.TB, db *sql.DB, stmts ...string) {
	tb.Helper()
	for _, s := range stmts {
		if strings.TrimSpace(s) == "" {
			continue
		}
		if _, err := db.Exec(s); err != nil {
			tb.Fatalf("setup %q: %v", s, err)
		}
	}
}

// Checksum returns a digest of the rows of each named PostgreSQL table
// (written as SQL: schema-qualified and quoted as needed), to show a table
// was not changed: "name:count:md5" per table, space-separated.
func Checksum(tb testing.TB, db *sql.DB, tables ...string) string {
	tb.Helper()
	var parts []string
	for _, t := range tables {
		var n int64
		var sum sql.NullString
		q := fmt.Sprintf(`SELECT count(*), md5(string_agg(x::text, E'\n' ORDER BY x::text)) FROM %s AS x`, t)
		if err := db.QueryRow(q).Scan(&n, &sum); err != nil {
			tb.Fatalf("checksum %s: %v", t, err)
		}
		parts = append(parts, fmt.Sprintf("%s:%d:%s", t, n, sum.String))
	}
	return strings.Join(parts, " ")
}

// Rows runs q through plain database/sql on db and returns its rows as the
// driver gives them, one []any per row.
func Rows(db *sql.DB, q string) ([][]any, error) {
	rows, err := db.Query(q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var out [][]any
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		out = append(out, vals)
	}
	return out, rows.Err()
}

// PostgresDSNWith returns the PostgreSQL URL dsn with the run-time
// parameters given as name, value pairs set for its sessions (e.g.
// "search_path", "s1"); an odd count or a DSN that is not a URL fails
// the test.
func PostgresDSNWith(tb testing.TB, dsn string, params ...string) string {
	tb.Helper()
	if len(params)%2 != 0 {
		tb.Fatalf("PostgresDSNWith: odd parameter list %q", params)
	}
	u, err := url.Parse(dsn)
	if err != nil {
		tb.Fatalf("PostgreSQL DSN %q: %v", dsn, err)
	}
	q := u.Query()
	for i := 0; i < len(params); i += 2 {
		q.Set(params[i], params[i+1])
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// kitRows is how many rows the kit table holds ("row 1" … "row 20").
const kitRows = 20

// Unbounded is a recursive count that runs until it is stopped (on
// SQLite, PostgreSQL and MariaDB), the slow query of the kit fixtures on
// SQLite and PostgreSQL.
const Unbounded = "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) SELECT count(*) FROM c"

// mariaDBSlow is the slow query of the kit fixtures on MariaDB: a cross
// join of 500 million rows that ends on its own (about 13 s on an idle
// server), because MariaDB runs a statement on after its client
// disconnects and an executor without a server-side limit would leave an
// unbounded one running for hours.
const mariaDBSlow = "SELECT count(*) FROM seq_1_to_1000000 a, seq_1_to_500 b"

// kit creates the kit table on db with the statement create, fills it
// with kitRows rows through insert (%d for the count), and returns the
// fixture with slow as its slow query.
func kit(tb testing.TB, db *sql.DB, create, insert, slow string) executortest.Fixture {
	tb.Helper()
	Exec(tb, db, create, fmt.Sprintf(insert, kitRows))
	return executortest.Fixture{Table: "kit", Rows: kitRows, Slow: slow}
}

// PostgresKit creates a fresh PostgreSQL database (see Postgres) holding
// the executortest kit's table "kit" (id int, name text), and returns the
// handle, its DSN and the fixture naming the table, its row count and a
// slow query; the caller adds Fixture.ForbiddenFunction where its
// executor has a function allow-list.
func PostgresKit(tb testing.TB) (*sql.DB, string, executortest.Fixture) {
	tb.Helper()
	db, dsn := Postgres(tb)
	return db, dsn, kit(tb, db, "CREATE TABLE kit (id int PRIMARY KEY, name text)",
		"INSERT INTO kit SELECT n, 'row ' || n FROM generate_series(1, %d) n", Unbounded)
}

// MySQLKit is PostgresKit on the MariaDB/MySQL server (see MySQL); its
// slow query ends on its own after about 13 s.
func MySQLKit(tb testing.TB) (*sql.DB, string, executortest.Fixture) {
	tb.Helper()
	db, dsn := MySQL(tb)
	return db, dsn, kit(tb, db, "CREATE TABLE kit (id INT PRIMARY KEY, name TEXT)",
		"INSERT INTO kit SELECT seq, CONCAT('row ', seq) FROM seq_1_to_%d", mariaDBSlow)
}

// SQLiteKit is PostgresKit for SQLite: it writes a database file holding
// the kit table in a fresh temporary directory (through a plain
// read-write connection, closed again) and returns its path and the
// fixture.
func SQLiteKit(tb testing.TB) (string, executortest.Fixture) {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "kit.db")
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	return path, kit(tb, db, "CREATE TABLE kit (id INTEGER PRIMARY KEY, name TEXT)",
		`WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < %d)
			INSERT INTO kit SELECT n, 'row ' || n FROM c`, Unbounded)
}

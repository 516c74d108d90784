// Package dbtest gives tests a database of their own on the PostgreSQL and
// MariaDB/MySQL servers the project's tests use: a uniquely named database
// created for the test and dropped when it ends; and a SQLite file made
// from a script (SQLiteFile).
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
	"strings"
	"testing"
	"time"

	mysql "github.com/go-sql-driver/mysql"
	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver
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

// Postgres creates a fresh database on the PostgreSQL server, registers
// its removal with tb.Cleanup, and returns a handle on it (through the
// pgx stdlib driver, "pgx") and its DSN. The handle is closed at cleanup.
func Postgres(tb testing.TB) (*sql.DB, string) {
	tb.Helper()
	u, err := url.Parse(PostgresDSN())
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		tb.Fatalf("TEXT2SQL_TEST_POSTGRES_DSN must be a postgres:// URL")
	}
	pg := server{what: "PostgreSQL", env: "TEXT2SQL_TEST_POSTGRES_DSN", driver: "pgx", drop: " WITH (FORCE)"}
	return pg.fresh(tb, PostgresDSN(), func(name string) string {
		u.Path = "/" + name
		return u.String()
	})
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
	my := server{what: "MySQL/MariaDB", env: "TEXT2SQL_TEST_MYSQL_DSN", driver: "mysql", create: " CHARACTER SET utf8mb4"}
	return my.fresh(tb, cfg.FormatDSN(), func(name string) string {
		cfg.DBName = name
		return cfg.FormatDSN()
	})
}

// server is a database server that tests get fresh databases on.
type server struct {
	what   string // its name in messages, e.g. "PostgreSQL"
	env    string // the environment variable holding its DSN
	driver string // the database/sql driver name
	create string // what follows CREATE DATABASE <name>, e.g. a character set
	drop   string // what follows DROP DATABASE IF EXISTS <name>
}

// fresh connects to the server through admin, a DSN of it (skipping the
// test, or failing it in CI, when the server is unreachable), creates a
// database named Name("text2sql_test"), registers its removal with
// tb.Cleanup, and returns a handle on it and its DSN, dsn(name).
func (s server) fresh(tb testing.TB, admin string, dsn func(name string) string) (*sql.DB, string) {
	tb.Helper()
	adm, err := sql.Open(s.driver, admin)
	if err != nil {
		unreachable(tb, s.what, s.env, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := adm.PingContext(ctx); err != nil {
		adm.Close()
		unreachable(tb, s.what, s.env, err)
	}
	name := Name("text2sql_test")
	if _, err := adm.ExecContext(ctx, "CREATE DATABASE "+name+s.create); err != nil {
		adm.Close()
		tb.Fatalf("create test database: %v", err)
	}
	d := dsn(name)
	db, err := sql.Open(s.driver, d)
	if err != nil {
		adm.Close()
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		db.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := adm.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+s.drop); err != nil {
			tb.Errorf("drop test database %s: %v", name, err)
		}
		adm.Close()
	})
	return db, d
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

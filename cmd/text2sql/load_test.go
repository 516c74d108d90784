package main

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/text2sql-go/text2sql/internal/dbtest"
	"github.com/text2sql-go/text2sql/internal/shareddata"
)

// withSearchPath returns a PostgreSQL DSN whose sessions use schema.
func withSearchPath(t *testing.T, dsn, schema string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// text2sql load copies a Spider database into a PostgreSQL schema; run,
// context and prompt then work on it with --dsn; DROP TABLE is refused
// through the CLI as through the library (C1 #11).
func TestLoadAndRunPostgres(t *testing.T) {
	src := shareddata.SpiderDB(t, "concert_singer")
	db, dsn := dbtest.Postgres(t)
	out, errOut, code := cli(t, "load", "--db", src, "--dsn", dsn, "--schema", "concert", "--fold-names", "--json")
	if code != 0 {
		t.Fatalf("load: exit %d: %s", code, errOut)
	}
	var rep struct {
		Schema string
		Tables []struct {
			Source, Name string
			Rows         int
		}
		Notes []string
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err, out)
	}
	if rep.Schema != "concert" || len(rep.Tables) != 4 || rep.Tables[1].Name != "singer" || rep.Tables[1].Rows != 6 {
		t.Errorf("report %+v", rep)
	}
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM concert.singer`).Scan(&n); err != nil || n != 6 {
		t.Fatalf("singer rows: %d %v", n, err)
	}
	// Loading again needs --replace.
	if _, _, code := cli(t, "load", "--db", src, "--dsn", dsn, "--schema", "concert"); code != exitUsage {
		t.Errorf("second load: exit %d", code)
	}
	if _, errOut, code := cli(t, "load", "--db", src, "--dsn", dsn, "--schema", "concert", "--replace"); code != 0 {
		t.Errorf("load --replace: exit %d %s", code, errOut)
	}
	// Exact names without --fold-names.
	out, _, code = cli(t, "load", "--db", src, "--dsn", dsn, "--schema", "Exact")
	if code != 0 || !strings.Contains(out, `"Singer_ID" bigint`) {
		t.Errorf("exact load: %d\n%s", code, out)
	}

	pg := withSearchPath(t, dsn, "concert")
	out, errOut, code = cli(t, "run", "--dsn", pg, "--json", "SELECT count(*) AS n FROM singer")
	if code != 0 || !strings.Contains(out, `"n"`) || !strings.Contains(out, "6") {
		t.Fatalf("run: %d %s %s", code, out, errOut)
	}
	for _, q := range []string{"DROP TABLE singer", "drop table if exists concert.singer cascade"} {
		out, _, code = cli(t, "run", "--dsn", pg, "--json", q)
		if code != exitSQL || !strings.Contains(out, `"not_read_only"`) {
			t.Errorf("run %q: exit %d\n%s", q, code, out)
		}
	}
	out, _, code = cli(t, "run", "--dsn", pg, "--json", "SELECT pg_sleep(1)")
	if code != exitSQL || !strings.Contains(out, `"forbidden_function"`) {
		t.Errorf("pg_sleep: exit %d\n%s", code, out)
	}
	if err := db.QueryRow(`SELECT count(*) FROM concert.singer`).Scan(&n); err != nil || n != 6 {
		t.Fatalf("singer rows after the attacks: %d %v", n, err)
	}
	out, errOut, code = cli(t, "prompt", "--dsn", pg, "How many singers are there?")
	if code != 0 || !strings.Contains(out, "CREATE TABLE concert.singer") {
		t.Errorf("prompt: %d %s\n%s", code, errOut, out)
	}
	// Usage errors.
	for _, args := range [][]string{
		{"run", "--dsn", pg, "--db", src, "SELECT 1"},
		{"run", "--dsn", "redis://x", "SELECT 1"},
		{"load", "--db", src, "--dsn", pg},
		{"load", "--db", src, "--dsn", "mysql://root@127.0.0.1/test", "--schema", "x"},
	} {
		if _, _, code := cli(t, args...); code != exitUsage {
			t.Errorf("%q: exit %d, want %d", args, code, exitUsage)
		}
	}
}

// run --dsn works on MySQL/MariaDB too.
func TestRunMySQL(t *testing.T) {
	db, dsn := dbtest.MySQL(t)
	dbtest.Exec(t, db, "CREATE TABLE t (x INT)", "INSERT INTO t VALUES (1), (2)")
	out, errOut, code := cli(t, "run", "--dsn", dsn, "--json", "SELECT sum(x) AS s FROM t")
	if code != 0 || !strings.Contains(out, `"s"`) {
		t.Fatalf("run: %d %s %s", code, out, errOut)
	}
	out, _, code = cli(t, "run", "--dsn", dsn, "--json", "DROP TABLE t")
	if code != exitSQL || !strings.Contains(out, `"not_read_only"`) {
		t.Errorf("drop: %d %s", code, out)
	}
}

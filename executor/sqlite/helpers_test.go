package sqlite

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"testing"

	text2sql "github.com/text2sql-go/text2sql"
)

// makeDB creates a database file in a fresh temporary directory with the
// given DDL and data, through a plain read-write connection, and returns
// its path.
func makeDB(t testing.TB, name, script string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(script); err != nil {
		t.Fatalf("setup: %v", err)
	}
	return path
}

func open(t testing.TB, path string, opts Options) *Executor {
	t.Helper()
	e, err := Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

func run(t testing.TB, e *Executor, query string) *text2sql.Result {
	t.Helper()
	res, err := e.Execute(context.Background(), text2sql.ExecuteRequest{SQL: query})
	if err != nil {
		t.Fatalf("Execute(%q): Go error %v", query, err)
	}
	if res.RowCount != len(res.Rows) {
		t.Fatalf("RowCount %d != len(Rows) %d", res.RowCount, len(res.Rows))
	}
	return res
}

// wantKind asserts that res failed with kind, and that a refusal matches
// text2sql.ErrRefused.
func wantKind(t testing.TB, query string, res *text2sql.Result, kind text2sql.ErrorKind) {
	t.Helper()
	if res.Error == nil {
		t.Fatalf("%q: no error, rows %v; want %s", query, res.Rows, kind)
	}
	if res.Error.Kind != kind {
		t.Fatalf("%q: kind %s (%s), want %s", query, res.Error.Kind, res.Error.Message, kind)
	}
	if kind.Refusal() != errors.Is(res.Error, text2sql.ErrRefused) {
		t.Fatalf("%q: errors.Is(ErrRefused) = %v for kind %s", query, !kind.Refusal(), kind)
	}
	if len(res.Rows) != 0 || res.Truncated {
		t.Fatalf("%q: an error result carries rows", query)
	}
}

func fileHash(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func listDir(t testing.TB, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names
}

// untouched records a database file's hash and its directory's listing,
// and checks at cleanup that neither changed: nothing was written and no
// file (journal, exfiltration target) was created.
func untouched(t *testing.T, path string) {
	t.Helper()
	h, files := fileHash(t, path), listDir(t, filepath.Dir(path))
	t.Cleanup(func() {
		if got := fileHash(t, path); got != h {
			t.Errorf("database file changed: %s → %s", h, got)
		}
		if got := listDir(t, filepath.Dir(path)); !equalStrings(got, files) {
			t.Errorf("directory changed: %q → %q", files, got)
		}
	})
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// count returns a table's row count through a plain connection.
func count(t testing.TB, path, table string) int {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM "` + table + `"`).Scan(&n); err != nil {
		t.Fatalf("count %s: %v", table, err)
	}
	return n
}

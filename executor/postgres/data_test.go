package postgres

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/mattn/go-sqlite3"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/executor/sqlite"
	"github.com/text2sql-go/text2sql/internal/birdschema"
	"github.com/text2sql-go/text2sql/internal/dbtest"
	"github.com/text2sql-go/text2sql/internal/pgload"
	"github.com/text2sql-go/text2sql/internal/shareddata"
	"github.com/text2sql-go/text2sql/internal/sqltext"
)

// spiderGold reads dev_gold.sql: query and db_id per line.
func spiderGold(t *testing.T) [][2]string {
	t.Helper()
	f, err := os.Open(shareddata.Path(t, "spider", "dev_gold.sql"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out [][2]string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		i := strings.LastIndexByte(line, '\t')
		if i < 0 {
			t.Fatalf("malformed line %q", line)
		}
		out = append(out, [2]string{line[:i], line[i+1:]})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// openSQLite opens a Spider database read-only through a plain handle.
func openSQLite(t testing.TB, path string) *sql.DB {
	t.Helper()
	dsn, err := sqlite.DSN(path, true)
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite3", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// withSearchPath returns dsn with the session's search_path set.
func withSearchPath(t testing.TB, dsn, schema string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	q.Set("statement_timeout", "30000")
	u.RawQuery = q.Encode()
	return u.String()
}

// plainRows runs q through plain database/sql and returns its rows.
func plainRows(db *sql.DB, q string) ([][]any, error) {
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

// canon renders a value for comparison across engines and drivers:
// numbers (and text that is a number) rounded to 6 significant digits,
// times as text, bytes as text, booleans as 0/1.
func canon(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case int64:
		return canonFloat(float64(x))
	case float64:
		return canonFloat(x)
	case bool:
		if x {
			return "1"
		}
		return "0"
	case []byte:
		return canonString(string(x))
	case time.Time:
		if x.Hour() == 0 && x.Minute() == 0 && x.Second() == 0 && x.Nanosecond() == 0 {
			return x.Format("2006-01-02")
		}
		return x.Format("2006-01-02 15:04:05")
	case string:
		return canonString(x)
	}
	return fmt.Sprint(v)
}

func canonString(s string) string {
	if f, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
		return canonFloat(f)
	}
	return "'" + s + "'"
}

func canonFloat(f float64) string {
	if f == 0 {
		return "0"
	}
	return strconv.FormatFloat(f, 'g', 6, 64)
}

// multiset renders rows as a sorted list, for comparison as multisets.
func multiset(rows [][]any) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		parts := make([]string, len(r))
		for j, v := range r {
			parts[j] = canon(v)
		}
		out[i] = strings.Join(parts, "|")
	}
	sort.Strings(out)
	return out
}

func sameMultiset(a, b [][]any) bool {
	x, y := multiset(a), multiset(b)
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		if x[i] != y[i] {
			return false
		}
	}
	return true
}

var (
	reLike      = regexp.MustCompile(`(?i)\blike\b`)
	reLimit     = regexp.MustCompile(`(?i)\blimit\b`)
	reLimitTail = regexp.MustCompile(`(?i)\s+limit\s+\d+\s*;?\s*$`)
)

// sameWithoutLimit reports whether q without its final LIMIT gives the
// same multiset on SQLite and PostgreSQL.
func sameWithoutLimit(lite, pg *sql.DB, q string) bool {
	u := reLimitTail.ReplaceAllString(q, "")
	if u == q {
		return false
	}
	a, err1 := shareddata.PlainRows(lite, u)
	b, err2 := plainRows(pg, u)
	return err1 == nil && err2 == nil && sameMultiset(a, b)
}

// Every Spider database loads into PostgreSQL; every dev gold query that
// PostgreSQL can run passes the check and returns, guarded, exactly what
// plain database/sql returns on PostgreSQL; the results on PostgreSQL and
// SQLite are compared as multisets with numeric tolerance, and the
// differences, which are dialect differences, are counted by cause.
func TestSpiderGoldPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("loads 19 databases")
	}
	gold := spiderGold(t)
	db, dsn := testDB(t)
	ctx := context.Background()
	type target struct {
		sqlite *sql.DB
		plain  *sql.DB
		exec   *Executor
	}
	targets := map[string]*target{}
	notes := 0
	for _, g := range gold {
		id := g[1]
		if _, ok := targets[id]; ok {
			continue
		}
		path := shareddata.SpiderDB(t, id)
		if _, err := os.Stat(path); err != nil {
			targets[id] = nil
			continue
		}
		src := openSQLite(t, path)
		sch := "spider_" + strings.ToLower(id)
		rep, err := pgload.CopySQLite(ctx, src, db, sch, pgload.CopyOptions{FoldNames: true})
		if err != nil {
			t.Fatalf("load %s: %v", id, err)
		}
		for _, n := range rep.Notes {
			t.Logf("load %s: %s", id, n)
		}
		notes += len(rep.Notes)
		plain, err := sql.Open("pgx", withSearchPath(t, dsn, sch))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { plain.Close() })
		e := newExec(t, db, Options{SearchPath: []string{sch}, Schemas: []string{sch}, MaxRows: 1_000_000, Timeout: 30 * time.Second})
		targets[id] = &target{sqlite: src, plain: plain, exec: e}
	}

	var (
		total, missing, pgCannot, equal, differ int
		rewritten, rewrittenEqual               int
		cannot                                  = map[string]int{}
		differBy                                = map[string]int{}
	)
	for _, g := range gold {
		q, id := g[0], g[1]
		tg := targets[id]
		if tg == nil {
			missing++
			continue
		}
		total++
		want, err := shareddata.PlainRows(tg.sqlite, q)
		if err != nil {
			t.Errorf("%s: SQLite %q: %v", id, q, err)
			continue
		}
		pgRows, err := plainRows(tg.plain, q)
		if err != nil {
			pgCannot++
			key := err.Error()
			var pe *pgconn.PgError
			if asPg(err, &pe) {
				key = pe.Code + " " + reasonOf(pe)
			}
			cannot[key]++
			// The guarded executor refuses or fails it too.
			if res := run(t, tg.exec, q); res.Error == nil {
				t.Errorf("%s: %q: plain PostgreSQL fails (%v) but the guarded run succeeds", id, q, err)
			}
			// SQLite reads "text" as a string where no column has that
			// name; PostgreSQL always reads it as a name. Rewritten with
			// single quotes, does the query run and agree?
			if rq := singleQuoted(q); rq != q {
				pgRows, err := plainRows(tg.plain, rq)
				if err != nil {
					continue
				}
				rewritten++
				res := run(t, tg.exec, rq)
				if res.Error != nil || !sameRows(res.Rows, pgRows) {
					t.Errorf("%s: rewritten %q: guarded %v differs from plain", id, rq, res.Error)
					continue
				}
				if sameMultiset(res.Rows, want) {
					rewrittenEqual++
				} else {
					t.Logf("differs after rewriting %s: %s\n  PostgreSQL: %s\n  SQLite:     %s", id, rq, short(multiset(res.Rows)), short(multiset(want)))
				}
			}
			continue
		}
		if err := tg.exec.Check(ctx, q); err != nil {
			t.Errorf("%s: false refusal by Check: %q: %v", id, q, err)
			continue
		}
		res := run(t, tg.exec, q)
		if res.Error != nil {
			t.Errorf("%s: Execute(%q) = %v", id, q, res.Error)
			continue
		}
		if res.Truncated || !sameRows(res.Rows, pgRows) {
			t.Errorf("%s: %q: guarded rows differ from plain PostgreSQL rows:\n%v\n%v", id, q, res.Rows, pgRows)
			continue
		}
		if sameMultiset(res.Rows, want) {
			equal++
			continue
		}
		differ++
		reason := "other"
		switch {
		case reLimit.MatchString(q) && sameWithoutLimit(tg.sqlite, tg.plain, q):
			reason = "same rows without the final LIMIT: ORDER BY … LIMIT keeps other rows among equal sort keys (or NULLs sort last in PostgreSQL, first in SQLite)"
		case reLike.MatchString(q):
			reason = "LIKE is case-sensitive in PostgreSQL, not in SQLite"
		}
		differBy[reason]++
		t.Logf("differs (%s) %s: %s\n  PostgreSQL: %s\n  SQLite:     %s", reason, id, q, short(multiset(res.Rows)), short(multiset(want)))
	}
	t.Logf("Spider dev on PostgreSQL: %d gold queries on %d databases (%d load notes); %d skipped (database absent)", total, len(targets)-1, notes, missing)
	t.Logf("  PostgreSQL cannot run %d (dialect): %s", pgCannot, countList(cannot))
	t.Logf("  PostgreSQL runs %d: %d same result as SQLite, %d differ: %s", total-pgCannot, equal, differ, countList(differBy))
	t.Logf("  of those it cannot run, %d run once SQLite's double-quoted strings are single-quoted; %d of them give SQLite's result", rewritten, rewrittenEqual)
	if total != 972 {
		t.Errorf("%d queries, want 972", total)
	}
}

// singleQuoted rewrites double-quoted tokens as string literals.
func singleQuoted(q string) string {
	var b strings.Builder
	for _, t := range sqltext.Lex(q) {
		if t.Kind == sqltext.QuotedIdent && strings.HasPrefix(t.Text, `"`) {
			name, _ := t.Ident()
			b.WriteString("'" + strings.ReplaceAll(name, "'", "''") + "'")
			continue
		}
		b.WriteString(t.Text)
	}
	return b.String()
}

func asPg(err error, pe **pgconn.PgError) bool {
	for e := err; e != nil; {
		if p, ok := e.(*pgconn.PgError); ok {
			*pe = p
			return true
		}
		u, ok := e.(interface{ Unwrap() error })
		if !ok {
			return false
		}
		e = u.Unwrap()
	}
	return false
}

var reQuoted = regexp.MustCompile(`"[^"]*"|\b\d+\b`)

// reasonOf generalises a server message: names and numbers elided.
func reasonOf(pe *pgconn.PgError) string {
	return reQuoted.ReplaceAllString(pe.Message, "…")
}

func countList(m map[string]int) string {
	type kv struct {
		k string
		v int
	}
	var l []kv
	for k, v := range m {
		l = append(l, kv{k, v})
	}
	sort.Slice(l, func(i, j int) bool { return l[i].v > l[j].v || l[i].v == l[j].v && l[i].k < l[j].k })
	var b strings.Builder
	for _, x := range l {
		fmt.Fprintf(&b, "\n    %4d  %s", x.v, x.k)
	}
	return b.String()
}

func short(s []string) string {
	if len(s) > 5 {
		return strings.Join(s[:5], "; ") + fmt.Sprintf("; … (%d rows)", len(s))
	}
	return strings.Join(s, "; ")
}

// sameRows compares guarded rows with plain database/sql rows row by row
// (same order), values canonicalised.
func sameRows(a, b [][]any) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if len(a[i]) != len(b[i]) {
			return false
		}
		for j := range a[i] {
			if canon(a[i][j]) != canon(b[i][j]) {
				return false
			}
		}
	}
	return true
}

// The 500 BIRD mini-dev PostgreSQL gold queries pass the statement check
// (no server needed) and Check against empty tables with BIRD's schemas
// (the server parses and analyses each): no false refusal.
func TestBIRDCheckPostgres(t *testing.T) {
	tables := shareddata.Path(t, "bird", "mini_dev", "dev_tables.json")
	qfile := shareddata.Path(t, "bird", "mini_dev", "mini_dev_postgresql.json")
	b, err := os.ReadFile(qfile)
	if err != nil {
		t.Fatal(err)
	}
	var qs []struct {
		ID   int    `json:"question_id"`
		DBID string `json:"db_id"`
		SQL  string `json:"SQL"`
	}
	if err := json.Unmarshal(b, &qs); err != nil {
		t.Fatal(err)
	}
	if len(qs) != 500 {
		t.Errorf("%d queries, want 500", len(qs))
	}
	// The statement check alone.
	c := NewChecker(nil, nil)
	refused := 0
	for _, q := range qs {
		if se := c.CheckSQL(q.SQL); se != nil {
			refused++
			t.Errorf("BIRD %d (%s): refused: %v\n%s", q.ID, q.DBID, se, q.SQL)
		}
	}
	t.Logf("BIRD mini-dev PostgreSQL: %d queries, %d refused by the statement check", len(qs), refused)

	// Check on the server, against empty tables.
	schemas, err := birdschema.Load(tables)
	if err != nil {
		t.Fatal(err)
	}
	db, _ := testDB(t)
	execs := map[string]*Executor{}
	for i := range schemas {
		s := &schemas[i]
		ddl, err := s.PostgresDDL(s.DBID)
		if err != nil {
			t.Fatal(err)
		}
		dbtest.Exec(t, db, append([]string{"CREATE SCHEMA " + s.DBID}, ddl...)...)
		execs[s.DBID] = newExec(t, db, Options{SearchPath: []string{s.DBID}, Schemas: []string{s.DBID}})
	}
	failed := map[text2sql.ErrorKind]int{}
	for _, q := range qs {
		if err := execs[q.DBID].Check(context.Background(), q.SQL); err != nil {
			se := asSQLError(err)
			failed[se.Kind]++
			t.Errorf("BIRD %d (%s): Check: %v\n%s", q.ID, q.DBID, err, q.SQL)
		}
	}
	t.Logf("BIRD mini-dev PostgreSQL: %d queries checked on the server, failures by kind: %v", len(qs), failed)
}

package postgres

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/mattn/go-sqlite3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/executor/sqlite"
	"github.com/text2sql-go/text2sql/internal/birdschema"
	"github.com/text2sql-go/text2sql/internal/dbtest"
	"github.com/text2sql-go/text2sql/internal/exectest"
	"github.com/text2sql-go/text2sql/internal/pgload"
	"github.com/text2sql-go/text2sql/internal/shareddata"
	"github.com/text2sql-go/text2sql/internal/sqltext"
)

// openSQLite opens a Spider database read-only through a plain handle.
func openSQLite(t testing.TB, path string) *sql.DB {
	t.Helper()
	dsn, err := sqlite.DSN(path, true)
	require.NoError(t, err)
	db, err := sql.Open("sqlite3", dsn)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	return db
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
	return slices.Equal(multiset(a), multiset(b))
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
	b, err2 := dbtest.Rows(pg, u)
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
	gold := shareddata.SpiderGold(t)
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
		id := g.DBID
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
		require.NoError(t, err, "load %s", id)
		for _, n := range rep.Notes {
			t.Logf("load %s: %s", id, n)
		}
		notes += len(rep.Notes)
		plain, err := sql.Open("pgx", dbtest.PostgresDSNWith(t, dsn, "search_path", sch, "statement_timeout", "30000"))
		require.NoError(t, err)
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
		q, id := g.SQL, g.DBID
		tg := targets[id]
		if tg == nil {
			missing++
			continue
		}
		total++
		want, err := shareddata.PlainRows(tg.sqlite, q)
		if !assert.NoError(t, err, "%s: SQLite %q", id, q) {
			continue
		}
		pgRows, err := dbtest.Rows(tg.plain, q)
		if err != nil {
			pgCannot++
			key := err.Error()
			var pe *pgconn.PgError
			if asPg(err, &pe) {
				key = pe.Code + " " + reasonOf(pe)
			}
			cannot[key]++
			// The guarded executor refuses or fails it too.
			assert.NotNil(t, exectest.Run(t, tg.exec, q).Error, "%s: %q: plain PostgreSQL fails (%v) but the guarded run succeeds", id, q, err)
			// SQLite reads "text" as a string where no column has that
			// name; PostgreSQL always reads it as a name. Rewritten with
			// single quotes, does the query run and agree?
			if rq := singleQuoted(q); rq != q {
				pgRows, err := dbtest.Rows(tg.plain, rq)
				if err != nil {
					continue
				}
				rewritten++
				res := exectest.Run(t, tg.exec, rq)
				if !assert.False(t, res.Error != nil || !sameRows(res.Rows, pgRows), "%s: rewritten %q: guarded %v differs from plain", id, rq, res.Error) {
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
		if !assert.NoError(t, tg.exec.Check(ctx, q), "%s: false refusal by Check: %q", id, q) {
			continue
		}
		res := exectest.Run(t, tg.exec, q)
		if !assert.Nil(t, res.Error, "%s: Execute(%q) = %v", id, q, res.Error) {
			continue
		}
		if !assert.False(t, res.Truncated || !sameRows(res.Rows, pgRows), "%s: %q: guarded rows differ from plain PostgreSQL rows:\n%v\n%v", id, q, res.Rows, pgRows) {
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
	assert.Equal(t, 972, total, "queries")
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
	qs := shareddata.BIRDMiniDev(t, text2sql.DialectPostgres)
	// The statement check alone.
	c := NewGuard(nil, nil)
	refused := 0
	for _, q := range qs {
		if se := c.CheckSQL(q.SQL); !assert.Nil(t, se, "BIRD %d (%s): refused\n%s", q.ID, q.DBID, q.SQL) {
			refused++
		}
	}
	t.Logf("BIRD mini-dev PostgreSQL: %d queries, %d refused by the statement check", len(qs), refused)

	// Check on the server, against empty tables.
	schemas, err := birdschema.Load(tables)
	require.NoError(t, err)
	db, _ := testDB(t)
	execs := map[string]*Executor{}
	for i := range schemas {
		s := &schemas[i]
		ddl, err := s.PostgresDDL(s.DBID)
		require.NoError(t, err)
		dbtest.Exec(t, db, append([]string{"CREATE SCHEMA " + s.DBID}, ddl...)...)
		execs[s.DBID] = newExec(t, db, Options{SearchPath: []string{s.DBID}, Schemas: []string{s.DBID}})
	}
	failed := map[text2sql.ErrorKind]int{}
	for _, q := range qs {
		if err := execs[q.DBID].Check(context.Background(), q.SQL); !assert.NoError(t, err, "BIRD %d (%s): Check\n%s", q.ID, q.DBID, q.SQL) {
			failed[exectest.SQLError(err).Kind]++
		}
	}
	t.Logf("BIRD mini-dev PostgreSQL: %d queries checked on the server, failures by kind: %v", len(qs), failed)
}

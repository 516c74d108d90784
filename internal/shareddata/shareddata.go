// Package shareddata locates the shared test data (Spider, BIRD, Chinook)
// that lives beside the repository as ../shared/data, for tests and
// benchmarks. Tests skip with a clear message where it is absent, and fail
// under CI=true, where every resource a test needs must be present.
package shareddata

import (
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/text2sql-go/text2sql/internal/dbtest"
	"github.com/text2sql-go/text2sql/internal/sqltext"
)

// Dir returns the shared data directory: $TEXT2SQL_SHARED_DATA if set, else
// the first "shared/data" found beside the module root or one of its
// parents. It returns "" when there is none.
func Dir() string {
	if d := os.Getenv("TEXT2SQL_SHARED_DATA"); d != "" {
		return d
	}
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	for d := wd; ; d = filepath.Dir(d) {
		cand := filepath.Join(d, "shared", "data")
		if st, err := os.Stat(cand); err == nil && st.IsDir() {
			return cand
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}

// Path returns the path of elem under the shared data directory. When the
// data is absent it skips the test, or fails it under CI=true.
func Path(tb testing.TB, elem ...string) string {
	tb.Helper()
	d := Dir()
	if d == "" {
		absent(tb, "shared test data not found (expected ../shared/data beside the repository, or $TEXT2SQL_SHARED_DATA)")
	}
	p := filepath.Join(append([]string{d}, elem...)...)
	if _, err := os.Stat(p); err != nil {
		absent(tb, "shared test data "+p+" not found")
	}
	return p
}

// absent ends a test whose data is missing: a skip, or a failure under
// CI=true.
func absent(tb testing.TB, msg string) {
	tb.Helper()
	if os.Getenv("CI") == "true" {
		tb.Fatal(msg + "; CI=true, so the test may not skip")
	}
	tb.Skip(msg)
}

// SpiderQuestion is one Spider dev question.
type SpiderQuestion struct {
	DBID     string `json:"db_id"`
	Question string `json:"question"`
	Query    string `json:"query"` // the gold SQL
}

// SpiderDev returns the Spider dev questions whose database is present
// under spider/database, and the number left out because theirs is missing
// (wta_1: 62). It skips the test when the data is absent.
func SpiderDev(tb testing.TB) (qs []SpiderQuestion, missing int) {
	tb.Helper()
	for _, q := range spiderDevAll(tb) {
		if _, err := os.Stat(SpiderDB(tb, q.DBID)); err != nil {
			missing++
			continue
		}
		qs = append(qs, q)
	}
	return qs, missing
}

// spiderDevAll returns every Spider dev question (spider/dev.json), in
// file order. It skips the test when the data is absent.
func spiderDevAll(tb testing.TB) []SpiderQuestion {
	tb.Helper()
	b, err := os.ReadFile(Path(tb, "spider", "dev.json"))
	if err != nil {
		tb.Fatal(err)
	}
	var all []SpiderQuestion
	if err := json.Unmarshal(b, &all); err != nil {
		tb.Fatal(err)
	}
	return all
}

// SpiderGoldQuery is one line of Spider's dev_gold.sql: a gold query and
// the database it runs on.
type SpiderGoldQuery struct {
	SQL, DBID string
}

// SpiderGold returns the queries of spider/dev_gold.sql (1,034, one a
// line as "query<TAB>db_id"; blank lines are skipped), including those
// whose database is missing. It skips the test when the data is absent
// and fails it on a line without a tab.
func SpiderGold(tb testing.TB) []SpiderGoldQuery {
	tb.Helper()
	b, err := os.ReadFile(Path(tb, "spider", "dev_gold.sql"))
	require.NoError(tb, err)
	var out []SpiderGoldQuery
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		i := strings.LastIndexByte(line, '\t')
		require.GreaterOrEqual(tb, i, 0, "malformed line %q", line)
		out = append(out, SpiderGoldQuery{SQL: line[:i], DBID: line[i+1:]})
	}
	return out
}

// SpiderDB returns the path of a Spider database file (which may not exist).
func SpiderDB(tb testing.TB, dbID string) string {
	return filepath.Join(Path(tb, "spider", "database"), dbID, dbID+".sqlite")
}

// SpiderAttached runs query on an in-memory SQLite database with Spider
// databases attached read-only, each pair {name, Spider db id} as name,
// and returns its rows as the driver gives them: the engine's own answer
// to a query across databases, for comparing with a catalog's.
func SpiderAttached(tb testing.TB, query string, dbs ...[2]string) [][]any {
	tb.Helper()
	db, err := sql.Open("sqlite3", ":memory:")
	require.NoError(tb, err)
	defer db.Close()
	db.SetMaxOpenConns(1) // ATTACH holds for its connection only
	for _, d := range dbs {
		_, err := db.Exec("ATTACH DATABASE ? AS "+d[0], "file:"+filepath.ToSlash(SpiderDB(tb, d[1]))+"?mode=ro")
		require.NoError(tb, err)
	}
	out, err := dbtest.Rows(db, query)
	require.NoError(tb, err)
	return out
}

// PlainRows runs q through a plain database/sql connection and returns its
// rows with go-sqlite3's conversions undone the way Spider stores values:
// time.Time back to "2006-01-02 15:04:05", bool back to 0/1, []byte to
// string. It is the reference a guarded executor's rows are compared with.
func PlainRows(db *sql.DB, q string) ([][]any, error) {
	rows, err := dbtest.Rows(db, q)
	for _, vals := range rows {
		for i, v := range vals {
			switch x := v.(type) {
			case time.Time:
				vals[i] = x.Format("2006-01-02 15:04:05")
			case bool:
				vals[i] = map[bool]int64{false: 0, true: 1}[x]
			case []byte:
				vals[i] = string(x)
			}
		}
	}
	return rows, err
}

// Misspellings returns sql once per identifier with that identifier
// misspelt (name → namezq; a quoted name gets "zq" before its closing
// quote), in source order: the mutants the checker must catch where the
// engine reports an unknown name.
func Misspellings(sql string) []string {
	var out []string
	for _, tk := range sqltext.Significant(sqltext.Lex(sql)) {
		switch tk.Kind {
		case sqltext.Word:
			out = append(out, sql[:tk.Pos]+tk.Text+"zq"+sql[tk.Pos+len(tk.Text):])
		case sqltext.QuotedIdent:
			end := tk.Pos + len(tk.Text) - 1
			out = append(out, sql[:end]+"zq"+sql[end:])
		}
	}
	return out
}

package check_test

import (
	"context"
	"encoding/json"
	"os"
	"sort"
	"testing"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/check"
	"github.com/text2sql-go/text2sql/executor/sqlite"
	"github.com/text2sql-go/text2sql/internal/birdschema"
	"github.com/text2sql-go/text2sql/internal/shareddata"
	"github.com/text2sql-go/text2sql/schema"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tally counts warnings by kind.
type tally struct {
	byKind  map[string]int
	queries map[string]int // queries with at least one warning of the kind
	example map[string]string
}

func newTally() *tally {
	return &tally{byKind: map[string]int{}, queries: map[string]int{}, example: map[string]string{}}
}

func (t *tally) add(sql string, ws []string) {
	kinds := map[string]bool{}
	for _, w := range ws {
		k := check.Kind(w)
		t.byKind[k]++
		if !kinds[k] {
			kinds[k] = true
			t.queries[k]++
		}
		if _, ok := t.example[k]; !ok {
			t.example[k] = w + "\n      in: " + sql
		}
	}
}

func (t *tally) log(tb testing.TB, title string) {
	var kinds []string
	for k := range t.byKind {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	tb.Logf("%s: %d warning kinds", title, len(kinds))
	for _, k := range kinds {
		tb.Logf("  %-24s %4d warnings in %4d queries; e.g. %s", k, t.byKind[k], t.queries[k], t.example[k])
	}
}

// The deterministic checks give no false failure on the 972 Spider dev
// gold queries of the shared databases. Warnings are computed three ways:
// statically (Check), with the execution result (Warn), and with the
// result and probes (Warn through WithProbe); their counts are logged.
func TestSpiderGoldNoFailure(t *testing.T) {
	qs, missing := shareddata.SpiderDev(t)
	require.Equal(t, [2]int{972, 62}, [2]int{len(qs), missing}, "questions with databases and without")
	ctx := context.Background()
	static, withResult, withProbe := newTally(), newTally(), newTally()
	executors := map[string]*sqlite.Executor{}
	defer func() {
		for _, ex := range executors {
			ex.Close()
		}
	}()
	failures := 0
	for _, q := range qs {
		ex := executors[q.DBID]
		if ex == nil {
			var err error
			ex, err = sqlite.Open(shareddata.SpiderDB(t, q.DBID), sqlite.Options{MaxRows: 100_000})
			require.NoError(t, err)
			executors[q.DBID] = ex
		}
		c := check.New(ex.Schema(), text2sql.DialectSQLite)
		rep := c.Check(q.Query)
		if !assert.Empty(t, rep.Failures, "%s: false failure in\n  %s", q.DBID, q.Query) {
			failures++
			continue
		}
		static.add(q.Query, rep.Warnings)
		res, err := ex.Execute(ctx, text2sql.ExecuteRequest{SQL: q.Query})
		require.NoError(t, err, "%s: gold query fails", q.DBID)
		require.Nil(t, res.Error, "%s: gold query fails", q.DBID)
		withResult.add(q.Query, c.Warn(ctx, q.Query, res))
		withProbe.add(q.Query, c.WithProbe(ex).Warn(ctx, q.Query, res))
	}
	t.Logf("Spider dev: %d gold queries checked, %d failures", len(qs), failures)
	static.log(t, "Spider static warnings (Check)")
	withResult.log(t, "Spider warnings with the result (Warn)")
	withProbe.log(t, "Spider warnings with the result and probes (WithProbe.Warn)")
}

// birdQuestion is one BIRD mini-dev question.
type birdQuestion struct {
	ID    int    `json:"question_id"`
	DBID  string `json:"db_id"`
	SQL   string `json:"SQL"`
	Level string `json:"difficulty"`
}

// The deterministic checks give no false failure on the 500 BIRD mini-dev
// SQLite gold queries, against the schemas of dev_tables.json (the
// databases are not distributed: they are materialised empty). Warnings
// are static and schema-based; their counts are logged.
func TestBIRDGoldNoFailure(t *testing.T) {
	tables := shareddata.Path(t, "bird", "mini_dev", "dev_tables.json")
	b, err := os.ReadFile(shareddata.Path(t, "bird", "mini_dev", "mini_dev_sqlite.json"))
	require.NoError(t, err)
	var qs []birdQuestion
	require.NoError(t, json.Unmarshal(b, &qs))
	require.Equal(t, 500, len(qs), "questions")
	dir := t.TempDir()
	paths, err := birdschema.Materialize(dir, tables)
	require.NoError(t, err)
	checkers := map[string]*check.Checker{}
	for id, path := range paths {
		ex, err := sqlite.Open(path, sqlite.Options{})
		require.NoError(t, err)
		checkers[id] = check.New(ex.Schema(), text2sql.DialectSQLite)
		ex.Close()
	}
	ctx := context.Background()
	static, warn := newTally(), newTally()
	failures := 0
	for _, q := range qs {
		c := checkers[q.DBID]
		require.NotNil(t, c, "question %d: no schema for %s", q.ID, q.DBID)
		rep := c.Check(q.SQL)
		if !assert.Empty(t, rep.Failures, "BIRD %d (%s): false failure in\n  %s", q.ID, q.DBID, q.SQL) {
			failures++
			continue
		}
		static.add(q.SQL, rep.Warnings)
		warn.add(q.SQL, c.Warn(ctx, q.SQL, nil))
	}
	t.Logf("BIRD mini-dev: %d gold queries checked, %d failures", len(qs), failures)
	static.log(t, "BIRD static warnings (Check)")
	warn.log(t, "BIRD warnings without data (Warn)")
}

// The PostgreSQL and MySQL versions of the BIRD mini-dev gold queries give
// no false failure in their dialects either (same schemas).
func TestBIRDGoldOtherDialects(t *testing.T) {
	tables := shareddata.Path(t, "bird", "mini_dev", "dev_tables.json")
	paths, err := birdschema.Materialize(t.TempDir(), tables)
	require.NoError(t, err)
	schemas := map[string]*schema.Database{}
	for id, path := range paths {
		ex, err := sqlite.Open(path, sqlite.Options{})
		require.NoError(t, err)
		schemas[id] = ex.Schema()
		ex.Close()
	}
	ctx := context.Background()
	for _, tc := range []struct {
		file    string
		dialect text2sql.Dialect
	}{
		{"mini_dev_postgresql.json", text2sql.DialectPostgres},
		{"mini_dev_mysql.json", text2sql.DialectMySQL},
	} {
		b, err := os.ReadFile(shareddata.Path(t, "bird", "mini_dev", tc.file))
		require.NoError(t, err)
		var qs []birdQuestion
		require.NoError(t, json.Unmarshal(b, &qs))
		warn := newTally()
		failures := 0
		for _, q := range qs {
			db := *schemas[q.DBID]
			db.Dialect = tc.dialect
			c := check.New(&db, tc.dialect)
			if !assert.Empty(t, c.Check(q.SQL).Failures, "%s %d (%s): false failure in\n  %s", tc.dialect, q.ID, q.DBID, oneLine(q.SQL)) {
				failures++
			}
			warn.add(q.SQL, c.Warn(ctx, q.SQL, nil))
		}
		t.Logf("BIRD mini-dev %s: %d gold queries, %d failures", tc.dialect, len(qs), failures)
		warn.log(t, "BIRD "+string(tc.dialect)+" warnings without data (Warn)")
	}
}

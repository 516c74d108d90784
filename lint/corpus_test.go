package lint_test

// The checker on the shared corpora: Spider's and BIRD's gold queries, and
// the published predictions of models, compared with what the engine says.

import (
	"context"
	"errors"
	"sort"
	"strings"
	"testing"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/executor/sqlite"
	"github.com/text2sql-go/text2sql/internal/birdschema"
	"github.com/text2sql-go/text2sql/internal/shareddata"
	"github.com/text2sql-go/text2sql/lint"
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
		k := lint.Kind(w)
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
		c := lint.New(ex.Schema(), text2sql.DialectSQLite)
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

// The deterministic checks give no false failure on the 500 BIRD mini-dev
// SQLite gold queries, against the schemas of dev_tables.json (the
// databases are not distributed: they are materialised empty). Warnings
// are static and schema-based; their counts are logged.
func TestBIRDGoldNoFailure(t *testing.T) {
	tables := shareddata.Path(t, "bird", "mini_dev", "dev_tables.json")
	qs := shareddata.BIRDMiniDev(t, text2sql.DialectSQLite)
	require.Equal(t, 500, len(qs), "questions")
	dir := t.TempDir()
	paths, err := birdschema.Materialize(dir, tables)
	require.NoError(t, err)
	checkers := map[string]*lint.Checker{}
	for id, path := range paths {
		ex, err := sqlite.Open(path, sqlite.Options{})
		require.NoError(t, err)
		checkers[id] = lint.New(ex.Schema(), text2sql.DialectSQLite)
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
	for _, d := range []text2sql.Dialect{text2sql.DialectPostgres, text2sql.DialectMySQL} {
		qs := shareddata.BIRDMiniDev(t, d)
		warn := newTally()
		failures := 0
		for _, q := range qs {
			db := *schemas[q.DBID]
			db.Dialect = d
			c := lint.New(&db, d)
			if !assert.Empty(t, c.Check(q.SQL).Failures, "%s %d (%s): false failure in\n  %s", d, q.ID, q.DBID, oneLine(q.SQL)) {
				failures++
			}
			warn.add(q.SQL, c.Warn(ctx, q.SQL, nil))
		}
		t.Logf("BIRD mini-dev %s: %d gold queries, %d failures", d, len(qs), failures)
		warn.log(t, "BIRD "+string(d)+" warnings without data (Warn)")
	}
}

// spiderExecutors returns the guarded executor of a Spider database by
// its ID, opening each once; they are closed when t ends.
func spiderExecutors(t *testing.T) func(dbID string) *sqlite.Executor {
	exs := map[string]*sqlite.Executor{}
	t.Cleanup(func() {
		for _, ex := range exs {
			ex.Close()
		}
	})
	return func(dbID string) *sqlite.Executor {
		t.Helper()
		ex := exs[dbID]
		if ex == nil {
			var err error
			ex, err = sqlite.Open(shareddata.SpiderDB(t, dbID), sqlite.Options{})
			require.NoError(t, err)
			exs[dbID] = ex
		}
		return ex
	}
}

// agreement compares the checker with the engine on real model output.
type agreement struct {
	tb                     testing.TB
	total, engineNames     int
	caught, missed, falseF int
	dialect                int
	refused                map[text2sql.ErrorKind]int // by the guard
}

// compare checks one prediction: a failure the engine does not confirm is
// a false failure (an error); an unknown name the engine reports and the
// checker does not is a miss (counted).
func (a *agreement) compare(label string, c *lint.Checker, ex *sqlite.Executor, sql string) {
	a.total++
	rep := c.Check(sql)
	err := ex.Check(context.Background(), sql)
	var se *text2sql.SQLError
	engineName := errors.As(err, &se) && (se.Kind == text2sql.KindUnknownColumn || se.Kind == text2sql.KindUnknownTable)
	if se != nil && se.Kind.Refusal() {
		// Several statements and prose are what the model wrote; a query
		// refused as a write or for a function is a false refusal.
		if a.refused == nil {
			a.refused = map[text2sql.ErrorKind]int{}
		}
		a.refused[se.Kind]++
		assert.NotContains(a.tb, []text2sql.ErrorKind{text2sql.KindNotReadOnly, text2sql.KindForbiddenFunction}, se.Kind,
			"%s: the guard refused a published prediction (%v)\n  %s", label, se, oneLine(sql))
	}
	if engineName {
		a.engineNames++
		if rep.OK() {
			a.missed++
			a.tb.Logf("%s: missed %v\n  %s", label, se, oneLine(sql))
		} else {
			a.caught++
		}
	}
	if err == nil && !assert.Empty(a.tb, rep.Failures, "%s: false failure: the engine accepts\n  %s", label, oneLine(sql)) {
		a.falseF++
	}
	for _, f := range rep.Failures {
		if f.Kind == text2sql.KindDialect {
			a.dialect++
		}
	}
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func (a *agreement) log(title string) {
	a.tb.Logf("%s: %d predictions; the engine reports an unknown name in %d, the checker catches %d and misses %d; %d false failures; %d dialect failures; refused by the guard: %v",
		title, a.total, a.engineNames, a.caught, a.missed, a.falseF, a.dialect, a.refused)
}

// Published model predictions on Spider dev: the checker never fails a
// query the engine accepts, and it catches the unknown names the engine
// reports.
func TestSpiderPredictionsAgreeWithEngine(t *testing.T) {
	if testing.Short() {
		t.Skip("checks 2,066 predictions")
	}
	spider := spiderExecutors(t)
	a := &agreement{tb: t}
	for _, p := range shareddata.SpiderPredictions(t) {
		ex := spider(p.DBID)
		a.compare(p.File+":"+p.Key+" ("+p.DBID+")", lint.New(ex.Schema(), text2sql.DialectSQLite), ex, p.SQL)
	}
	a.log("Spider dev predictions")
}

// Published model predictions on BIRD mini-dev (13 systems, SQLite),
// against the empty databases of dev_tables.json.
func TestBIRDPredictionsAgreeWithEngine(t *testing.T) {
	if testing.Short() {
		t.Skip("checks 6,500 predictions")
	}
	tables := shareddata.Path(t, "bird", "mini_dev", "dev_tables.json")
	paths, err := birdschema.Materialize(t.TempDir(), tables)
	require.NoError(t, err)
	exs := map[string]*sqlite.Executor{}
	checkers := map[string]*lint.Checker{}
	for id, p := range paths {
		ex, err := sqlite.Open(p, sqlite.Options{})
		require.NoError(t, err)
		defer ex.Close()
		exs[id] = ex
		checkers[id] = lint.New(ex.Schema(), text2sql.DialectSQLite)
	}
	a := &agreement{tb: t}
	for _, p := range shareddata.BIRDPredictions(t) {
		ex := exs[p.DBID]
		require.NotNil(t, ex, "%s %s: unknown database %q", p.File, p.Key, p.DBID)
		a.compare(p.File+":"+p.Key, checkers[p.DBID], ex, p.SQL)
	}
	a.log("BIRD mini-dev predictions")
}

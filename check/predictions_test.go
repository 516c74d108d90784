package check_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/check"
	"github.com/text2sql-go/text2sql/executor/sqlite"
	"github.com/text2sql-go/text2sql/internal/birdschema"
	"github.com/text2sql-go/text2sql/internal/shareddata"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
func (a *agreement) compare(label string, c *check.Checker, ex *sqlite.Executor, sql string) {
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
	b, err := os.ReadFile(shareddata.Path(t, "spider", "dev.json"))
	require.NoError(t, err)
	var dev []shareddata.SpiderQuestion
	require.NoError(t, json.Unmarshal(b, &dev))
	dir := shareddata.Path(t, "predictions", "spider_dev")
	files, _ := filepath.Glob(filepath.Join(dir, "*.txt"))
	sort.Strings(files)
	exs := map[string]*sqlite.Executor{}
	defer func() {
		for _, ex := range exs {
			ex.Close()
		}
	}()
	a := &agreement{tb: t}
	for _, f := range files {
		fh, err := os.Open(f)
		require.NoError(t, err)
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for i := 0; sc.Scan() && i < len(dev); i++ {
			db := dev[i].DBID
			if _, err := os.Stat(shareddata.SpiderDB(t, db)); err != nil {
				continue
			}
			ex := exs[db]
			if ex == nil {
				ex, err = sqlite.Open(shareddata.SpiderDB(t, db), sqlite.Options{})
				require.NoError(t, err)
				exs[db] = ex
			}
			a.compare(filepath.Base(f)+":"+db, check.New(ex.Schema(), text2sql.DialectSQLite), ex, sc.Text())
		}
		fh.Close()
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
	checkers := map[string]*check.Checker{}
	for id, p := range paths {
		ex, err := sqlite.Open(p, sqlite.Options{})
		require.NoError(t, err)
		defer ex.Close()
		exs[id] = ex
		checkers[id] = check.New(ex.Schema(), text2sql.DialectSQLite)
	}
	files, _ := filepath.Glob(filepath.Join(shareddata.Path(t, "bird", "mini_dev", "predictions"), "*.json"))
	sort.Strings(files)
	a := &agreement{tb: t}
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		var preds map[string]string
		require.NoError(t, json.Unmarshal(b, &preds), f)
		keys := make([]string, 0, len(preds))
		for k := range preds {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			v := preds[k]
			i := strings.LastIndex(v, "\t----- bird -----\t")
			if i < 0 {
				continue
			}
			sql, db := v[:i], strings.TrimSpace(v[i+len("\t----- bird -----\t"):])
			ex := exs[db]
			require.NotNil(t, ex, "%s %s: unknown database %q", f, k, db)
			a.compare(filepath.Base(f)+":"+k, checkers[db], ex, sql)
		}
	}
	a.log("BIRD mini-dev predictions")
}

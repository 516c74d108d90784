package regress_test

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/accuracy"
	"github.com/text2sql-go/text2sql/eval"
	"github.com/text2sql-go/text2sql/executor/sqlite"
	"github.com/text2sql-go/text2sql/internal/birdschema"
	"github.com/text2sql-go/text2sql/internal/extract"
	"github.com/text2sql-go/text2sql/internal/shareddata"
	"github.com/text2sql-go/text2sql/internal/sqlparse"
	"github.com/text2sql-go/text2sql/lint"
	"github.com/text2sql-go/text2sql/retriever"
	"github.com/text2sql-go/text2sql/schema"
)

var update = flag.Bool("update", false, "rewrite testdata/records.jsonl.gz from the current analysers")

const golden = "testdata/records.jsonl.gz"

// maxShown bounds the differences printed when records change.
const maxShown = 40

// records maps a key ("<set>/<item>/<analysis>") to the analysis's
// result as JSON.
type records map[string]string

func (r records) put(tb testing.TB, key string, v any) {
	b, err := json.Marshal(v)
	require.NoError(tb, err, key)
	_, dup := r[key]
	require.False(tb, dup, "duplicate record key %s", key)
	r[key] = string(b)
}

// failures renders a report's failures as "kind: message (hint)".
func failures(rep lint.Report) []string {
	out := []string{}
	for _, f := range rep.Failures {
		out = append(out, fmt.Sprintf("%s: %s (%s)", f.Kind, f.Message, f.Hint))
	}
	return out
}

// static records what the checker, the table extraction and the Spider
// rewrites say of one query.
func (r records) static(tb testing.TB, key string, c *lint.Checker, sql string, prediction bool) {
	rep := c.Check(sql)
	r.put(tb, key+"/failures", failures(rep))
	r.put(tb, key+"/warnings", rep.Warnings)
	r.put(tb, key+"/tables", sqlparse.Tables(sqlparse.Parse(sql, c.Dialect())))
	// The rewrite is recorded only where it changes the text.
	if rw := accuracy.SpiderRewrite(sql, prediction, false); rw != sql {
		r.put(tb, key+"/rewrite", rw)
	}
	r.put(tb, key+"/order", []bool{accuracy.SpiderOrderMatters(sql), accuracy.TopLevelOrderBy(sql)})
	r.put(tb, key+"/hardness", eval.SpiderHardnessOfSQL(sql))
}

// prose wraps a query the ways models write it, for extract.SQL.
var prose = []string{
	"%s",
	"Here is the query:\n```sql\n%s\n```\nIt answers the question.",
	"SQLQuery: %s\nAnswer: the result above.",
}

func (r records) extract(tb testing.TB, key, sql string) {
	var out []string
	for _, p := range prose {
		s, ok := extract.SQL(fmt.Sprintf(p, sql))
		if s == strings.TrimSpace(sql) {
			s = "(the query)" // the common case, kept short
		}
		out = append(out, fmt.Sprintf("%v %s", ok, s))
	}
	r.put(tb, key+"/extract", out)
}

// executors opens each database once.
type executors map[string]*sqlite.Executor

func (e executors) get(tb testing.TB, path string) *sqlite.Executor {
	if ex := e[path]; ex != nil {
		return ex
	}
	ex, err := sqlite.Open(path, sqlite.Options{})
	require.NoError(tb, err, path)
	e[path] = ex
	return ex
}

func (e executors) close() {
	for _, ex := range e {
		ex.Close()
	}
}

func spiderGold(tb testing.TB, r records, exs executors) {
	qs, _ := shareddata.SpiderDev(tb)
	ctx := context.Background()
	for i, q := range qs {
		ex := exs.get(tb, shareddata.SpiderDB(tb, q.DBID))
		c := lint.New(ex.Schema(), text2sql.DialectSQLite)
		key := fmt.Sprintf("spider-gold/%04d", i)
		r.static(tb, key, c, q.Query, false)
		res, err := ex.Execute(ctx, text2sql.ExecuteRequest{SQL: q.Query})
		require.NoError(tb, err, key)
		r.put(tb, key+"/warn", c.Warn(ctx, q.Query, res))
		r.put(tb, key+"/probe", c.WithProbe(ex).Warn(ctx, q.Query, res))

		var muts []string
		for _, mut := range shareddata.Misspellings(q.Query) {
			muts = append(muts, strings.Join(failures(c.Check(mut)), "; "))
		}
		r.put(tb, fmt.Sprintf("spider-mutants/%04d", i), muts)
	}
}

func birdSchemas(tb testing.TB, exs executors) map[string]*schema.Database {
	paths, err := birdschema.Materialize(tb.TempDir(), shareddata.Path(tb, "bird", "mini_dev", "dev_tables.json"))
	require.NoError(tb, err)
	out := map[string]*schema.Database{}
	for id, p := range paths {
		out[id] = exs.get(tb, p).Schema()
	}
	return out
}

func birdGold(tb testing.TB, r records, schemas map[string]*schema.Database) {
	ctx := context.Background()
	for _, d := range []text2sql.Dialect{text2sql.DialectSQLite, text2sql.DialectPostgres, text2sql.DialectMySQL} {
		for i, q := range shareddata.BIRDMiniDev(tb, d) {
			db := *schemas[q.DBID]
			db.Dialect = d
			c := lint.New(&db, d)
			key := fmt.Sprintf("bird-gold/%s/%03d-%d", d, i, q.ID)
			r.static(tb, key, c, q.SQL, false)
			r.put(tb, key+"/warn", c.Warn(ctx, q.SQL, nil))
		}
	}
}

func spiderPredictions(tb testing.TB, r records, exs executors) {
	for _, p := range shareddata.SpiderPredictions(tb) {
		c := lint.New(exs.get(tb, shareddata.SpiderDB(tb, p.DBID)).Schema(), text2sql.DialectSQLite)
		key := "spider-pred/" + p.File + "/" + p.Key
		r.static(tb, key, c, p.SQL, true)
		r.extract(tb, key, p.SQL)
	}
}

func birdPredictions(tb testing.TB, r records, schemas map[string]*schema.Database) {
	for _, p := range shareddata.BIRDPredictions(tb) {
		require.Contains(tb, schemas, p.DBID, p.File)
		key := "bird-pred/" + p.File + "/" + p.Key
		r.static(tb, key, lint.New(schemas[p.DBID], text2sql.DialectSQLite), p.SQL, true)
		r.extract(tb, key, p.SQL)
	}
}

// executionAccuracy records each question's outcome on the two DAIL-SQL
// prediction files (without the timings, which vary).
func executionAccuracy(tb testing.TB, r records, ds *eval.Dataset) {
	dir := shareddata.Path(tb, "predictions", "spider_dev")
	var preds []*eval.Predictions
	for _, name := range []string{"DAIL-SQL+GPT-4.txt", "DAIL-SQL+GPT-4+self-consistency.txt"} {
		p, err := eval.ReadPredictions(filepath.Join(dir, name))
		require.NoError(tb, err)
		preds = append(preds, p)
	}
	reps, err := eval.Score(context.Background(), ds, preds, eval.Options{})
	require.NoError(tb, err)
	for _, rep := range reps {
		for _, rec := range rep.Records {
			// Inputs, timings and where the data lies are not what is
			// compared.
			rec.Question, rec.GoldSQL, rec.PredSQL = "", "", ""
			rec.Error = strings.ReplaceAll(rec.Error, shareddata.Dir(), "<data>")
			rec.GoldMS, rec.PredMS = 0, 0
			r.put(tb, fmt.Sprintf("ex/%s/%s", rep.Predictions, rec.ID), rec)
		}
	}
}

// recall records each question's retrieval: the default retriever without
// a budget (every database's whole schema fits the default one, which
// would record the schemas, not the ranking), one index per database. The
// prompt sizes are left out: they follow the prompt's wording, not the
// analysers.
func recall(tb testing.TB, r records, name string, ds *eval.Dataset, opts eval.RecallOptions) {
	opts.Retriever = func(ctx context.Context, _ string, sch *schema.Database) (text2sql.Retriever, error) {
		return retriever.NewHybrid(ctx, retriever.HybridOptions{Schema: sch, Budget: -1})
	}
	rep, err := eval.Recall(context.Background(), ds, opts)
	require.NoError(tb, err)
	require.NotEmpty(tb, rep.Records)
	for _, rec := range rep.Records {
		rec.PromptTokens, rec.FullSchemaTokens = 0, 0
		r.put(tb, fmt.Sprintf("recall/%s/%s", name, rec.ID), rec)
	}
}

func current(t *testing.T) records {
	r := records{}
	exs := executors{}
	defer exs.close()
	spiderGold(t, r, exs)
	spiderPredictions(t, r, exs)
	schemas := birdSchemas(t, exs)
	birdGold(t, r, schemas)
	birdPredictions(t, r, schemas)

	spider, err := eval.LoadSpider(eval.SpiderPaths{Dir: shareddata.Path(t, "spider")})
	require.NoError(t, err)
	executionAccuracy(t, r, spider)
	recall(t, r, "spider", spider, eval.RecallOptions{})
	bird, err := eval.LoadBIRD(eval.BIRDPaths{Dir: shareddata.Path(t, "bird", "mini_dev")})
	require.NoError(t, err)
	recall(t, r, "bird", bird, eval.RecallOptions{Materialize: true})
	return r
}

func load(t *testing.T) records {
	f, err := os.Open(golden)
	require.NoError(t, err, "no records yet: run go test ./internal/regress -update")
	defer f.Close()
	zr, err := gzip.NewReader(f)
	require.NoError(t, err)
	r := records{}
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var line [2]string
		require.NoError(t, json.Unmarshal(sc.Bytes(), &line))
		r[line[0]] = line[1]
	}
	require.NoError(t, sc.Err())
	return r
}

func save(t *testing.T, r records) {
	keys := make([]string, 0, len(r))
	for k := range r {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	f, err := os.Create(golden)
	require.NoError(t, err)
	zw := gzip.NewWriter(f)
	enc := json.NewEncoder(zw)
	for _, k := range keys {
		require.NoError(t, enc.Encode([2]string{k, r[k]}))
	}
	require.NoError(t, zw.Close())
	require.NoError(t, f.Close())
}

// TestRecords compares what every analyser says on the shared data with
// the recorded results, record by record.
func TestRecords(t *testing.T) {
	if testing.Short() {
		t.Skip("analyses every gold query, prediction and mutant of the shared data")
	}
	now := current(t)
	if *update {
		save(t, now)
		t.Logf("%d records written to %s", len(now), golden)
		return
	}
	was := load(t)
	var diffs []string
	for k, v := range now {
		if w, ok := was[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("new     %s = %s", k, v))
		} else if w != v {
			diffs = append(diffs, fmt.Sprintf("changed %s\n  was %s\n  now %s", k, w, v))
		}
	}
	for k, w := range was {
		if _, ok := now[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("gone    %s = %s", k, w))
		}
	}
	sort.Strings(diffs)
	t.Logf("%d records, %d differences", len(now), len(diffs))
	for i, d := range diffs {
		if i == maxShown {
			t.Logf("… and %d more", len(diffs)-maxShown)
			break
		}
		t.Log(d)
	}
	if len(diffs) > 0 {
		t.Errorf("%d of %d records differ from %s; if the change is intended, run go test ./internal/regress -update and explain it in the commit", len(diffs), len(now), golden)
	}
}

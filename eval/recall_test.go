package eval

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/generator"
	"github.com/text2sql-go/text2sql/internal/shareddata"
	"github.com/text2sql-go/text2sql/llm/llmtest"
	"github.com/text2sql-go/text2sql/schema"
)

func testSchema() *schema.Database {
	return &schema.Database{Name: "shop", Tables: []*schema.Table{
		{Name: "customers", Columns: []schema.Column{{Name: "id"}, {Name: "name"}, {Name: "city"}}},
		{Name: "orders", Columns: []schema.Column{{Name: "id"}, {Name: "customer_id"}, {Name: "amount"}, {Name: "created_at"}}},
		{Name: "items", Columns: []schema.Column{{Name: "order_id"}, {Name: "sku"}, {Name: "Amount"}}},
	}}
}

func TestExtractGoldRefs(t *testing.T) {
	db := testSchema()
	tests := []struct {
		sql    string
		tables []string
		cols   []string // table.column, or a|b.column when ambiguous
	}{
		{"SELECT T1.name, count(*) FROM customers AS T1 JOIN orders AS T2 ON T1.id = T2.customer_id GROUP BY T1.id",
			[]string{"customers", "orders"}, []string{"customers.name", "customers.id", "orders.customer_id"}},
		{"SELECT name FROM customers WHERE city = 'Paris'", []string{"customers"}, []string{"customers.name", "customers.city"}},
		// A bare name that fits two tables of the query.
		{"SELECT amount FROM orders JOIN items ON orders.id = items.order_id", []string{"orders", "items"},
			[]string{"orders|items.amount", "orders.id", "items.order_id"}},
		// Subqueries and CTEs: a CTE is not a table.
		{"WITH big AS (SELECT customer_id FROM orders WHERE amount > 100) SELECT c.name FROM customers c WHERE c.id IN (SELECT customer_id FROM big)",
			[]string{"orders", "customers"}, []string{"orders.customer_id", "orders.amount", "customers.name", "customers.id"}},
		// Quoted identifiers, case differences, functions and keywords.
		{`SELECT "Name", max(O.AMOUNT) FROM Customers JOIN orders O ON O.customer_id = customers.id`,
			[]string{"customers", "orders"}, []string{"customers.name", "orders.amount", "orders.customer_id", "customers.id"}},
		{"SELECT count(*) FROM nowhere", nil, nil},
	}
	for _, tc := range tests {
		refs := ExtractGoldRefs(db, tc.sql)
		assert.Equal(t, tc.tables, refs.Tables, "%s: tables", tc.sql)
		var cols []string
		for _, c := range refs.Columns {
			cols = append(cols, strings.Join(c.Tables, "|")+"."+strings.ToLower(c.Column))
		}
		assert.Equal(t, tc.cols, cols, "%s: columns", tc.sql)
	}
	assert.Equal(t, []string{"nowhere"}, ExtractGoldRefs(db, "SELECT x FROM nowhere").Unresolved)
	_ = ExtractGoldRefs(nil, "SELECT a FROM b")
	_ = ExtractGoldRefs(db, "")
	_ = ExtractGoldRefs(db, "SELECT T1. FROM customers T1 .")
}

func TestRecallOf(t *testing.T) {
	db := testSchema()
	c := &text2sql.Retrieval{Tables: []text2sql.TableRef{{Name: "orders"}, {Name: "items"}}}
	r := RecallOf(db, "SELECT T1.name FROM customers AS T1 JOIN orders AS T2 ON T1.id = T2.customer_id", c)
	assert.False(t, r.Strict)
	assert.Equal(t, []string{"customers"}, r.Missing)
	assert.Equal(t, 3, r.GoldColumns)
	assert.Equal(t, 1, r.ColumnsRecalled)
	assert.Equal(t, 7, r.ColumnsShown)
	r = RecallOf(db, "SELECT sku FROM items", c)
	assert.True(t, r.Strict)
	assert.Equal(t, 1, r.ColumnsRecalled)
}

// Retrieval recall of the default retriever on Spider dev (972
// questions with a database) and on BIRD mini-dev (500 questions over
// empty databases built from dev_tables.json). The numbers are measured,
// logged and bounded below so a regression shows.
func TestRecallDefaultRetriever(t *testing.T) {
	ctx := context.Background()
	sp, err := Recall(ctx, spiderDev(t), RecallOptions{})
	require.NoError(t, err)
	logRecall(t, sp)
	assert.Equal(t, 972, sp.Overall.Questions)
	assert.Equal(t, 62, sp.Excluded)
	assert.GreaterOrEqual(t, *sp.Overall.StrictTableRecall, 0.98)

	dir := shareddata.Path(t, "bird", "mini_dev")
	bird, err := LoadBIRD(BIRDPaths{Dir: dir})
	require.NoError(t, err)
	// Without Materialize the questions of missing databases are excluded.
	r, err := Recall(ctx, bird, RecallOptions{})
	require.NoError(t, err)
	assert.Equal(t, 0, r.Overall.Questions)
	assert.Equal(t, 500, r.Excluded)
	br, err := Recall(ctx, bird, RecallOptions{Materialize: true})
	require.NoError(t, err)
	logRecall(t, br)
	assert.Equal(t, 500, br.Overall.Questions)
	assert.Len(t, br.Materialized, 11)
	// Every BIRD database's schema fits the default budget: the prompt is
	// the whole schema's, and every gold table is shown.
	assert.Equal(t, 1.0, *br.Overall.StrictTableRecall)
	assert.InDelta(t, 1.0, *br.Overall.PromptRatio, 0.1)
	assert.Equal(t, 0, br.Unresolved)

	// The 11 databases as one catalog of 75 tables: retrieval chooses, and
	// the prompt is a small part of the whole catalog's.
	cat, err := Recall(ctx, bird, RecallOptions{Materialize: true, Catalog: true})
	require.NoError(t, err)
	logRecall(t, cat)
	assert.Equal(t, 500, cat.Overall.Questions)
	// Measured: 0.972 strict recall at 5.38 tables shown.
	assert.GreaterOrEqual(t, *cat.Overall.StrictTableRecall, 0.95)
	assert.LessOrEqual(t, cat.Overall.MeanTablesShown, 6.0)
	assert.Less(t, *cat.Overall.PromptRatio, 0.25)
	other := 0
	for _, rec := range cat.Records {
		for _, name := range rec.Shown {
			if strings.Contains(name, ".") {
				other++ // another database's table, named with its namespace
			}
		}
	}
	assert.Positive(t, other, "tables of other databases are shown under their qualified names")
	_, err = Recall(ctx, &Dataset{Name: "no tables"}, RecallOptions{Catalog: true})
	assert.ErrorContains(t, err, "tables.json")
}

func logRecall(t *testing.T, r *RecallReport) {
	t.Helper()
	line := func(s RecallStats) string {
		return fmt.Sprintf("%-28s n=%4d strict %.4f table %.4f column %.4f shown %.2f tables %.1f columns (gold %.2f tables %.2f columns)",
			s.Name, s.Questions, *s.StrictTableRecall, *s.TableRecall, *s.ColumnRecall, s.MeanTablesShown, s.MeanColumnsShown, s.MeanGoldTables, s.MeanGoldColumns)
	}
	t.Logf("%s: %s", r.Dataset, line(r.Overall))
	for _, s := range r.ByDifficulty {
		t.Log("  " + line(s))
	}
	for _, s := range r.ByDatabase {
		t.Log("  " + line(s))
	}
}

// The oracle run over Spider dev exercises retrieval, prompting, the
// guard, execution and scoring with no model; its EX equals the strict
// table recall of the same retrievals, question by question.
func TestOracleSpiderDev(t *testing.T) {
	ds := spiderDev(t)
	gen, err := generator.New(nil, generator.Options{})
	require.NoError(t, err)
	rep, err := RunPipeline(context.Background(), ds, PipelineOptions{Generator: OracleGenerator(gen), Name: "oracle", OracleCheck: true})
	require.NoError(t, err)
	o := rep.Oracle
	require.NotNil(t, o)
	t.Logf("oracle EX %.4f (%d/%d), strict table recall %.4f, excluded %d", *rep.EX, rep.Correct, rep.Total, *o.StrictTableRecall, rep.Excluded)
	assert.Equal(t, 972, rep.Total)
	assert.Equal(t, 62, rep.Excluded)
	assert.Equal(t, *o.StrictTableRecall, *o.EX)
	assert.Empty(t, o.RecalledNotCorrect)
	assert.Empty(t, o.NotRecalledCorrect)
	// Every failure is the oracle declining for a table retrieval missed.
	for _, f := range rep.Failures {
		assert.Equal(t, OutcomeNoSQL, f.Outcome, "%+v", f)
		assert.Equal(t, "declined", f.Kind, "%+v", f)
	}
	// Prompting was exercised: token estimates for the sql stage.
	require.Contains(t, rep.Tokens, string(text2sql.StageSQL))
	ts := rep.Tokens[string(text2sql.StageSQL)]
	assert.Equal(t, 972, ts.N)
	assert.NotZero(t, ts.InputP50)
	for _, st := range []string{"retrieval", "sql", "execution", "pipeline", "gold", "prediction"} {
		assert.NotZero(t, rep.Latency[st].N, "no latency for %s", st)
	}
	require.NotNil(t, rep.Recall)
	assert.Equal(t, 972, rep.Recall.Overall.Questions)
}

// runScripted runs ds through RunPipeline with the default generator on
// model, each question's Config changed by configure.
func runScripted(t *testing.T, ds *Dataset, model text2sql.Model, configure func(*text2sql.Config)) *Report {
	t.Helper()
	gen, err := generator.New(model, generator.Options{})
	require.NoError(t, err)
	rep, err := RunPipeline(context.Background(), ds, PipelineOptions{Name: "scripted",
		Generator: func(context.Context, *Question, *schema.Database) (text2sql.Generator, error) { return gen, nil },
		Configure: func(cfg *text2sql.Config, _ *Question, _ *schema.Database) { configure(cfg) }})
	require.NoError(t, err)
	return rep
}

// A model-driven pipeline run (scripted model) through RunPipeline: the
// generator, repairs, declines and failures land in the report.
func TestRunPipelineScriptedModel(t *testing.T) {
	ds := birdFixture(t, 4)
	model := llmtest.Func(func(req text2sql.ModelRequest) (string, error) {
		q := req.Messages[len(req.Messages)-1].Content
		switch {
		case strings.Contains(q, "What is v of 0?"):
			return `{"answerable": true, "sql": "SELECT v FROM t WHERE id = 0", "explanation": "ok"}`, nil
		case strings.Contains(q, "What is v of 1?"):
			return `{"answerable": true, "sql": "SELECT v FROM t WHERE id = 2", "explanation": "wrong"}`, nil
		case strings.Contains(q, "What is v of 2?"):
			return `{"answerable": false, "sql": "", "explanation": "no idea"}`, nil
		}
		return `{"answerable": true, "sql": "SELECT nope FROM t", "explanation": "broken"}`, nil
	})
	rep := runScripted(t, ds, model, func(cfg *text2sql.Config) { cfg.MaxRepairs = 1 })
	got := []string{}
	for _, r := range rep.Records {
		got = append(got, string(r.Outcome)+"/"+r.Kind)
	}
	require.Equal(t, []string{"correct/", "wrong/wrong_values", "no_sql/declined", "error/unknown_column"}, got)
	assert.Equal(t, 2, rep.Records[3].Attempts)
	assert.Equal(t, 4, rep.Tokens["sql"].N)
	assert.Equal(t, 1, rep.Records[0].ModelCalls)
	b, err := json.Marshal(rep)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"ex":0.25`)
}

// With candidates, the vote can turn a wrong first candidate into a
// correct answer, and the record says how the SQL was chosen.
func TestRunPipelineCandidates(t *testing.T) {
	ds := birdFixture(t, 1)
	model := llmtest.Func(func(req text2sql.ModelRequest) (string, error) {
		if *req.Temperature == 0 {
			return `{"answerable": true, "sql": "SELECT v FROM t WHERE id = 2", "explanation": "wrong"}`, nil
		}
		return `{"answerable": true, "sql": "SELECT v FROM t WHERE id = 0", "explanation": "ok"}`, nil
	})
	rep := runScripted(t, ds, model, func(cfg *text2sql.Config) { cfg.Candidates, cfg.AllCandidates = 3, true })
	require.Len(t, rep.Records, 1)
	r := rep.Records[0]
	assert.Equal(t, OutcomeCorrect, r.Outcome, "%+v", r)
	assert.Equal(t, 3, r.Candidates)
	assert.Equal(t, text2sql.SelectVote, r.Selection)
	assert.Equal(t, 3, r.ModelCalls)
}

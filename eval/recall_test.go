package eval

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

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
		if !reflect.DeepEqual(refs.Tables, tc.tables) {
			t.Errorf("%s: tables %v, want %v", tc.sql, refs.Tables, tc.tables)
		}
		var cols []string
		for _, c := range refs.Columns {
			cols = append(cols, strings.Join(c.Tables, "|")+"."+strings.ToLower(c.Column))
		}
		if !reflect.DeepEqual(cols, tc.cols) {
			t.Errorf("%s: columns %v, want %v", tc.sql, cols, tc.cols)
		}
	}
	if refs := ExtractGoldRefs(db, "SELECT x FROM nowhere"); !reflect.DeepEqual(refs.Unresolved, []string{"nowhere"}) {
		t.Fatal(refs)
	}
	_ = ExtractGoldRefs(nil, "SELECT a FROM b")
	_ = ExtractGoldRefs(db, "")
	_ = ExtractGoldRefs(db, "SELECT T1. FROM customers T1 .")
}

func TestRecallOf(t *testing.T) {
	db := testSchema()
	c := &text2sql.Context{Tables: []text2sql.TableRef{{Name: "orders"}, {Name: "items"}}}
	r := RecallOf(db, "SELECT T1.name FROM customers AS T1 JOIN orders AS T2 ON T1.id = T2.customer_id", c)
	if r.Strict || !reflect.DeepEqual(r.Missing, []string{"customers"}) || r.GoldColumns != 3 || r.ColumnsRecalled != 1 || r.ColumnsShown != 7 {
		t.Fatalf("%+v", r)
	}
	r = RecallOf(db, "SELECT sku FROM items", c)
	if !r.Strict || r.ColumnsRecalled != 1 {
		t.Fatalf("%+v", r)
	}
}

// Retrieval recall of the default retriever on Spider dev (972
// questions with a database) and on BIRD mini-dev (500 questions over
// empty databases built from dev_tables.json). The numbers are measured,
// logged and bounded below so a regression shows.
func TestRecallDefaultRetriever(t *testing.T) {
	ctx := context.Background()
	sp, err := Recall(ctx, spiderDev(t), RecallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	logRecall(t, sp)
	if sp.Overall.Questions != 972 || sp.Excluded != 62 || *sp.Overall.StrictTableRecall < 0.98 {
		t.Fatalf("%+v", sp.Overall)
	}

	dir := shareddata.Path(t, "bird", "mini_dev")
	bird, err := LoadBIRD(BIRDPaths{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	// Without Materialize the questions of missing databases are excluded.
	if r, err := Recall(ctx, bird, RecallOptions{}); err != nil || r.Overall.Questions != 0 || r.Excluded != 500 {
		t.Fatalf("%v %+v", err, r)
	}
	br, err := Recall(ctx, bird, RecallOptions{Materialize: true})
	if err != nil {
		t.Fatal(err)
	}
	logRecall(t, br)
	if br.Overall.Questions != 500 || len(br.Materialized) != 11 || *br.Overall.StrictTableRecall < 0.90 || br.Unresolved != 0 {
		t.Fatalf("%+v %v", br.Overall, br.Materialized)
	}
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
	if err != nil {
		t.Fatal(err)
	}
	rep, err := RunPipeline(context.Background(), ds, PipelineOptions{Generator: OracleGenerator(gen), Name: "oracle", OracleCheck: true})
	if err != nil {
		t.Fatal(err)
	}
	o := rep.Oracle
	t.Logf("oracle EX %.4f (%d/%d), strict table recall %.4f, excluded %d", *rep.EX, rep.Correct, rep.Total, *o.StrictTableRecall, rep.Excluded)
	if rep.Total != 972 || rep.Excluded != 62 || *o.EX != *o.StrictTableRecall || len(o.RecalledNotCorrect)+len(o.NotRecalledCorrect) != 0 {
		t.Fatalf("%+v", o)
	}
	// Every failure is the oracle declining for a table retrieval missed.
	for _, f := range rep.Failures {
		if f.Outcome != OutcomeNoSQL || f.Kind != "declined" {
			t.Fatalf("%+v", f)
		}
	}
	// Prompting was exercised: token estimates for the sql stage.
	ts, ok := rep.Tokens[string(text2sql.StageSQL)]
	if !ok || ts.N != 972 || ts.InputP50 == 0 {
		t.Fatalf("%+v", rep.Tokens)
	}
	for _, st := range []string{"retrieval", "sql", "execution", "pipeline", "gold", "prediction"} {
		if rep.Latency[st].N == 0 {
			t.Fatalf("no latency for %s: %+v", st, rep.Latency)
		}
	}
	if rep.Recall == nil || rep.Recall.Overall.Questions != 972 {
		t.Fatalf("%+v", rep.Recall)
	}
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
	gen, err := generator.New(model, generator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := RunPipeline(context.Background(), ds, PipelineOptions{Name: "scripted",
		Generator: func(context.Context, *Question, *schema.Database) (text2sql.Generator, error) { return gen, nil },
		Configure: func(cfg *text2sql.Config, _ *Question, _ *schema.Database) { cfg.MaxRepairs = 1 }})
	if err != nil {
		t.Fatal(err)
	}
	got := []string{}
	for _, r := range rep.Records {
		got = append(got, string(r.Outcome)+"/"+r.Kind)
	}
	want := []string{"correct/", "wrong/wrong_values", "no_sql/declined", "error/unknown_column"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%v, want %v", got, want)
	}
	if rep.Records[3].Attempts != 2 || rep.Tokens["sql"].N != 4 || rep.Records[0].ModelCalls != 1 {
		t.Fatalf("%+v %+v", rep.Records[3], rep.Tokens)
	}
	b, err := json.Marshal(rep)
	if err != nil || !strings.Contains(string(b), `"ex":0.25`) {
		t.Fatalf("%v %s", err, b)
	}
}

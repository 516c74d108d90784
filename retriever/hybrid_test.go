package retriever

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/knowledge"
	"github.com/text2sql-go/text2sql/schema"
)

// registrar is a small university schema: students enrol in courses taught
// by instructors in departments.
func registrar() *schema.Database {
	col := func(name, typ string) schema.Column { return schema.Column{Name: name, Type: typ, NotNull: true} }
	return &schema.Database{Name: "registrar", Dialect: text2sql.DialectPostgres, Tables: []*schema.Table{
		{Name: "departments", Kind: schema.KindTable, PrimaryKey: []string{"department_id"},
			Columns: []schema.Column{col("department_id", "integer"), col("name", "text"), col("building", "text")}},
		{Name: "enrollments", Kind: schema.KindTable, PrimaryKey: []string{"student_id", "course_id"},
			Columns: []schema.Column{col("student_id", "integer"), col("course_id", "integer"), col("term", "text"), {Name: "grade_points", Type: "numeric(3,2)"}},
			ForeignKeys: []schema.ForeignKey{
				{Columns: []string{"student_id"}, RefTable: "students", RefColumns: []string{"student_id"}},
				{Columns: []string{"course_id"}, RefTable: "courses", RefColumns: []string{"course_id"}},
			}},
		{Name: "courses", Kind: schema.KindTable, PrimaryKey: []string{"course_id"},
			Columns:     []schema.Column{col("course_id", "integer"), col("title", "text"), col("credits", "integer"), col("instructor_id", "integer")},
			ForeignKeys: []schema.ForeignKey{{Columns: []string{"instructor_id"}, RefTable: "instructors", RefColumns: []string{"instructor_id"}}}},
		{Name: "instructors", Kind: schema.KindTable, PrimaryKey: []string{"instructor_id"},
			Columns:     []schema.Column{col("instructor_id", "integer"), col("first_name", "text"), col("last_name", "text"), col("department_id", "integer")},
			ForeignKeys: []schema.ForeignKey{{Columns: []string{"department_id"}, RefTable: "departments", RefColumns: []string{"department_id"}}}},
		{Name: "students", Kind: schema.KindTable, PrimaryKey: []string{"student_id"},
			Columns: []schema.Column{col("student_id", "integer"), col("first_name", "text"), col("last_name", "text"), col("major", "text"), col("enrolled_on", "date")}},
	}}
}

func registrarKnowledge() *knowledge.Base {
	return &knowledge.Base{
		Tables: []knowledge.TableNote{
			{Table: "enrollments", Description: "Which student takes which course in which term, with the grade earned.", Synonyms: []string{"registrations", "class lists"}},
			{Table: "courses", Description: "Courses (classes) offered, with credits and the instructor teaching them.", Synonyms: []string{"classes", "subjects"}},
		},
		Columns: []knowledge.ColumnNote{
			{Table: "enrollments", Column: "grade_points", Description: "Grade on a 0.00 to 4.00 scale; average grade means avg(grade_points).", Range: "0.00–4.00"},
		},
		Rules: []knowledge.Rule{
			{ID: "honours", Text: "An honours student has an average grade of at least 3.5 over all enrollments.", Tables: []string{"students", "enrollments"}},
		},
		Examples: []knowledge.Example{
			{ID: "q1", Question: "How many students take each class?", SQL: "SELECT c.title, count(*) FROM courses c JOIN enrollments e ON e.course_id = c.course_id GROUP BY c.title ORDER BY c.title"},
			{ID: "q2", Question: "Who teaches Linear Algebra?", SQL: "SELECT i.first_name, i.last_name FROM instructors i JOIN courses c ON c.instructor_id = i.instructor_id WHERE c.title = 'Linear Algebra'"},
		},
		Values: []knowledge.ValueList{
			{Table: "students", Column: "major", Values: []string{"Mathematics", "History", "Computer Science"}},
		},
	}
}

func newRegistrar(t testing.TB, opts HybridOptions) *Hybrid {
	t.Helper()
	if opts.Schema == nil {
		opts.Schema = registrar()
	}
	if opts.Knowledge == nil {
		opts.Knowledge = registrarKnowledge()
	}
	h, err := NewHybrid(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func retrieve(t testing.TB, h *Hybrid, q string) *text2sql.Context {
	t.Helper()
	c, err := h.Retrieve(context.Background(), text2sql.RetrieveRequest{Question: q})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestConcertSingerSingersFirst(t *testing.T) {
	db := spiderDB(t, "concert_singer")
	h, err := NewHybrid(context.Background(), HybridOptions{Schema: db})
	if err != nil {
		t.Fatal(err)
	}
	c := retrieve(t, h, "How many singers do we have?")
	if len(c.Tables) == 0 || c.Tables[0].Name != "singer" || c.Tables[0].Reason != "retrieved" {
		t.Fatalf("tables %+v", c.Tables)
	}
	if len(c.Items) == 0 || c.Items[0].ID != "table:singer" {
		t.Fatalf("items %+v", c.Items)
	}
	if c.LowConfidence {
		t.Errorf("low confidence, best similarity %.3f", c.BestSimilarity)
	}
	if !strings.Contains(c.Schema, "CREATE TABLE singer (") || c.Dialect != text2sql.DialectSQLite {
		t.Errorf("schema:\n%s", c.Schema)
	}
	// The schema shows full column lists from the schema model.
	for _, col := range db.Lookup("singer").Columns {
		if !strings.Contains(c.Schema, col.Name) {
			t.Errorf("column %s missing from\n%s", col.Name, c.Schema)
		}
	}
	for _, it := range c.Items {
		if it.Score <= 0 || it.Score > 2.0/61+1e-12 {
			t.Errorf("item %s score %v out of (0, 2/61]", it.ID, it.Score)
		}
		if it.Provenance != "bm25" && it.Provenance != "vector" && it.Provenance != "bm25+vector" {
			t.Errorf("item %s provenance %q", it.ID, it.Provenance)
		}
		if it.Provenance == "bm25" && it.Similarity != 0 {
			t.Errorf("bm25-only item %s has similarity %v", it.ID, it.Similarity)
		}
	}
	for i := 1; i < len(c.Items); i++ {
		if c.Items[i].Score > c.Items[i-1].Score {
			t.Errorf("items not ranked by score: %v", c.Items)
		}
	}
	t.Logf("tables %v best similarity %.3f", tableNames(c), c.BestSimilarity)
}

func TestLowConfidence(t *testing.T) {
	off := []string{"What is the capital of France?", "Who won the football world cup in 2014?", "Tell me a joke about penguins."}
	check := func(name string, h *Hybrid, on []string) {
		for _, q := range off {
			if c := retrieve(t, h, q); !c.LowConfidence {
				t.Errorf("%s: %q: not low confidence (best %.3f)", name, q, c.BestSimilarity)
			} else {
				t.Logf("%s: %q best %.3f (low)", name, q, c.BestSimilarity)
			}
		}
		for _, q := range on {
			if c := retrieve(t, h, q); c.LowConfidence {
				t.Errorf("%s: %q: low confidence (best %.3f)", name, q, c.BestSimilarity)
			} else {
				t.Logf("%s: %q best %.3f", name, q, c.BestSimilarity)
			}
		}
	}
	check("registrar", newRegistrar(t, HybridOptions{}), []string{"How many students take each class?", "Who teaches Linear Algebra?", "List the courses with more than 3 credits.", "What is the average grade of each student?"})
	check("registrar without knowledge", newRegistrar(t, HybridOptions{Knowledge: &knowledge.Base{}}), []string{"How many students are there?", "List the courses with more than 3 credits."})
	h, err := NewHybrid(context.Background(), HybridOptions{Schema: spiderDB(t, "concert_singer")})
	if err != nil {
		t.Fatal(err)
	}
	check("concert_singer", h, []string{"How many singers do we have?", "What is the average, minimum, and maximum age of all singers from France?", "Show the stadium name and the number of concerts in each stadium."})

	// A negative threshold never flags.
	h2 := newRegistrar(t, HybridOptions{LowConfidence: -1})
	if c := retrieve(t, h2, off[0]); c.LowConfidence {
		t.Error("LowConfidence -1 still flags")
	}
}

func TestJoinPath(t *testing.T) {
	// Students and instructors are three hops apart: students ←
	// enrollments → courses → instructors. With neighbours given no lead,
	// the two retrieved tables come first and the bridges follow them.
	h := newRegistrar(t, HybridOptions{Knowledge: &knowledge.Base{}})
	h.neighbourLead = 0
	c := retrieve(t, h, "For each student list the first names of instructors")
	names := tableNames(c)
	if len(names) < 4 || !slices.Equal(names[:2], []string{"students", "instructors"}) {
		t.Fatalf("tables %+v", c.Tables)
	}
	for _, b := range []string{"enrollments", "courses"} {
		if got := reasonOf(c, b); got != "join path" {
			t.Errorf("%s: reason %q, tables %+v", b, got, c.Tables)
		}
	}
	// With the defaults and four tables, the four on the path are shown,
	// not the unrelated departments.
	h = newRegistrar(t, HybridOptions{Knowledge: &knowledge.Base{}, MaxTables: 4})
	c = retrieve(t, h, "For each student list the first names of instructors")
	names = tableNames(c)
	slices.Sort(names)
	if !slices.Equal(names, []string{"courses", "enrollments", "instructors", "students"}) || strings.Contains(c.Schema, "CREATE TABLE departments") {
		t.Errorf("tables %+v", c.Tables)
	}

	// On Spider concert_singer: singers and concerts are joined through
	// singer_in_concert.
	db := spiderDB(t, "concert_singer")
	h, err := NewHybrid(context.Background(), HybridOptions{Schema: db, Quotas: map[text2sql.ItemKind]int{text2sql.ItemTable: 2}})
	if err != nil {
		t.Fatal(err)
	}
	c = retrieve(t, h, "List singer names and the concert names they performed in")
	if got := reasonOf(c, "singer_in_concert"); got != "join path" && got != "retrieved" {
		t.Fatalf("singer_in_concert not shown: %+v", c.Tables)
	}
	t.Logf("concert_singer tables %+v", c.Tables)

	// MaxTables caps bridges too.
	h = newRegistrar(t, HybridOptions{Knowledge: &knowledge.Base{}, MaxTables: 2})
	h.neighbourLead = 0
	c = retrieve(t, h, "For each student list the first names of instructors")
	if len(c.Tables) != 2 {
		t.Fatalf("MaxTables 2: %+v", c.Tables)
	}
}

func TestExampleLinking(t *testing.T) {
	// The example's SQL reads courses and enrollments: both come in "via
	// example q1" even when table retrieval is turned off.
	h := newRegistrar(t, HybridOptions{Quotas: map[text2sql.ItemKind]int{text2sql.ItemTable: 0, text2sql.ItemColumn: 0, text2sql.ItemRule: 0, text2sql.ItemValue: 0, text2sql.ItemExample: 1}})
	c := retrieve(t, h, "How many students are enrolled in every class?")
	if len(c.Items) != 1 || c.Items[0].ID != "example:q1" || c.Items[0].SQL == "" {
		t.Fatalf("items %+v", c.Items)
	}
	for _, tb := range []string{"courses", "enrollments"} {
		if got := reasonOf(c, tb); got != "via example q1" {
			t.Errorf("%s: reason %q in %+v", tb, got, c.Tables)
		}
	}
	if c.Match != nil {
		t.Errorf("unexpected match %+v", c.Match)
	}
}

func TestExampleMatch(t *testing.T) {
	h := newRegistrar(t, HybridOptions{})
	// Same question up to case, punctuation and spacing.
	c := retrieve(t, h, "  how many students TAKE each class ")
	if c.Match == nil || c.Match.ID != "q1" || c.Match.Similarity != 1 || !strings.HasPrefix(c.Match.SQL, "SELECT c.title") {
		t.Fatalf("match %+v", c.Match)
	}
	if c.LowConfidence {
		t.Error("exact match flagged low confidence")
	}
	// A different question does not match.
	if c := retrieve(t, h, "How many instructors teach each class?"); c.Match != nil {
		t.Errorf("unexpected match %+v", c.Match)
	}
	// With a low similarity threshold a near paraphrase matches by vector.
	h2 := newRegistrar(t, HybridOptions{ExampleReuse: 0.7})
	c = retrieve(t, h2, "Who is teaching Linear Algebra?")
	if c.Match == nil || c.Match.ID != "q2" || c.Match.Similarity >= 1 || c.Match.Similarity < 0.7 {
		t.Fatalf("vector match %+v", c.Match)
	}
	// With extra terms, the match compares the question alone.
	c, err := h2.Retrieve(context.Background(), text2sql.RetrieveRequest{Question: "Who is teaching Linear Algebra?", Terms: []string{"departments building"}})
	if err != nil || c.Match == nil || c.Match.ID != "q2" {
		t.Fatalf("match with terms %+v %v", c.Match, err)
	}
	// Disabled: only exact matches.
	h3 := newRegistrar(t, HybridOptions{ExampleReuse: -1})
	if c := retrieve(t, h3, "Who is teaching Linear Algebra?"); c.Match != nil {
		t.Errorf("disabled reuse matched %+v", c.Match)
	}
	if c := retrieve(t, h3, "Who teaches linear algebra"); c.Match == nil || c.Match.ID != "q2" {
		t.Errorf("exact match with reuse disabled: %+v", c.Match)
	}
}

func TestKindsRulesValuesRequired(t *testing.T) {
	h := newRegistrar(t, HybridOptions{})
	c := retrieve(t, h, "Which honours students major in Mathematics?")
	ids := map[string]text2sql.Item{}
	for _, it := range c.Items {
		ids[it.ID] = it
	}
	if _, ok := ids["rule:honours"]; !ok {
		t.Errorf("rule not retrieved: %+v", c.Items)
	}
	if it, ok := ids["value:students.major"]; !ok || it.Table != "students" || it.Column != "major" {
		t.Errorf("value list not retrieved: %+v", c.Items)
	}
	if !slices.Contains(tableNames(c), "students") || !slices.Contains(tableNames(c), "enrollments") {
		t.Errorf("tables %+v", c.Tables)
	}
	perKind := map[text2sql.ItemKind]int{}
	for _, it := range c.Items {
		perKind[it.Kind]++
	}
	for k, n := range perKind {
		if n > DefaultQuotas()[k] {
			t.Errorf("kind %s: %d items over quota", k, n)
		}
	}

	// Required tables are shown even past MaxTables; unknown names are
	// ignored.
	h = newRegistrar(t, HybridOptions{MaxTables: 1})
	c, err := h.Retrieve(context.Background(), text2sql.RetrieveRequest{Question: "List all students", RequiredTables: []string{"DEPARTMENTS", "no_such_table"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Tables) != 2 || c.Tables[0].Name != "students" || c.Tables[1].Name != "departments" || c.Tables[1].Reason != "required" {
		t.Fatalf("tables %+v", c.Tables)
	}
	if !strings.Contains(c.Schema, "CREATE TABLE departments") {
		t.Fatalf("schema %s", c.Schema)
	}
	// Terms steer retrieval.
	c, err = h.Retrieve(context.Background(), text2sql.RetrieveRequest{Question: "List all people", Terms: []string{"instructors"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Tables) == 0 || c.Tables[0].Name != "instructors" {
		t.Fatalf("terms: %+v", c.Tables)
	}
}

type reverseReranker struct{ calls int }

func (r *reverseReranker) Rerank(ctx context.Context, q string, items []text2sql.Item) ([]text2sql.Item, error) {
	r.calls++
	out := slices.Clone(items)
	slices.Reverse(out)
	for i := range out {
		out[i].Score = float64(len(out) - i)
	}
	return append(out, text2sql.Item{ID: "table:invented", Kind: text2sql.ItemTable}), nil
}

type failingReranker struct{}

func (failingReranker) Rerank(context.Context, string, []text2sql.Item) ([]text2sql.Item, error) {
	return nil, errors.New("boom")
}

func TestReranker(t *testing.T) {
	rr := &reverseReranker{}
	h := newRegistrar(t, HybridOptions{Reranker: rr, Quotas: map[text2sql.ItemKind]int{text2sql.ItemTable: 2}})
	c := retrieve(t, h, "How many students are there?")
	if rr.calls != 1 {
		t.Fatalf("calls %d", rr.calls)
	}
	n := 0
	for i, it := range c.Items {
		if it.ID == "table:invented" {
			t.Fatal("reranker invented an item")
		}
		if it.Kind == text2sql.ItemTable {
			n++
		}
		if i > 0 && it.Score > c.Items[i-1].Score {
			t.Fatalf("order: %+v", c.Items)
		}
	}
	if n != 2 {
		t.Fatalf("table quota after rerank: %d", n)
	}
	h = newRegistrar(t, HybridOptions{Reranker: failingReranker{}})
	if _, err := h.Retrieve(context.Background(), text2sql.RetrieveRequest{Question: "x students"}); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("err %v", err)
	}
}

func TestBadInput(t *testing.T) {
	ctx := context.Background()
	for _, opts := range []HybridOptions{
		{},
		{Schema: registrar(), RRFK: -1},
		{Schema: registrar(), MaxTables: -1},
		{Schema: registrar(), BatchSize: -1},
		{Schema: registrar(), Quotas: map[text2sql.ItemKind]int{"bogus": 1}},
		{Schema: registrar(), Quotas: map[text2sql.ItemKind]int{text2sql.ItemTable: -1}},
		{Schema: &schema.Database{Tables: []*schema.Table{nil}}},
		{Schema: registrar(), RRFK: math.Inf(1)},
		{Schema: registrar(), LowConfidence: math.NaN()},
	} {
		if _, err := NewHybrid(ctx, opts); !errors.Is(err, text2sql.ErrInvalidConfig) {
			t.Errorf("%+v: %v", opts, err)
		}
	}
	h := newRegistrar(t, HybridOptions{})
	for _, q := range []string{"", "  \n\t"} {
		if _, err := h.Retrieve(ctx, text2sql.RetrieveRequest{Question: q}); !errors.Is(err, text2sql.ErrEmptyQuestion) {
			t.Errorf("%q: %v", q, err)
		}
	}
	// Punctuation only: no features, no vector hits; still an answer.
	c, err := h.Retrieve(ctx, text2sql.RetrieveRequest{Question: "???"})
	if err != nil || !c.LowConfidence || c.BestSimilarity != 0 {
		t.Fatalf("%+v %v", c, err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := h.Retrieve(cctx, text2sql.RetrieveRequest{Question: "students"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
	if _, err := NewHybrid(cctx, HybridOptions{Schema: registrar()}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled build: %v", err)
	}
	// An empty schema works and shows nothing.
	h, err = NewHybrid(ctx, HybridOptions{Schema: &schema.Database{}})
	if err != nil {
		t.Fatal(err)
	}
	if c, err := h.Retrieve(ctx, text2sql.RetrieveRequest{Question: "anything"}); err != nil || len(c.Tables) != 0 || c.Schema != "" {
		t.Fatalf("%+v %v", c, err)
	}
}

func TestConcurrentRetrieve(t *testing.T) {
	h := newRegistrar(t, HybridOptions{})
	qs := []string{"How many students take each class?", "Who teaches Linear Algebra?", "average grade per student", "courses with 4 credits"}
	want := make([]*text2sql.Context, len(qs))
	for i, q := range qs {
		want[i] = retrieve(t, h, q)
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := 0; r < 20; r++ {
				i := (g + r) % len(qs)
				c, err := h.Retrieve(context.Background(), text2sql.RetrieveRequest{Question: qs[i]})
				if err != nil {
					t.Error(err)
					return
				}
				if fmt.Sprint(c.Tables) != fmt.Sprint(want[i].Tables) || c.Schema != want[i].Schema {
					t.Errorf("%q: differs under concurrency", qs[i])
					return
				}
			}
		}()
	}
	wg.Wait()
}

func FuzzRetrieve(f *testing.F) {
	for _, s := range []string{"How many students take each class?", "", "\x00\xff", "students.first_name", "名前は?", "how  MANY students take each class"} {
		f.Add(s, "terms", "students")
	}
	h := newRegistrar(f, HybridOptions{})
	f.Fuzz(func(t *testing.T, q, term, table string) {
		c, err := h.Retrieve(context.Background(), text2sql.RetrieveRequest{Question: q, Terms: []string{term}, RequiredTables: []string{table}})
		if err != nil {
			if !errors.Is(err, text2sql.ErrEmptyQuestion) {
				t.Fatal(err)
			}
			return
		}
		if len(c.Tables) > DefaultMaxTables+1 {
			t.Fatalf("%d tables", len(c.Tables))
		}
	})
}

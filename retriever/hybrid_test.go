package retriever

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/stagekit"
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
	require.NoError(t, err)
	return h
}

func retrieve(t testing.TB, h *Hybrid, q string) *text2sql.Retrieval {
	t.Helper()
	c, err := h.Retrieve(context.Background(), text2sql.RetrieveRequest{Question: q})
	require.NoError(t, err)
	return c
}

func TestConcertSingerSingersFirst(t *testing.T) {
	db := spiderDB(t, "concert_singer")
	h, err := NewHybrid(context.Background(), HybridOptions{Schema: db})
	require.NoError(t, err)
	c := retrieve(t, h, "How many singers do we have?")
	require.NotEmpty(t, c.Tables)
	require.Equal(t, "singer", c.Tables[0].Name)
	require.Equal(t, text2sql.ReasonRetrieved, c.Tables[0].Reason)
	// Without table notes, a table item would only repeat the DDL: none
	// is in the prompt's items.
	for _, it := range c.Items {
		assert.NotEqual(t, text2sql.ItemTable, it.Kind, "item %s repeats the DDL", it.ID)
	}
	assert.False(t, c.LowConfidence, "low confidence, best similarity %.3f", c.BestSimilarity)
	assert.Contains(t, c.Schema, "CREATE TABLE singer (")
	assert.Equal(t, text2sql.DialectSQLite, c.Dialect)
	// The schema shows full column lists from the schema model.
	for _, col := range db.Lookup("singer").Columns {
		assert.Contains(t, c.Schema, col.Name)
	}
	for _, it := range c.Items {
		assert.Positive(t, it.Score, "item %s", it.ID)
		assert.LessOrEqual(t, it.Score, 2.0/61+1e-12, "item %s score out of (0, 2/61]", it.ID)
		assert.Contains(t, []text2sql.Provenance{text2sql.ProvenanceBM25, text2sql.ProvenanceVector, text2sql.ProvenanceBoth}, it.Provenance, "item %s", it.ID)
		if it.Provenance == text2sql.ProvenanceBM25 {
			assert.Zero(t, it.Similarity, "bm25-only item %s has a similarity", it.ID)
		}
	}
	for i := 1; i < len(c.Items); i++ {
		assert.LessOrEqual(t, c.Items[i].Score, c.Items[i-1].Score, "items ranked by score: %v", c.Items)
	}
	t.Logf("tables %v best similarity %.3f", tableNames(c), c.BestSimilarity)
}

func TestLowConfidence(t *testing.T) {
	off := []string{"What is the capital of France?", "Who won the football world cup in 2014?", "Tell me a joke about penguins."}
	check := func(name string, h *Hybrid, on []string) {
		for _, q := range off {
			c := retrieve(t, h, q)
			assert.True(t, c.LowConfidence, "%s: %q: not low confidence (best %.3f)", name, q, c.BestSimilarity)
			t.Logf("%s: %q best %.3f (off-topic)", name, q, c.BestSimilarity)
		}
		for _, q := range on {
			c := retrieve(t, h, q)
			assert.False(t, c.LowConfidence, "%s: %q: low confidence (best %.3f)", name, q, c.BestSimilarity)
			t.Logf("%s: %q best %.3f", name, q, c.BestSimilarity)
		}
	}
	check("registrar", newRegistrar(t, HybridOptions{}), []string{"How many students take each class?", "Who teaches Linear Algebra?", "List the courses with more than 3 credits.", "What is the average grade of each student?"})
	check("registrar without knowledge", newRegistrar(t, HybridOptions{Knowledge: &knowledge.Base{}}), []string{"How many students are there?", "List the courses with more than 3 credits."})
	h, err := NewHybrid(context.Background(), HybridOptions{Schema: spiderDB(t, "concert_singer")})
	require.NoError(t, err)
	check("concert_singer", h, []string{"How many singers do we have?", "What is the average, minimum, and maximum age of all singers from France?", "Show the stadium name and the number of concerts in each stadium."})

	// A negative threshold never flags.
	h2 := newRegistrar(t, HybridOptions{LowConfidence: -1})
	assert.False(t, retrieve(t, h2, off[0]).LowConfidence, "LowConfidence -1 still flags")
}

func TestJoinPath(t *testing.T) {
	// Students and instructors are three hops apart: students ←
	// enrollments → courses → instructors. With neighbours given no lead,
	// the two retrieved tables come first and the bridges follow them.
	h := newRegistrar(t, HybridOptions{Knowledge: &knowledge.Base{}, Budget: -1})
	h.neighbourLead = 0
	c := retrieve(t, h, "For each student list the first names of instructors")
	names := tableNames(c)
	require.GreaterOrEqual(t, len(names), 4, "tables %+v", c.Tables)
	require.Equal(t, []string{"students", "instructors"}, names[:2])
	for _, b := range []string{"enrollments", "courses"} {
		assert.Equal(t, "join path", reasonOf(c, b), "%s: tables %+v", b, c.Tables)
	}
	// With the defaults and four tables, the four on the path are shown,
	// not the unrelated departments.
	h = newRegistrar(t, HybridOptions{Knowledge: &knowledge.Base{}, MaxTables: 4, Budget: -1})
	c = retrieve(t, h, "For each student list the first names of instructors")
	names = tableNames(c)
	slices.Sort(names)
	assert.Equal(t, []string{"courses", "enrollments", "instructors", "students"}, names)
	assert.NotContains(t, c.Schema, "CREATE TABLE departments")

	// On Spider concert_singer: singers and concerts are joined through
	// singer_in_concert.
	db := spiderDB(t, "concert_singer")
	h, err := NewHybrid(context.Background(), HybridOptions{Schema: db, Quotas: map[text2sql.ItemKind]int{text2sql.ItemTable: 2}, Budget: -1})
	require.NoError(t, err)
	c = retrieve(t, h, "List singer names and the concert names they performed in")
	require.Contains(t, []string{"join path", "retrieved"}, reasonOf(c, "singer_in_concert"), "singer_in_concert shown: %+v", c.Tables)
	t.Logf("concert_singer tables %+v", c.Tables)

	// MaxTables caps bridges too.
	h = newRegistrar(t, HybridOptions{Knowledge: &knowledge.Base{}, MaxTables: 2, Budget: -1})
	h.neighbourLead = 0
	c = retrieve(t, h, "For each student list the first names of instructors")
	require.Len(t, c.Tables, 2, "MaxTables 2")
}

func TestExampleLinking(t *testing.T) {
	// The example's SQL reads courses and enrollments: both come in "via
	// example q1" even when table retrieval is turned off.
	h := newRegistrar(t, HybridOptions{Quotas: map[text2sql.ItemKind]int{text2sql.ItemTable: 0, text2sql.ItemColumn: 0, text2sql.ItemRule: 0, text2sql.ItemValue: 0, text2sql.ItemExample: 1}})
	c := retrieve(t, h, "How many students are enrolled in every class?")
	require.Len(t, c.Items, 1)
	require.Equal(t, "example:q1", c.Items[0].ID)
	require.NotEmpty(t, c.Items[0].SQL)
	for _, tb := range []string{"courses", "enrollments"} {
		assert.Equal(t, "via example q1", reasonOf(c, tb), "%s in %+v", tb, c.Tables)
	}
	assert.Nil(t, c.Match)
}

func TestExampleMatch(t *testing.T) {
	h := newRegistrar(t, HybridOptions{})
	// Same question up to case, punctuation and spacing.
	c := retrieve(t, h, "  how many students TAKE each class ")
	require.NotNil(t, c.Match)
	require.Equal(t, "q1", c.Match.ID)
	require.InDelta(t, 1, c.Match.Similarity, 0)
	require.Regexp(t, `^SELECT c\.title`, c.Match.SQL)
	assert.False(t, c.LowConfidence, "exact match flagged low confidence")
	// A different question does not match.
	assert.Nil(t, retrieve(t, h, "How many instructors teach each class?").Match)
	// With a low similarity threshold a near paraphrase matches by vector.
	h2 := newRegistrar(t, HybridOptions{ExampleReuse: 0.7})
	c = retrieve(t, h2, "Who is teaching Linear Algebra?")
	require.NotNil(t, c.Match, "vector match")
	require.Equal(t, "q2", c.Match.ID)
	require.Less(t, c.Match.Similarity, 1.0)
	require.GreaterOrEqual(t, c.Match.Similarity, 0.7)
	// With extra terms, the match compares the question alone.
	c, err := h2.Retrieve(context.Background(), text2sql.RetrieveRequest{Question: "Who is teaching Linear Algebra?", Terms: []string{"departments building"}})
	require.NoError(t, err)
	require.NotNil(t, c.Match, "match with terms")
	require.Equal(t, "q2", c.Match.ID)
	// Disabled: only exact matches.
	h3 := newRegistrar(t, HybridOptions{ExampleReuse: -1})
	assert.Nil(t, retrieve(t, h3, "Who is teaching Linear Algebra?").Match, "disabled reuse matched")
	if m := retrieve(t, h3, "Who teaches linear algebra").Match; assert.NotNil(t, m, "exact match with reuse disabled") {
		assert.Equal(t, "q2", m.ID)
	}
}

func TestKindsRulesValuesRequired(t *testing.T) {
	h := newRegistrar(t, HybridOptions{})
	c := retrieve(t, h, "Which honours students major in Mathematics?")
	ids := map[string]text2sql.Item{}
	for _, it := range c.Items {
		ids[it.ID] = it
	}
	assert.Contains(t, ids, "rule:honours", "rule retrieved")
	if it, ok := ids["value:students.major"]; assert.True(t, ok, "value list retrieved: %+v", c.Items) {
		assert.Equal(t, "students", it.Table)
		assert.Equal(t, "major", it.Column)
	}
	assert.Contains(t, tableNames(c), "students")
	assert.Contains(t, tableNames(c), "enrollments")
	perKind := map[text2sql.ItemKind]int{}
	for _, it := range c.Items {
		perKind[it.Kind]++
	}
	for k, n := range perKind {
		assert.LessOrEqual(t, n, DefaultQuotas()[k], "kind %s: items over quota", k)
	}

	// Required tables are shown even past MaxTables; unknown names are
	// ignored.
	h = newRegistrar(t, HybridOptions{MaxTables: 1, Budget: -1})
	c, err := h.Retrieve(context.Background(), text2sql.RetrieveRequest{Question: "List all students", RequiredTables: []string{"DEPARTMENTS", "no_such_table"}})
	require.NoError(t, err)
	require.Equal(t, []string{"students", "departments"}, tableNames(c))
	require.Equal(t, text2sql.ReasonRequired, c.Tables[1].Reason)
	require.Contains(t, c.Schema, "CREATE TABLE departments")
	// Terms steer retrieval.
	c, err = h.Retrieve(context.Background(), text2sql.RetrieveRequest{Question: "List all people", Terms: []string{"instructors"}})
	require.NoError(t, err)
	require.NotEmpty(t, c.Tables, "terms")
	require.Equal(t, "instructors", c.Tables[0].Name, "terms")
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
	// Every table has a note, so every table item reaches the prompt and
	// the quota alone decides how many do.
	kb := registrarKnowledge()
	for _, name := range []string{"students", "instructors", "departments"} {
		kb.Tables = append(kb.Tables, knowledge.TableNote{Table: name, Description: "The " + name + " of the university."})
	}
	h := newRegistrar(t, HybridOptions{Reranker: rr, Knowledge: kb, Quotas: map[text2sql.ItemKind]int{text2sql.ItemTable: 2}})
	c := retrieve(t, h, "How many students are there?")
	require.Equal(t, 1, rr.calls)
	n := 0
	for i, it := range c.Items {
		require.NotEqual(t, "table:invented", it.ID, "reranker invented an item")
		if it.Kind == text2sql.ItemTable {
			n++
		}
		if i > 0 {
			require.LessOrEqual(t, it.Score, c.Items[i-1].Score, "order: %+v", c.Items)
		}
	}
	require.Equal(t, 2, n, "table quota after rerank: %+v", c.Items)
	h = newRegistrar(t, HybridOptions{Reranker: failingReranker{}})
	_, err := h.Retrieve(context.Background(), text2sql.RetrieveRequest{Question: "x students"})
	require.ErrorContains(t, err, "boom")
}

// reportingReranker promotes the items about one table and reports it.
type reportingReranker struct{ table string }

func (r reportingReranker) Rerank(ctx context.Context, q string, items []text2sql.Item) ([]text2sql.Item, error) {
	out, _, err := r.RerankReport(ctx, q, items)
	return out, err
}

func (r reportingReranker) RerankReport(_ context.Context, _ string, items []text2sql.Item) ([]text2sql.Item, *text2sql.RerankReport, error) {
	out := slices.Clone(items)
	slices.SortStableFunc(out, func(a, b text2sql.Item) int {
		return cmp.Compare(boolRank(b.Table == r.table), boolRank(a.Table == r.table))
	})
	for i := range out {
		out[i].Score = float64(len(out) - i)
	}
	return out, &text2sql.RerankReport{Reranker: "test", Tables: []string{r.table},
		Calls: []text2sql.ModelCall{{Model: "scripted", Usage: text2sql.Usage{InputTokens: 7}}}}, nil
}

// orderReranker puts the items of its tables first, in its order, and
// reports them (with extra names) as selected when report is set.
type orderReranker struct {
	order  []string
	extra  []string
	report bool
}

func (r orderReranker) Rerank(ctx context.Context, q string, items []text2sql.Item) ([]text2sql.Item, error) {
	out, _, err := r.RerankReport(ctx, q, items)
	return out, err
}

func (r orderReranker) RerankReport(_ context.Context, _ string, items []text2sql.Item) ([]text2sql.Item, *text2sql.RerankReport, error) {
	rank := func(it text2sql.Item) int {
		if i := slices.Index(r.order, it.Table); i >= 0 {
			return i
		}
		return len(r.order)
	}
	out := slices.Clone(items)
	slices.SortStableFunc(out, func(a, b text2sql.Item) int { return cmp.Compare(rank(a), rank(b)) })
	for i := range out {
		out[i].Score = float64(len(out) - i)
	}
	if !r.report {
		return out, nil, nil
	}
	return out, &text2sql.RerankReport{Reranker: "test", Tables: append(slices.Clone(r.order), r.extra...)}, nil
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestReportingReranker(t *testing.T) {
	plain := newRegistrar(t, HybridOptions{})
	c := retrieve(t, plain, "How many students are there?")
	require.Nil(t, c.Rerank, "no reranker, no report")
	require.NotEqual(t, "departments", c.Tables[0].Name)

	h := newRegistrar(t, HybridOptions{Reranker: reportingReranker{table: "departments"}})
	c = retrieve(t, h, "How many students are there?")
	require.NotNil(t, c.Rerank)
	assert.Equal(t, "test", c.Rerank.Reranker)
	assert.Equal(t, []string{"departments"}, c.Rerank.Tables)
	require.Len(t, c.Rerank.Calls, 1)
	assert.Equal(t, "departments", c.Tables[0].Name, "the reranked order decides the first table: %v", tableNames(c))

	// The selection is shown first even where the foreign-key preference
	// would pick a neighbour: students has none to departments. (Budget
	// -1: never the whole schema, as on a big one.)
	rr := orderReranker{order: []string{"students", "departments"}, report: true}
	h = newRegistrar(t, HybridOptions{Reranker: rr, MaxTables: 2, Budget: -1})
	c = retrieve(t, h, "Which instructors teach which courses?")
	assert.Equal(t, []string{"students", "departments"}, tableNames(c), "selected first")
	rr.report = false
	h = newRegistrar(t, HybridOptions{Reranker: rr, MaxTables: 2, Budget: -1})
	c = retrieve(t, h, "Which instructors teach which courses?")
	assert.Equal(t, "students", tableNames(c)[0])
	assert.NotEqual(t, "departments", tableNames(c)[1], "without a reported selection the neighbour preference decides: %v", tableNames(c))
	// The budget bounds the selection too: the first table always fits.
	rr.report = true
	h = newRegistrar(t, HybridOptions{Reranker: rr, Budget: 1})
	c = retrieve(t, h, "Which instructors teach which courses?")
	assert.Equal(t, []string{"students"}, tableNames(c), "budget")
	// Reported names the schema lacks are ignored.
	rr = orderReranker{order: []string{"students"}, report: true, extra: []string{"nowhere", "departments"}}
	h = newRegistrar(t, HybridOptions{Reranker: rr, MaxTables: 2, Budget: -1})
	c = retrieve(t, h, "Which instructors teach which courses?")
	assert.Equal(t, []string{"students", "departments"}, tableNames(c))

	// A plain Reranker still reports nothing.
	h = newRegistrar(t, HybridOptions{Reranker: &reverseReranker{}})
	require.Nil(t, retrieve(t, h, "How many students are there?").Rerank)
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
		_, err := NewHybrid(ctx, opts)
		assert.ErrorIs(t, err, text2sql.ErrInvalidConfig, "%+v", opts)
	}
	h := newRegistrar(t, HybridOptions{})
	for _, q := range []string{"", "  \n\t"} {
		_, err := h.Retrieve(ctx, text2sql.RetrieveRequest{Question: q})
		assert.ErrorIs(t, err, text2sql.ErrEmptyQuestion, "%q", q)
	}
	// Punctuation only: no features, no vector hits; still an answer.
	c, err := h.Retrieve(ctx, text2sql.RetrieveRequest{Question: "???"})
	require.NoError(t, err)
	require.True(t, c.LowConfidence)
	require.Zero(t, c.BestSimilarity)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err = h.Retrieve(cctx, text2sql.RetrieveRequest{Question: "students"})
	require.ErrorIs(t, err, context.Canceled, "cancelled")
	_, err = NewHybrid(cctx, HybridOptions{Schema: registrar()})
	require.ErrorIs(t, err, context.Canceled, "cancelled build")
	// An empty schema works and shows nothing.
	h, err = NewHybrid(ctx, HybridOptions{Schema: &schema.Database{}})
	require.NoError(t, err)
	c, err = h.Retrieve(ctx, text2sql.RetrieveRequest{Question: "anything"})
	require.NoError(t, err)
	require.Empty(t, c.Tables)
	require.Empty(t, c.Schema)
}

func TestConcurrentRetrieve(t *testing.T) {
	h := newRegistrar(t, HybridOptions{})
	qs := []string{"How many students take each class?", "Who teaches Linear Algebra?", "average grade per student", "courses with 4 credits"}
	want := make([]*text2sql.Retrieval, len(qs))
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
				if !assert.NoError(t, err) ||
					!assert.Equal(t, fmt.Sprint(want[i].Tables), fmt.Sprint(c.Tables), "%q: differs under concurrency", qs[i]) ||
					!assert.Equal(t, want[i].Schema, c.Schema, "%q: differs under concurrency", qs[i]) {
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
			require.ErrorIs(t, err, text2sql.ErrEmptyQuestion)
			return
		}
		require.LessOrEqual(t, len(c.Tables), DefaultMaxTables+1, "tables")
	})
}

// TestBudget: the whole schema when its DDL fits the budget, else tables
// while their DDL fits, at most MaxTables.
func TestBudget(t *testing.T) {
	db := registrar()
	question := "For each student list the first names of instructors"

	// No budget: MaxTables alone decides, whatever the schema's size.
	alone := retrieve(t, newRegistrar(t, HybridOptions{Knowledge: &knowledge.Base{}, MaxTables: 2, Budget: -1}), question)
	require.Len(t, alone.Tables, 2)

	// The registrar's five tables fit the default budget: all are shown,
	// first the MaxTables that retrieval alone chooses.
	c := retrieve(t, newRegistrar(t, HybridOptions{Knowledge: &knowledge.Base{}, MaxTables: 2}), question)
	require.Len(t, c.Tables, len(db.Tables), "tables %+v", c.Tables)
	assert.Equal(t, alone.Tables, c.Tables[:2])
	for _, ref := range c.Tables[2:] {
		assert.Equal(t, text2sql.ReasonWholeSchema, ref.Reason, "%s", ref.Name)
	}
	for _, tb := range db.Tables {
		assert.Contains(t, c.Schema, "CREATE TABLE "+tb.Name+" (")
	}

	// A budget one token short of the whole schema: retrieval chooses, and
	// the DDL shown stays within the budget.
	total := 0
	for _, tb := range db.Tables {
		total += stagekit.EstimateTokens(db.DDL([]*schema.Table{tb}))
	}
	for _, budget := range []int{total - 1, total / 2, 1} {
		h := newRegistrar(t, HybridOptions{Knowledge: &knowledge.Base{}, MaxTables: len(db.Tables), Budget: budget})
		c := retrieve(t, h, question)
		require.NotEmpty(t, c.Tables, "budget %d: the first table is always shown", budget)
		spent := 0
		for _, ref := range c.Tables {
			assert.NotEqual(t, text2sql.ReasonWholeSchema, ref.Reason, "budget %d", budget)
			spent += stagekit.EstimateTokens(db.DDL([]*schema.Table{db.Lookup(ref.Name)}))
		}
		if len(c.Tables) > 1 {
			assert.LessOrEqual(t, spent, budget, "budget %d: tables %+v", budget, c.Tables)
		}
		assert.Less(t, len(c.Tables), len(db.Tables), "budget %d", budget)
	}

	// Required tables are shown past the budget.
	h := newRegistrar(t, HybridOptions{Knowledge: &knowledge.Base{}, MaxTables: 1, Budget: 1})
	c, err := h.Retrieve(context.Background(), text2sql.RetrieveRequest{Question: "List all students", RequiredTables: []string{"departments"}})
	require.NoError(t, err)
	assert.Equal(t, []string{"students", "departments"}, tableNames(c))
}

// TestNamespaceFill: in a catalog of several databases whose whole does
// not fit the budget, the first table's namespace is shown whole when it
// fits beside the tables chosen and has at most MaxTables tables.
func TestNamespaceFill(t *testing.T) {
	db := unionSchema(t, []string{"concert_singer", "pets_1", "car_1", "world_1", "flight_2", "dog_kennels", "student_transcripts_tracking", "cre_Doc_Template_Mgt",
		"employee_hire_evaluation", "network_1", "orchestra", "poker_player", "real_estate_properties", "singer", "tvshow", "voter_1", "museum_visit", "battle_death", "course_teach"})
	// car_1 has 6 tables; the question names two of them.
	const q = "How many continents are there?"
	var ns []string
	for _, tb := range db.Tables {
		if tb.Schema == "car_1" {
			ns = append(ns, tb.QualifiedName())
		}
	}
	require.Len(t, ns, 6)
	h, err := NewHybrid(context.Background(), HybridOptions{Schema: db, MaxTables: len(ns)})
	require.NoError(t, err)
	require.False(t, h.wholeSchema, "the catalog must not fit the default budget")
	c := retrieve(t, h, q)
	require.NotEmpty(t, c.Tables)
	require.Equal(t, "car_1.continents", c.Tables[0].Name)
	shown := tableNames(c)
	for _, name := range ns {
		assert.Contains(t, shown, name)
	}
	filled := 0
	for _, ref := range c.Tables {
		if ref.Reason == text2sql.ReasonWholeSchema {
			filled++
			assert.Contains(t, ns, ref.Name, "only the first table's namespace is filled")
		}
	}
	assert.Positive(t, filled, "tables %+v", c.Tables)

	// A namespace of more than MaxTables tables, no budget, or a budget
	// the namespace does not fit: MaxTables alone decides (a budget of 10
	// tokens holds only the first table).
	for _, tc := range []struct{ max, budget, want int }{{len(ns) - 1, 0, len(ns) - 1}, {len(ns), -1, len(ns)}, {len(ns), 10, 1}} {
		h, err := NewHybrid(context.Background(), HybridOptions{Schema: db, MaxTables: tc.max, Budget: tc.budget})
		require.NoError(t, err)
		c := retrieve(t, h, q)
		assert.LessOrEqual(t, len(c.Tables), tc.want, "%+v: %v", tc, tableNames(c))
		for _, ref := range c.Tables {
			assert.NotEqual(t, text2sql.ReasonWholeSchema, ref.Reason, "%+v: %s", tc, ref.Name)
		}
	}
}

// TestRoutingConfidence: in a catalog of several namespaces, how many
// tables of other namespaces are shown depends on how close the runner-up
// namespace comes to the routed one: none when the question is plainly
// about one, tables of the next best namespaces only when several are as
// good.
func TestRoutingConfidence(t *testing.T) {
	col := func(n, typ string) schema.Column { return schema.Column{Name: n, Type: typ} }
	hr := func(ns string) []*schema.Table {
		employees := &schema.Table{Schema: ns, Name: "employees", Kind: schema.KindTable, PrimaryKey: []string{"id"},
			Columns:     []schema.Column{col("id", "integer"), col("name", "text"), col("department_id", "integer")},
			ForeignKeys: []schema.ForeignKey{{Columns: []string{"department_id"}, RefTable: "departments", RefColumns: []string{"id"}}}}
		departments := &schema.Table{Schema: ns, Name: "departments", Kind: schema.KindTable, PrimaryKey: []string{"id"},
			Columns: []schema.Column{col("id", "integer"), col("name", "text")}}
		return []*schema.Table{employees, departments}
	}
	shop := []*schema.Table{
		{Schema: "shop", Name: "orders", Kind: schema.KindTable, Columns: []schema.Column{col("id", "integer"), col("customer_id", "integer"), col("total", "numeric")}},
		{Schema: "shop", Name: "customers", Kind: schema.KindTable, Columns: []schema.Column{col("id", "integer"), col("name", "text"), col("city", "text")}},
		{Schema: "shop", Name: "products", Kind: schema.KindTable, Columns: []schema.Column{col("id", "integer"), col("name", "text"), col("price", "numeric")}},
	}
	const q = "List the employees with the names of their departments"
	namespaces := func(c *text2sql.Retrieval) []string {
		var out []string
		for _, ref := range c.Tables {
			if ns, _, _ := strings.Cut(ref.Name, "."); !slices.Contains(out, ns) {
				out = append(out, ns)
			}
		}
		return out
	}

	// One namespace plainly matches: the free slots stay empty.
	db := &schema.Database{Name: "corp", Dialect: text2sql.DialectPostgres, Tables: append(hr("hr"), shop...)}
	h, err := NewHybrid(context.Background(), HybridOptions{Schema: db, MaxTables: 5, Budget: -1})
	require.NoError(t, err)
	c := retrieve(t, h, q)
	assert.ElementsMatch(t, []string{"hr.employees", "hr.departments"}, tableNames(c))

	// Four namespaces match equally: the slots hedge the routing, with
	// tables of the two next best namespaces and none of the fourth.
	db = &schema.Database{Name: "corp", Dialect: text2sql.DialectPostgres}
	for _, ns := range []string{"hr_2023", "hr_2024", "hr_2025", "hr_2026"} {
		db.Tables = append(db.Tables, hr(ns)...)
	}
	db.Tables = append(db.Tables, shop...)
	h, err = NewHybrid(context.Background(), HybridOptions{Schema: db, MaxTables: 8, Budget: -1})
	require.NoError(t, err)
	c = retrieve(t, h, q)
	shown := namespaces(c)
	assert.Len(t, shown, 1+hedgeNamespaces, "tables %v", tableNames(c))
	assert.NotContains(t, shown, "shop")
}

// TestNamedTableKeepsItsSlot: the lead a foreign-key neighbour of a chosen
// table gets cannot push out a table the question names.
func TestNamedTableKeepsItsSlot(t *testing.T) {
	q := "List the students and the departments"
	h := newRegistrar(t, HybridOptions{Knowledge: &knowledge.Base{}, MaxTables: 2, Budget: -1})
	assert.ElementsMatch(t, []string{"students", "departments"}, tableNames(retrieve(t, h, q)))
	// Without the protection the neighbour of departments (instructors)
	// takes the slot of students.
	h.byName = nil
	assert.Equal(t, []string{"departments", "instructors"}, tableNames(retrieve(t, h, q)))
}

// TestForeignKeyStaysInItsSchema: a key without RefSchema references its
// own schema; a table of that name in another schema is not its neighbour.
func TestForeignKeyStaysInItsSchema(t *testing.T) {
	col := func(n string) schema.Column { return schema.Column{Name: n, Type: "INTEGER"} }
	orders := &schema.Table{Schema: "shop", Name: "orders", Kind: schema.KindTable, Columns: []schema.Column{col("id"), col("customer_id")},
		ForeignKeys: []schema.ForeignKey{{Columns: []string{"customer_id"}, RefTable: "customers", RefColumns: []string{"id"}}}}
	elsewhere := &schema.Table{Schema: "crm", Name: "customers", Kind: schema.KindTable, Columns: []schema.Column{col("id")}}
	db := &schema.Database{Name: "two", Dialect: text2sql.DialectPostgres, Tables: []*schema.Table{orders, elsewhere}}
	assert.Empty(t, fkGraph(db, db.Index(), true)[orders], "shop.orders → customers must not resolve to crm.customers")

	own := &schema.Table{Schema: "shop", Name: "customers", Kind: schema.KindTable, Columns: []schema.Column{col("id")}}
	db.Tables = append(db.Tables, own)
	assert.Equal(t, []*schema.Table{own}, fkGraph(db, db.Index(), true)[orders])
}

// TestCrossSchemaKeyKeepsItsLead: in a database of several schemas, a
// table of another schema that the routing confidence holds back is
// shown when a declared key joins it to a table chosen in the routed one.
func TestCrossSchemaKeyKeepsItsLead(t *testing.T) {
	col := func(n, typ string) schema.Column { return schema.Column{Name: n, Type: typ} }
	tbl := func(ns, name string, cols ...schema.Column) *schema.Table {
		return &schema.Table{Schema: ns, Name: name, Kind: schema.KindTable, PrimaryKey: []string{"id"}, Columns: append([]schema.Column{col("id", "integer")}, cols...)}
	}
	orders := tbl("sales", "orders", col("customer_id", "integer"), col("total", "numeric"), col("placed_at", "timestamp"))
	orders.ForeignKeys = []schema.ForeignKey{{Columns: []string{"customer_id"}, RefSchema: "crm", RefTable: "customers", RefColumns: []string{"id"}}}
	customers := tbl("crm", "customers", col("name", "text"), col("city", "text"))
	db := &schema.Database{Name: "shop", Dialect: text2sql.DialectPostgres, Tables: []*schema.Table{
		orders,
		tbl("sales", "order_items", col("order_id", "integer"), col("quantity", "integer")),
		tbl("sales", "order_returns", col("order_id", "integer"), col("reason", "text")),
		tbl("sales", "order_notes", col("order_id", "integer"), col("note", "text")),
		customers,
		tbl("crm", "leads", col("name", "text")),
	}}
	h, err := NewHybrid(context.Background(), HybridOptions{Schema: db, MaxTables: 3, Budget: -1})
	require.NoError(t, err)
	q := "Order totals with their items, returns and the customer"
	shown := tableNames(retrieve(t, h, q))
	require.NotEmpty(t, shown)
	assert.Equal(t, "sales.orders", shown[0])
	assert.Contains(t, shown, "crm.customers", "joined by a declared key")

	// Without the key, crm.customers is held back.
	orders.ForeignKeys = nil
	h, err = NewHybrid(context.Background(), HybridOptions{Schema: db, MaxTables: 3, Budget: -1})
	require.NoError(t, err)
	shown = tableNames(retrieve(t, h, q))
	require.NotEmpty(t, shown)
	assert.Equal(t, "sales.orders", shown[0])
	assert.NotContains(t, shown, "crm.customers")
}

package llmrerank_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/stagekit"
	"github.com/text2sql-go/text2sql/llm/llmtest"
	llmrerank "github.com/text2sql-go/text2sql/rerank/llm"
	"github.com/text2sql-go/text2sql/schema"
)

func newReranker(t testing.TB, m text2sql.Model, opts llmrerank.Options) *llmrerank.Reranker {
	t.Helper()
	r, err := llmrerank.New(m, opts)
	require.NoError(t, err)
	return r
}

func TestNewValidates(t *testing.T) {
	db, _ := demoDB(t)
	m := llmtest.New()
	_, err := llmrerank.New(nil, llmrerank.Options{Schema: db})
	require.ErrorIs(t, err, llmrerank.ErrNoModel)
	require.ErrorIs(t, err, text2sql.ErrInvalidConfig)
	_, err = llmrerank.New(m, llmrerank.Options{})
	require.ErrorIs(t, err, llmrerank.ErrNoSchema)
	require.ErrorIs(t, err, text2sql.ErrInvalidConfig)
	for name, o := range map[string]llmrerank.Options{
		"budget":      {Budget: -1},
		"max tables":  {MaxTables: -1},
		"timeout":     {Timeout: -time.Second},
		"temperature": {Temperature: 2.5},
	} {
		o.Schema = db
		_, err := llmrerank.New(m, o)
		require.ErrorIs(t, err, text2sql.ErrInvalidConfig, name)
	}
}

// The model's tables lead the items and the tables shown, in its order;
// nothing is added or lost; Score agrees with the order.
func TestSelectionReorders(t *testing.T) {
	db, kb := demoDB(t)
	const q = "How many students take each class?"
	plain := retrieve(t, hybrid(t, db, kb, nil), q)
	require.NotEqual(t, "departments", plain.Tables[0].Name, "the test needs a fused order that does not start with departments")
	require.Nil(t, plain.Rerank)

	m := llmtest.New(tablesReply("departments", "courses"))
	rr := newReranker(t, m, llmrerank.Options{Schema: db, Knowledge: kb})
	cands := candidates(t, db, kb, q)
	got, rep, err := rr.RerankReport(context.Background(), q, cands)
	require.NoError(t, err)
	require.Empty(t, rep.Fallback)
	assert.Equal(t, llmrerank.Name, rep.Reranker)
	assert.Equal(t, []string{"departments", "courses"}, rep.Tables)
	require.Len(t, rep.Calls, 1)
	assert.Equal(t, llmtest.ModelName, rep.Calls[0].Model)
	assert.Positive(t, rep.Calls[0].Usage.InputTokens)
	require.Equal(t, 1, m.CallCount())

	assert.ElementsMatch(t, ids(cands), ids(got), "the same items, reordered")
	assert.Equal(t, "table:departments", got[0].ID, "the first selected table's own item leads: %v", ids(got))
	first := firstTables(got, 3)
	assert.Equal(t, []string{"departments", "courses", firstTables(cands, 1)[0]}, first,
		"the selection, then the rest in fused order")
	requireOrdered(t, got)
	assert.InDelta(t, 1.0, got[0].Score, 1e-12)

	// What the model was shown: the question, every candidate's DDL (the
	// budget fits them), structured output.
	req := m.Calls()[0]
	user := req.Messages[0].Content
	assert.Contains(t, user, q)
	for _, name := range firstTables(cands, 100) {
		assert.Contains(t, user, "CREATE TABLE "+name, "candidate %s", name)
	}
	assert.JSONEq(t, string(llmrerank.TablesSchema()), string(req.Schema))
	assert.Equal(t, llmrerank.System(db.Dialect), req.System)
	// Table notes say only what the DDL does not.
	assert.Contains(t, user, "## Table notes")
	assert.Contains(t, user, "Also called: pupil")
	assert.NotContains(t, user, "Columns: ", "the schema part of a table document repeats the DDL")
	m = llmtest.New(tablesReply("departments"))
	_, _, err = newReranker(t, m, llmrerank.Options{Schema: db}).RerankReport(context.Background(), q, cands)
	require.NoError(t, err)
	assert.NotContains(t, m.Calls()[0].Messages[0].Content, "## Table notes", "without Knowledge a table item is its DDL")

	// Through the retriever: the tables shown follow the selection.
	m = llmtest.New(tablesReply("departments", "courses"))
	c := retrieve(t, hybrid(t, db, kb, newReranker(t, m, llmrerank.Options{Schema: db})), q)
	require.NotNil(t, c.Rerank)
	assert.Empty(t, c.Rerank.Fallback)
	assert.Equal(t, []string{"departments", "courses"}, tableNames(c)[:2], "shown: %v", tableNames(c))
	requireOrdered(t, c.Items)
}

// Column selection: a second call over the selected tables only; the
// selected columns' items lead their table's items; unknown columns are
// ignored and recorded.
func TestColumnSelection(t *testing.T) {
	db, kb := demoDB(t)
	const q = "What is the average grade of each course?"
	cands := candidates(t, db, kb, q)
	var enrollCols []string
	for _, it := range cands {
		if it.Table == "enrollments" && it.Kind == text2sql.ItemColumn {
			enrollCols = append(enrollCols, it.Column)
		}
	}
	require.GreaterOrEqual(t, len(enrollCols), 2, "the test needs two column notes of enrollments: %v", ids(cands))
	pick := enrollCols[len(enrollCols)-1] // the last one in fused order

	m := llmtest.New(
		tablesReply("enrollments", "courses"),
		columnsReply("enrollments."+pick, "COURSES.Title", "courses.no_such_column", "nowhere.x", "students.last_name"),
	)
	rr := newReranker(t, m, llmrerank.Options{Schema: db, SelectColumns: true})
	got, rep, err := rr.RerankReport(context.Background(), q, cands)
	require.NoError(t, err)
	require.Empty(t, rep.Fallback)
	require.Len(t, rep.Calls, 2)
	assert.Equal(t, []string{"enrollments", "courses"}, rep.Tables)
	assert.Equal(t, []string{"enrollments." + pick, "courses.title"}, rep.Columns)
	assert.Equal(t, []string{"courses.no_such_column", "nowhere.x", "students.last_name"}, rep.Ignored,
		"unknown columns and columns of unselected tables are ignored")

	require.Equal(t, "table:enrollments", got[0].ID)
	assert.Equal(t, "column:enrollments."+pick, got[1].ID, "the selected column's note comes right after its table: %v", ids(got))
	assert.ElementsMatch(t, ids(cands), ids(got))
	requireOrdered(t, got)

	cols := m.Calls()[1].Messages[0].Content
	assert.Contains(t, cols, "CREATE TABLE enrollments")
	assert.Contains(t, cols, "CREATE TABLE courses")
	assert.NotContains(t, cols, "CREATE TABLE students", "column selection shows only the selected tables")
	assert.JSONEq(t, string(llmrerank.ColumnsSchema()), string(m.Calls()[1].Schema))
}

// A failed column selection keeps the table selection and says so.
func TestColumnSelectionFailureKeepsTables(t *testing.T) {
	db, kb := demoDB(t)
	const q = "What is the average grade of each course?"
	cands := candidates(t, db, kb, q)
	m := llmtest.New(tablesReply("courses"), "I cannot answer in JSON.")
	rr := newReranker(t, m, llmrerank.Options{Schema: db, SelectColumns: true, MaxReasks: -1})
	got, rep, err := rr.RerankReport(context.Background(), q, cands)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(rep.Fallback, "column selection: malformed answer"), rep.Fallback)
	assert.Equal(t, []string{"courses"}, rep.Tables)
	assert.Empty(t, rep.Columns)
	assert.Equal(t, "table:courses", got[0].ID)
	assert.Len(t, rep.Calls, 2)
}

// requireFallback checks a fallback: the items as given, in the same
// order with the same scores, and no error.
func requireFallback(t *testing.T, cands, got []text2sql.Item, rep *text2sql.RerankReport, err error, why string) {
	t.Helper()
	require.NoError(t, err)
	require.NotNil(t, rep)
	assert.True(t, strings.HasPrefix(rep.Fallback, why), "fallback %q, want %q…", rep.Fallback, why)
	assert.Empty(t, rep.Tables)
	assert.Equal(t, cands, got, "the fused order and scores are kept")
}

func TestMalformedAnswerFallsBack(t *testing.T) {
	db, kb := demoDB(t)
	const q = "How many students take each class?"
	cands := candidates(t, db, kb, q)

	// Default: one re-ask, then the fused order.
	m := llmtest.New("Sure! The tables are students and courses.", "```json\n{\"tabels\": [\"students\"]}\n```")
	got, rep, err := newReranker(t, m, llmrerank.Options{Schema: db}).RerankReport(context.Background(), q, cands)
	requireFallback(t, cands, got, rep, err, "malformed answer")
	assert.Len(t, rep.Calls, 2, "the re-ask is counted")
	assert.Equal(t, 2, m.CallCount())
	assert.Contains(t, m.Calls()[1].Messages[2].Content, `"tables"`, "the re-ask names the field")

	// No re-ask.
	m = llmtest.New("not JSON")
	got, rep, err = newReranker(t, m, llmrerank.Options{Schema: db, MaxReasks: -1}).RerankReport(context.Background(), q, cands)
	requireFallback(t, cands, got, rep, err, "malformed answer")
	assert.Len(t, rep.Calls, 1)

	// A re-ask that succeeds is used.
	m = llmtest.New("not JSON", tablesReply("departments"))
	got, rep, err = newReranker(t, m, llmrerank.Options{Schema: db}).RerankReport(context.Background(), q, cands)
	require.NoError(t, err)
	assert.Empty(t, rep.Fallback)
	assert.Equal(t, "table:departments", got[0].ID)
	assert.Len(t, rep.Calls, 2)
}

func TestModelErrorFallsBack(t *testing.T) {
	db, kb := demoDB(t)
	const q = "How many students take each class?"
	cands := candidates(t, db, kb, q)
	boom := &text2sql.ModelError{Provider: "gemini", StatusCode: 503, Message: "overloaded", Retryable: true}
	m := llmtest.Func(func(text2sql.ModelRequest) (string, error) { return "", boom })
	got, rep, err := newReranker(t, m, llmrerank.Options{Schema: db}).RerankReport(context.Background(), q, cands)
	requireFallback(t, cands, got, rep, err, "model error: ")
	assert.Contains(t, rep.Fallback, "HTTP 503: overloaded")
	assert.Empty(t, rep.Calls, "a failed call returned nothing to record")

	// Through the retriever: the retrieval succeeds, as without a
	// reranker, and the fallback is in Retrieval.Rerank.
	plain := retrieve(t, hybrid(t, db, kb, nil), q)
	c := retrieve(t, hybrid(t, db, kb, newReranker(t, m, llmrerank.Options{Schema: db})), q)
	require.NotNil(t, c.Rerank)
	assert.True(t, strings.HasPrefix(c.Rerank.Fallback, "model error: "), c.Rerank.Fallback)
	assert.Equal(t, tableNames(plain), tableNames(c))
	assert.Equal(t, ids(plain.Items), ids(c.Items))
}

// Names that are not candidates are ignored and recorded, never shown;
// an answer naming no candidate is a fallback.
func TestUnknownTablesIgnored(t *testing.T) {
	db, kb := demoDB(t)
	const q = "How many students take each class?"
	all := candidates(t, db, kb, q)
	// Leave departments out of the candidates: a real table, but not one
	// the model may promote.
	var cands []text2sql.Item
	for _, it := range all {
		if it.Table != "departments" {
			cands = append(cands, it)
		}
	}
	require.Less(t, len(cands), len(all))

	m := llmtest.New(tablesReply("teachers", `"Courses"`, "departments", "courses", " students "))
	got, rep, err := newReranker(t, m, llmrerank.Options{Schema: db}).RerankReport(context.Background(), q, cands)
	require.NoError(t, err)
	assert.Empty(t, rep.Fallback)
	assert.Equal(t, []string{"courses", "students"}, rep.Tables, "quoted and spaced names resolve, duplicates once")
	assert.Equal(t, []string{"teachers", "departments"}, rep.Ignored)
	assert.ElementsMatch(t, ids(cands), ids(got), "nothing invented")
	assert.Equal(t, "table:courses", got[0].ID)

	m = llmtest.New(tablesReply("teachers", "pg_authid"))
	got, rep, err = newReranker(t, m, llmrerank.Options{Schema: db}).RerankReport(context.Background(), q, cands)
	requireFallback(t, cands, got, rep, err, "empty selection")
	assert.Equal(t, []string{"teachers", "pg_authid"}, rep.Ignored)

	m = llmtest.New(tablesReply())
	got, rep, err = newReranker(t, m, llmrerank.Options{Schema: db}).RerankReport(context.Background(), q, cands)
	requireFallback(t, cands, got, rep, err, "empty selection")
}

func TestMaxTables(t *testing.T) {
	db, kb := demoDB(t)
	const q = "How many students take each class?"
	cands := candidates(t, db, kb, q)
	fused := firstTables(cands, 100)
	require.GreaterOrEqual(t, len(fused), 4)
	// The model picks three tables, the last in fused order first.
	pick := []string{fused[len(fused)-1], fused[len(fused)-2], fused[len(fused)-3]}

	m := llmtest.New(tablesReply(pick...))
	got, rep, err := newReranker(t, m, llmrerank.Options{Schema: db, MaxTables: 2}).RerankReport(context.Background(), q, cands)
	require.NoError(t, err)
	assert.Equal(t, pick[:2], rep.Tables, "MaxTables cuts the selection")
	assert.Equal(t, []string{pick[0], pick[1], fused[0]}, firstTables(got, 3), "the fused best follows the selection, not the cut pick")
}

// Options.Timeout ends a slow call: the fused order, promptly.
func TestTimeoutFallsBack(t *testing.T) {
	db, kb := demoDB(t)
	const q = "How many students take each class?"
	cands := candidates(t, db, kb, q)
	slow := text2sql.ModelFunc(func(ctx context.Context, _ text2sql.ModelRequest) (*text2sql.ModelResponse, error) {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Minute):
			return &text2sql.ModelResponse{Text: tablesReply("departments")}, nil
		}
	})
	start := time.Now()
	got, rep, err := newReranker(t, slow, llmrerank.Options{Schema: db, Timeout: 50 * time.Millisecond}).RerankReport(context.Background(), q, cands)
	requireFallback(t, cands, got, rep, err, "timeout after 50ms")
	assert.Less(t, time.Since(start), 5*time.Second)
}

// The caller's context ending is not a fallback: the reranker returns
// its error promptly, and so does the retrieval.
func TestContextCancelled(t *testing.T) {
	db, kb := demoDB(t)
	const q = "How many students take each class?"
	cands := candidates(t, db, kb, q)
	started := make(chan struct{}, 4)
	slow := text2sql.ModelFunc(func(ctx context.Context, _ text2sql.ModelRequest) (*text2sql.ModelResponse, error) {
		started <- struct{}{}
		<-ctx.Done()
		return nil, ctx.Err()
	})
	rr := newReranker(t, slow, llmrerank.Options{Schema: db})

	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	start := time.Now()
	got, rep, err := rr.RerankReport(ctx, q, cands)
	require.ErrorIs(t, err, context.Canceled)
	assert.Nil(t, got)
	require.NotNil(t, rep)
	assert.Empty(t, rep.Fallback)
	assert.Less(t, time.Since(start), 5*time.Second, "well under the 30 s default timeout")

	ctx, cancel = context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	_, err = hybrid(t, db, kb, rr).Retrieve(ctx, text2sql.RetrieveRequest{Question: q})
	require.ErrorIs(t, err, context.Canceled)

	// Already cancelled: no call at all.
	m := llmtest.New(tablesReply("departments"))
	_, _, err = newReranker(t, m, llmrerank.Options{Schema: db}).RerankReport(ctx, q, cands)
	require.ErrorIs(t, err, context.Canceled)
	assert.Zero(t, m.CallCount())
}

// Items about no schema table (rules, examples only): no call.
func TestNoCandidateTable(t *testing.T) {
	db, _ := demoDB(t)
	items := []text2sql.Item{{ID: "rule:r1", Kind: text2sql.ItemRule, Text: "a rule", Score: 0.03}, {ID: "table:gone", Kind: text2sql.ItemTable, Table: "gone", Score: 0.02}}
	m := llmtest.New(tablesReply("gone"))
	got, rep, err := newReranker(t, m, llmrerank.Options{Schema: db}).RerankReport(context.Background(), "anything", items)
	requireFallback(t, items, got, rep, err, "no candidate table")
	assert.Zero(t, m.CallCount())

	items = append(items, text2sql.Item{ID: "table:students", Kind: text2sql.ItemTable, Table: "students", Score: 0.01})
	got, rep, err = newReranker(t, m, llmrerank.Options{Schema: db}).RerankReport(context.Background(), " \n", items)
	requireFallback(t, items, got, rep, err, "empty question")
	assert.Zero(t, m.CallCount())
}

// The budget bounds the prompt: DDL best first while it fits, the other
// candidates by name.
func TestBudget(t *testing.T) {
	db, kb := demoDB(t)
	const q = "How many students take each class?"
	cands := candidates(t, db, kb, q)
	fused := firstTables(cands, 100)
	var ts []*schema.Table
	for _, n := range fused {
		ts = append(ts, db.Lookup(n))
	}
	whole := llmrerank.TablesPrompt(q, db, ts, cands, 1<<20)
	for _, n := range fused {
		require.Contains(t, whole, "CREATE TABLE "+n)
	}
	require.NotContains(t, whole, "More tables")

	base := llmrerank.TablesPrompt(q, db, ts, cands, 1)
	budget := stagekit.EstimateTokens(base) + stagekit.EstimateTokens(db.DDL(ts[:1])) + 20
	small := llmrerank.TablesPrompt(q, db, ts, cands, budget)
	assert.LessOrEqual(t, stagekit.EstimateTokens(small), budget)
	assert.Contains(t, small, "CREATE TABLE "+fused[0], "the best fused table's DDL fits first")
	assert.Contains(t, small, "## More tables")
	assert.Contains(t, small, "- "+fused[len(fused)-1], "a table whose DDL does not fit is listed by name")
	assert.Less(t, len(small), len(whole))
	for _, n := range fused {
		assert.Contains(t, base, n, "every candidate is named even past the budget")
	}

	// Through the reranker: Options.Budget is what reaches the model.
	m := llmtest.New(tablesReply(fused[0]))
	_, _, err := newReranker(t, m, llmrerank.Options{Schema: db, Budget: budget}).RerankReport(context.Background(), q, cands)
	require.NoError(t, err)
	assert.Equal(t, small, m.Calls()[0].Messages[0].Content)
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		text string
		want []string
	}{
		{`{"reasoning": "x", "tables": ["a", "b"]}`, []string{"a", "b"}},
		{"Here you go:\n```json\n{\"table_names\": [\"a\"]}\n```", []string{"a"}},
		{`{"result": {"selected_tables": "a\n- b"}}`, []string{"a", "b"}},
		{`{"tables": []}`, nil},
	} {
		got, err := llmrerank.ParseTables(tc.text)
		require.NoError(t, err, tc.text)
		assert.Equal(t, tc.want, got, tc.text)
	}
	_, err := llmrerank.ParseTables(`{"sql": "SELECT 1"}`)
	var oe *text2sql.OutputError
	require.ErrorAs(t, err, &oe)
	require.ErrorIs(t, err, text2sql.ErrInvalidOutput)
	assert.Equal(t, `{"sql": "SELECT 1"}`, oe.Raw)

	cols, err := llmrerank.ParseColumns(`{"columns": {"t2": ["y"], "t1": ["x", "z"]}}`)
	require.NoError(t, err)
	assert.Equal(t, []string{"t1.x", "t1.z", "t2.y"}, cols, "CHESS's table → columns object")
	cols, err = llmrerank.ParseColumns(`{"columns": ["t.x"]}`)
	require.NoError(t, err)
	assert.Equal(t, []string{"t.x"}, cols)
	_, err = llmrerank.ParseColumns("no")
	require.ErrorIs(t, err, text2sql.ErrInvalidOutput)
}

func FuzzParse(f *testing.F) {
	f.Add(`{"tables": ["a"]}`)
	f.Add(`{"columns": {"t": ["x"]}}`)
	f.Add("```json\n{\"tables\": \"a\"}\n```")
	f.Fuzz(func(t *testing.T, s string) {
		_, _ = llmrerank.ParseTables(s)
		_, _ = llmrerank.ParseColumns(s)
	})
}

// One Reranker serves concurrent retrievals, each with its own report.
func TestConcurrent(t *testing.T) {
	db, kb := demoDB(t)
	m := llmtest.Func(func(req text2sql.ModelRequest) (string, error) {
		if strings.Contains(req.Messages[0].Content, "Who teaches Calculus I?") {
			return tablesReply("instructors"), nil
		}
		return "", errors.New("boom")
	})
	h := hybrid(t, db, kb, newReranker(t, m, llmrerank.Options{Schema: db}))
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			q, want := "Who teaches Calculus I?", ""
			if i%2 == 1 {
				q, want = "How many students are there?", "model error: model call: boom"
			}
			c, err := h.Retrieve(context.Background(), text2sql.RetrieveRequest{Question: q})
			if !assert.NoError(t, err) {
				return
			}
			assert.Equal(t, want, c.Rerank.Fallback, q)
			if want == "" {
				assert.Equal(t, []string{"instructors"}, c.Rerank.Tables)
				assert.Len(t, c.Rerank.Calls, 1)
			}
		})
	}
	wg.Wait()
}

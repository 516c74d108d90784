package generator

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/llm/llmtest"
)

func newGen(t *testing.T, m text2sql.Model, opts Options) *Generator {
	t.Helper()
	g, err := New(m, opts)
	require.NoError(t, err)
	return g
}

func simpleRequest() text2sql.GenerateRequest {
	return text2sql.GenerateRequest{Question: "How many rows are in t?", Retrieval: &text2sql.Retrieval{
		Tables: []text2sql.TableRef{{Name: "t", Reason: "retrieved"}},
		Schema: "CREATE TABLE t (\n  id INTEGER\n);\n",
	}}
}

// C2 #28: a fenced answer with a leading comment runs on the first call.
func TestGenerateFencedWithComment(t *testing.T) {
	m := llmtest.New("```sql\n-- count rows\nSELECT COUNT(*) FROM t\n```").RepeatLast()
	g := newGen(t, m, Options{})
	c, err := g.Generate(context.Background(), simpleRequest())
	require.NoError(t, err)
	assert.True(t, c.Answerable)
	assert.Equal(t, "-- count rows\nSELECT COUNT(*) FROM t", c.SQL)
	assert.Equal(t, 1, m.CallCount(), "model calls")
	assert.Len(t, c.Calls, 1, "calls recorded")
}

func TestGenerateRequestAndCalls(t *testing.T) {
	m := llmtest.New(`{"answerable": true, "sql": "SELECT COUNT(*) FROM t;", "explanation": "Counts the rows."}`)
	g := newGen(t, m, Options{})
	req := simpleRequest()
	c, err := g.Generate(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, "SELECT COUNT(*) FROM t", c.SQL)
	assert.Equal(t, "Counts the rows.", c.Explanation)
	assert.True(t, c.Answerable)
	system, user, err := g.Prompt(req)
	require.NoError(t, err)
	calls := m.Calls()
	require.Len(t, calls, 1)
	got := calls[0]
	assert.Equal(t, system, got.System, "the model got a different prompt than Prompt returns")
	assert.Equal(t, []text2sql.Message{{Role: text2sql.RoleUser, Content: user}}, got.Messages, "the model got a different prompt than Prompt returns")
	if assert.NotNil(t, got.Temperature) {
		assert.Zero(t, *got.Temperature)
	}
	var sch map[string]any
	require.NoError(t, json.Unmarshal(got.Schema, &sch), "schema")
	assert.Equal(t, "object", sch["type"])
	assert.Equal(t, false, sch["additionalProperties"])
	req2, _ := sch["required"].([]any)
	props, _ := sch["properties"].(map[string]any)
	assert.Len(t, req2, 3, "schema required")
	assert.Len(t, props, 3, "schema properties")
	for name, typ := range map[string]string{"answerable": "boolean", "sql": "string", "explanation": "string"} {
		p, _ := props[name].(map[string]any)
		assert.Equal(t, typ, p["type"], "schema property %s", name)
	}
	call := c.Calls[0]
	assert.Equal(t, llmtest.ModelName, call.Model)
	assert.NotZero(t, call.Usage.InputTokens)
	assert.NotZero(t, call.Usage.OutputTokens)
	assert.Positive(t, call.Duration)
	assert.Equal(t, Transcript(system, []text2sql.Message{{Role: text2sql.RoleUser, Content: user}}), call.Prompt)
}

func TestGenerateTemperature(t *testing.T) {
	m := llmtest.New(`{"answerable": true, "sql": "SELECT 1", "explanation": ""}`)
	g := newGen(t, m, Options{Temperature: 0.7})
	_, err := g.Generate(context.Background(), simpleRequest())
	require.NoError(t, err)
	tp := m.Calls()[0].Temperature
	require.NotNil(t, tp)
	assert.InDelta(t, 0.7, *tp, 0)
}

// C2 #17c: invalid JSON is re-asked at most MaxReasks times, then an
// OutputError with the raw text.
func TestGenerateMalformedReasks(t *testing.T) {
	const bad = `{"sql": "SELECT 1"`
	for _, tc := range []struct {
		reasks, calls int
	}{{0, 2}, {-1, 1}, {1, 2}, {3, 4}} {
		m := llmtest.New(bad).RepeatLast()
		g := newGen(t, m, Options{MaxReasks: tc.reasks})
		c, err := g.Generate(context.Background(), simpleRequest())
		var oe *text2sql.OutputError
		require.ErrorAs(t, err, &oe, "MaxReasks %d", tc.reasks)
		require.ErrorIs(t, err, text2sql.ErrInvalidOutput, "MaxReasks %d", tc.reasks)
		require.Equal(t, bad, oe.Raw, "MaxReasks %d: the raw text", tc.reasks)
		assert.Equal(t, tc.calls, m.CallCount(), "MaxReasks %d: model calls", tc.reasks)
		if assert.NotNil(t, c, "MaxReasks %d: a candidate carrying the calls", tc.reasks) {
			assert.False(t, c.Answerable)
			assert.Empty(t, c.SQL)
			assert.Len(t, c.Calls, tc.calls, "MaxReasks %d", tc.reasks)
		}
	}
}

func TestGenerateReaskRecovers(t *testing.T) {
	m := llmtest.New(`{"sql": "SELECT 1"`, `{"answerable": true, "sql": "SELECT COUNT(*) FROM t", "explanation": "ok"}`)
	g := newGen(t, m, Options{})
	c, err := g.Generate(context.Background(), simpleRequest())
	require.NoError(t, err)
	assert.Equal(t, "SELECT COUNT(*) FROM t", c.SQL)
	require.Len(t, c.Calls, 2)
	second := m.Calls()[1]
	require.Len(t, second.Messages, 3, "re-ask messages")
	assert.Equal(t, text2sql.Message{Role: text2sql.RoleAssistant, Content: `{"sql": "SELECT 1"`}, second.Messages[1])
	assert.Equal(t, text2sql.RoleUser, second.Messages[2].Role)
	assert.Contains(t, second.Messages[2].Content, "malformed")
	assert.Contains(t, c.Calls[1].Prompt, "[assistant]", "the second call's prompt shows the conversation")
}

// C2 #14: prose is re-asked too (the model may have meant to decline), and
// ends as ErrNoSQL with the raw text.
func TestGenerateProseNoSQL(t *testing.T) {
	const prose = `The "invoices" table holds customer orders: invoice date, customer id and total.`
	m := llmtest.New(prose).RepeatLast()
	g := newGen(t, m, Options{})
	_, err := g.Generate(context.Background(), simpleRequest())
	var oe *text2sql.OutputError
	require.ErrorAs(t, err, &oe)
	require.ErrorIs(t, err, text2sql.ErrNoSQL)
	require.Equal(t, prose, oe.Raw)
	require.Equal(t, 2, m.CallCount())
	note := m.Calls()[1].Messages[2].Content
	assert.Contains(t, note, "no SQL")
	assert.Contains(t, note, "answerable to false")
}

func TestGenerateDecline(t *testing.T) {
	m := llmtest.New(`{"answerable": false, "sql": "", "explanation": "This database has no weather data."}`)
	g := newGen(t, m, Options{})
	req := simpleRequest()
	req.Question = "What is the capital of France?"
	req.Retrieval.LowConfidence = true
	c, err := g.Generate(context.Background(), req)
	require.NoError(t, err)
	assert.False(t, c.Answerable)
	assert.Empty(t, c.SQL)
	assert.NotEmpty(t, c.Explanation)
	assert.Len(t, c.Calls, 1)
	assert.Contains(t, m.Calls()[0].Messages[0].Content, "may not be about this database", "the low-confidence note")
}

func TestGenerateModelError(t *testing.T) {
	want := &text2sql.ModelError{Provider: "gemini", StatusCode: 503, Message: "overloaded", Retryable: true}
	m := llmtest.Func(func(text2sql.ModelRequest) (string, error) { return "", want })
	g := newGen(t, m, Options{})
	c, err := g.Generate(context.Background(), simpleRequest())
	var me *text2sql.ModelError
	require.ErrorAs(t, err, &me, "the ModelError wrapped")
	require.Same(t, want, me)
	require.ErrorIs(t, err, text2sql.ErrModel)
	if assert.NotNil(t, c) {
		assert.Empty(t, c.Calls)
	}
	// A model that returns nothing is a model failure too.
	g = newGen(t, text2sql.ModelFunc(func(context.Context, text2sql.ModelRequest) (*text2sql.ModelResponse, error) { return nil, nil }), Options{})
	_, err = g.Generate(context.Background(), simpleRequest())
	assert.ErrorIs(t, err, text2sql.ErrModel, "nil response")
}

func TestGenerateCancelled(t *testing.T) {
	m := llmtest.New("SELECT 1")
	g := newGen(t, m, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := g.Generate(ctx, simpleRequest())
	assert.ErrorIs(t, err, context.Canceled)
	assert.Zero(t, m.CallCount(), "calls after cancellation")
}

// C3 #23 through Generate: within budget the model gets the prompt; over
// it, no model call at all.
func TestGenerateBudget(t *testing.T) {
	ctx := bigContext(3)
	m := llmtest.New(`{"answerable": true, "sql": "SELECT SUM(amount) FROM orders", "explanation": ""}`)
	g := newGen(t, m, Options{PromptBudget: 6000})
	_, err := g.Generate(context.Background(), text2sql.GenerateRequest{Question: ctx.Question, Retrieval: ctx})
	require.NoError(t, err)
	call := m.Calls()[0]
	assert.LessOrEqual(t, EstimateTokens(call.System)+EstimateTokens(call.Messages[0].Content), 6000, "tokens the model got")
	assert.Contains(t, call.Messages[0].Content, "CREATE TABLE orders (", "the top table")

	big := bigContext(3000)
	m2 := llmtest.New("SELECT 1")
	g2 := newGen(t, m2, Options{PromptBudget: 6000})
	c, err := g2.Generate(context.Background(), text2sql.GenerateRequest{Question: big.Question, Retrieval: big})
	require.ErrorIs(t, err, text2sql.ErrSchemaTooLarge)
	require.Nil(t, c)
	assert.Zero(t, m2.CallCount(), "model calls")
}

func TestNewOptions(t *testing.T) {
	for _, o := range []Options{{Dialect: "oracle"}, {Temperature: -0.1}, {Temperature: 2.5}, {PromptBudget: -1}} {
		_, err := New(nil, o)
		assert.ErrorIs(t, err, text2sql.ErrInvalidConfig, "New(%+v)", o)
	}
	g, err := New(nil, Options{})
	require.NoError(t, err)
	assert.Equal(t, 1, g.opts.MaxReasks, "default MaxReasks")
	system, _, err := g.Prompt(text2sql.GenerateRequest{Question: "How many rows?"})
	require.NoError(t, err)
	assert.Contains(t, system, "about a SQLite database", "default dialect")
	retrieved := text2sql.GenerateRequest{Question: "How many rows?", Retrieval: &text2sql.Retrieval{Dialect: text2sql.DialectMySQL}}
	system, _, err = g.Prompt(retrieved)
	require.NoError(t, err)
	assert.Contains(t, system, "about a MySQL database", "the retrieval's dialect")
	retrieved.Retrieval.Dialect = "oracle"
	system, _, err = g.Prompt(retrieved)
	require.NoError(t, err)
	assert.Contains(t, system, "about a SQLite database", "an unknown dialect of the retrieval is passed over")
	_, err = g.Generate(context.Background(), simpleRequest())
	assert.ErrorIs(t, err, text2sql.ErrInvalidConfig, "Generate without a model")
	_, err = g.Generate(context.Background(), text2sql.GenerateRequest{})
	assert.ErrorIs(t, err, text2sql.ErrEmptyQuestion, "empty question")
}

// The generator is usable as the pipeline's stage from several goroutines.
func TestGenerateConcurrent(t *testing.T) {
	m := llmtest.New(`{"answerable": true, "sql": "SELECT 1", "explanation": ""}`).RepeatLast()
	g := newGen(t, m, Options{})
	done := make(chan error)
	for range 8 {
		go func() {
			_, err := g.Generate(context.Background(), sampleRequest())
			done <- err
		}()
	}
	for range 8 {
		assert.NoError(t, <-done)
	}
}

// What follows the SQL of an answer is cut by the target engine's lexical
// rules: for MySQL "#" starts a comment, "--" does only before white
// space, and an executable comment is SQL the guard must see.
func TestTrailingByDialect(t *testing.T) {
	for _, c := range []struct {
		dialect  text2sql.Dialect
		sql, out string
	}{
		{text2sql.DialectMySQL, `SELECT 1 --1`, `SELECT 1 --1`},
		{text2sql.DialectSQLite, `SELECT 1 --1`, `SELECT 1`},
		{text2sql.DialectMySQL, `SELECT 1 # the answer;`, `SELECT 1`},
		{text2sql.DialectMySQL, `SELECT Name FROM singer /*! INTO OUTFILE '/tmp/x' */;`, `SELECT Name FROM singer /*! INTO OUTFILE '/tmp/x' */`},
		{text2sql.DialectPostgres, `SELECT Name FROM singer /*! INTO OUTFILE '/tmp/x' */;`, `SELECT Name FROM singer`},
		{text2sql.DialectMySQL, `SELECT 'it\'s' -- done`, `SELECT 'it\'s'`},
	} {
		m := llmtest.New(`{"answerable": true, "sql": ` + jsonString(c.sql) + `, "explanation": ""}`)
		g := newGen(t, m, Options{Dialect: c.dialect})
		cand, err := g.Generate(context.Background(), simpleRequest())
		require.NoError(t, err, c.sql)
		assert.Equal(t, c.out, cand.SQL, "%s: %s", c.dialect, c.sql)
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// The trace's model call carries the requests the provider sent.
func TestGenerateCallAttempts(t *testing.T) {
	m := text2sql.ModelFunc(func(context.Context, text2sql.ModelRequest) (*text2sql.ModelResponse, error) {
		return &text2sql.ModelResponse{Text: `{"answerable": true, "sql": "SELECT 1", "explanation": "one"}`, Model: "m", Attempts: 3}, nil
	})
	c, err := newGen(t, m, Options{}).Generate(context.Background(), simpleRequest())
	require.NoError(t, err)
	require.Len(t, c.Calls, 1)
	assert.Equal(t, 3, c.Calls[0].Attempts)
}

// Prompt variants sample at the variant temperature, the usual prompt at
// Options.Temperature.
func TestGenerateVariantTemperature(t *testing.T) {
	for _, c := range []struct {
		opts    Options
		variant int
		want    float64
	}{
		{Options{}, 0, 0},
		{Options{}, 1, DefaultVariantTemperature},
		{Options{Temperature: 0.2, VariantTemperature: 1.1}, 2, 1.1},
		{Options{Temperature: 0.2, VariantTemperature: 1.1}, 0, 0.2},
	} {
		m := llmtest.New(`{"answerable": true, "sql": "SELECT 1", "explanation": ""}`)
		req := simpleRequest()
		req.Variant = c.variant
		_, err := newGen(t, m, c.opts).Generate(context.Background(), req)
		require.NoError(t, err)
		assert.InDelta(t, c.want, *m.Calls()[0].Temperature, 0, "%+v variant %d", c.opts, c.variant)
	}
	_, err := New(nil, Options{VariantTemperature: 2.5})
	assert.ErrorIs(t, err, text2sql.ErrInvalidConfig)
}

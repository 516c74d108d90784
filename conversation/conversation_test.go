package conversation_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/conversation"
	"github.com/text2sql-go/text2sql/executor/sqlite"
	"github.com/text2sql-go/text2sql/generator"
	"github.com/text2sql-go/text2sql/internal/demotest"
	"github.com/text2sql-go/text2sql/llm/llmtest"
)

// recorder is the demo pipeline, remembering the questions it was asked.
type recorder struct {
	p         *text2sql.Pipeline
	ex        *sqlite.Executor
	path      string // the demo database's file
	mu        sync.Mutex
	questions []string
}

func (r *recorder) Ask(ctx context.Context, q string) (*text2sql.Answer, error) {
	r.mu.Lock()
	r.questions = append(r.questions, q)
	r.mu.Unlock()
	return r.p.Ask(ctx, q)
}

func answerJSON(sql string) string {
	b, _ := json.Marshal(map[string]any{"answerable": true, "sql": sql, "explanation": "counts students by entry year"})
	return string(b)
}

// script counts the calls of the scripted model by part, and the length
// of each part's longest message ("longest " + part).
type script struct {
	mu    sync.Mutex
	calls map[string]int
}

// count returns the calls of part so far (or, for "longest " + part, the
// length of its longest message).
func (s *script) count(part string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[part]
}

// model plays every model-driven part: the generator (students entered in
// a year), the router, the rewriter, the explainer and the summariser.
func (s *script) model() text2sql.Model {
	return llmtest.Func(func(req text2sql.ModelRequest) (string, error) {
		user := req.Messages[len(req.Messages)-1].Content
		part := demotest.StageOf(req.System, "generate",
			demotest.Prefix{Start: "You route", Stage: "route"},
			demotest.Prefix{Start: "You rewrite", Stage: "rewrite"},
			demotest.Prefix{Start: "You explain", Stage: "explain"},
			demotest.Prefix{Start: "You keep the running summary", Stage: "summary"})
		s.mu.Lock()
		if s.calls == nil {
			s.calls = map[string]int{}
		}
		s.calls[part]++
		if n := len(user); n > s.calls["longest "+part] {
			s.calls["longest "+part] = n
		}
		s.mu.Unlock()
		switch part {
		case "route":
			if strings.Contains(user, "New message: Tell me a joke") {
				return `{"route": "out_of_scope"}`, nil
			}
			return `{"route": "data"}`, nil
		case "rewrite":
			return `{"question": "How many students entered in 2022?"}`, nil
		case "explain":
			return `{"answer": "It is the number of students whose entry year is 2023."}`, nil
		case "summary":
			return `{"answer": "The user counted students by entry year (2023, then 2022)."}`, nil
		}
		year := "2023"
		if strings.Contains(user, "2022") {
			year = "2022"
		}
		return answerJSON("SELECT COUNT(*) FROM students WHERE entry_year = " + year), nil
	})
}

func pipeline(t *testing.T, m text2sql.Model) *recorder {
	t.Helper()
	path, ex := demotest.Open(t)
	ret := demotest.Retriever(t, ex.Schema())
	gen, err := generator.New(m, generator.Options{Dialect: text2sql.DialectSQLite})
	require.NoError(t, err)
	p, err := text2sql.New(text2sql.Config{Retriever: ret, Generator: gen, Executor: ex, DisableExampleReuse: true})
	require.NoError(t, err)
	return &recorder{p: p, ex: ex, path: path}
}

// A conversation on the demo: small talk skips the pipeline, a follow-up
// is rewritten by the model into a standalone question, a question about
// the last answer is answered from its SQL without new SQL, and messages
// the model calls out of scope never reach the pipeline.
func TestConversationWithModel(t *testing.T) {
	sc := &script{}
	m := sc.model()
	rec := pipeline(t, m)
	c, err := conversation.New(rec, conversation.Options{Model: m, Classify: true})
	require.NoError(t, err)
	ctx := context.Background()

	r, err := c.Ask(ctx, "Hello!")
	require.NoError(t, err)
	assert.Equal(t, conversation.RouteSmallTalk, r.Route)
	assert.Empty(t, rec.questions, "small talk never reaches the pipeline")
	assert.Equal(t, "no pipeline, no model call", r.Steps[0].Saved)

	r, err = c.Ask(ctx, "How many students entered in 2023?")
	require.NoError(t, err)
	require.Equal(t, conversation.RouteData, r.Route)
	require.NotNil(t, r.Answer)
	n2023 := r.Answer.Result.Rows[0][0].(int64)
	assert.Contains(t, r.Text, "students")
	assert.Contains(t, r.Words, itoa(n2023))

	r, err = c.Ask(ctx, "and in 2022?")
	require.NoError(t, err)
	assert.Equal(t, conversation.RouteData, r.Route)
	assert.Equal(t, "How many students entered in 2022?", r.Standalone)
	assert.Equal(t, "How many students entered in 2022?", rec.questions[len(rec.questions)-1], "the pipeline got the rewrite")
	assert.Contains(t, r.SQL, "2022")
	assert.Equal(t, "rewrite", r.Steps[1].Name)

	asked := len(rec.questions)
	r, err = c.Ask(ctx, "What does this number mean?")
	require.NoError(t, err)
	assert.Equal(t, conversation.RouteAboutLast, r.Route)
	assert.Equal(t, "no SQL", r.Steps[0].Saved)
	assert.Equal(t, asked, len(rec.questions), "answered without the pipeline")
	assert.Contains(t, r.Text, "entry year")

	r, err = c.Ask(ctx, "Tell me a joke")
	require.NoError(t, err)
	assert.Equal(t, conversation.RouteOutOfScope, r.Route)
	assert.Equal(t, "out_of_scope (model)", r.Steps[0].Outcome)
	assert.Equal(t, asked, len(rec.questions))
}

// Without a model: the rules route, a follow-up is joined to the previous
// question, and the window's overflow becomes a summary of the earlier
// questions.
func TestConversationRules(t *testing.T) {
	sc := &script{}
	rec := pipeline(t, sc.model())
	c, err := conversation.New(rec, conversation.Options{WindowTokens: 60})
	require.NoError(t, err)
	ctx := context.Background()
	_, err = c.Ask(ctx, "How many students entered in 2023?")
	require.NoError(t, err)
	r, err := c.Ask(ctx, "and in 2022?")
	require.NoError(t, err)
	assert.Equal(t, "How many students entered in 2023 — and in 2022?", r.Standalone)
	assert.Contains(t, r.SQL, "2022", "the joined question still carries the year")
	r, err = c.Ask(ctx, "what does that mean?")
	require.NoError(t, err)
	assert.Equal(t, conversation.RouteAboutLast, r.Route)
	assert.Contains(t, r.Text, "2022")
	for range 3 {
		_, err = c.Ask(ctx, "How many students entered in 2023?")
		require.NoError(t, err)
	}
	s, err := c.Summary(ctx)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(s, "Earlier questions: How many students entered in 2023?"), s)
	assert.Less(t, len(c.Turns()), 6, "the window is bounded")
	assert.Zero(t, sc.count("route")+sc.count("rewrite")+sc.count("explain")+sc.count("summary"), "no model: rules only")
}

// With a model the overflow is summarised by it, in the background: one
// summary call per overflow, and the prompts stay bounded however long
// the conversation runs.
func TestConversationSummary(t *testing.T) {
	sc := &script{}
	m := sc.model()
	const window = 60
	c, err := conversation.New(pipeline(t, m), conversation.Options{Model: m, Classify: true, WindowTokens: window})
	require.NoError(t, err)
	ctx := context.Background()
	for i, q := range []string{"How many students entered in 2023?", "How many students entered in 2022?", "How many students entered in 2023?",
		"How many students entered in 2022?", "How many students entered in 2023?", "How many students entered in 2022?"} {
		_, err := c.Ask(ctx, q)
		require.NoError(t, err)
		s, err := c.Summary(ctx) // waits for the background summary
		require.NoError(t, err)
		assert.Equal(t, i, sc.count("summary"), "one summary call per turn out of the window, after %d turns", i+1)
		if i > 0 {
			assert.Equal(t, "The user counted students by entry year (2023, then 2022).", s)
		}
	}
	// The router's prompt holds the summary and the window, not the
	// whole conversation: bounded by the window, the summary and the
	// message, in tokens (4 characters each).
	assert.Positive(t, sc.count("route"))
	assert.LessOrEqual(t, sc.count("longest route"), 4*(window+conversation.DefaultSummaryTokens)+200, "route prompt length")
	assert.Equal(t, 5, c.SummaryCalls())
}

// Without Classify the model is not asked to route: a data question costs
// only the pipeline's call.
func TestConversationNoClassifier(t *testing.T) {
	sc := &script{}
	m := sc.model()
	c, err := conversation.New(pipeline(t, m), conversation.Options{Model: m})
	require.NoError(t, err)
	for _, q := range []string{"How many students entered in 2023?", "How many students entered in 2022?", "Tell me a joke"} {
		r, err := c.Ask(context.Background(), q)
		require.NoError(t, err)
		assert.Equal(t, conversation.RouteData, r.Route)
	}
	assert.Zero(t, sc.count("route"))
	assert.Equal(t, 3, sc.count("generate"), "one generation per data question, nothing else")
}

// Bad input and concurrent use: an empty message, a cancelled context, a
// nil asker; concurrent messages are answered one at a time.
func TestConversationErrorsAndConcurrency(t *testing.T) {
	_, err := conversation.New(nil, conversation.Options{})
	assert.ErrorIs(t, err, text2sql.ErrInvalidConfig)
	sc := &script{}
	m := sc.model()
	c, err := conversation.New(pipeline(t, m), conversation.Options{Model: m})
	require.NoError(t, err)
	_, err = c.Ask(context.Background(), "  ")
	assert.ErrorIs(t, err, text2sql.ErrEmptyQuestion)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = c.Ask(ctx, "How many students entered in 2023?")
	assert.ErrorIs(t, err, context.Canceled)

	// Follow-ups joined without a model stay within a question's length.
	plain, err := conversation.New(pipeline(t, m), conversation.Options{})
	require.NoError(t, err)
	_, err = plain.Ask(context.Background(), "How many students entered in 2023?")
	require.NoError(t, err)
	long := "and " + strings.Repeat("also in 2022 ", 250)
	for range 3 {
		r, err := plain.Ask(context.Background(), long)
		require.NoError(t, err)
		assert.LessOrEqual(t, len([]rune(r.Standalone)), conversation.MaxStandaloneRunes)
	}

	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			_, err := c.Ask(context.Background(), "How many students entered in 2023?")
			assert.NoError(t, err)
		})
	}
	wg.Wait()
	assert.Len(t, c.Turns(), 4)
}

func itoa(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}

package generator

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/llm/llmtest"
)

func newGen(t *testing.T, m text2sql.Model, opts Options) *Generator {
	t.Helper()
	g, err := New(m, opts)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func simpleRequest() text2sql.GenerateRequest {
	return text2sql.GenerateRequest{Question: "How many rows are in t?", Context: &text2sql.Context{
		Tables: []text2sql.TableRef{{Name: "t", Reason: "retrieved"}},
		Schema: "CREATE TABLE t (\n  id INTEGER\n);\n",
	}}
}

// C2 #28: a fenced answer with a leading comment runs on the first call.
func TestGenerateFencedWithComment(t *testing.T) {
	m := llmtest.New("```sql\n-- count rows\nSELECT COUNT(*) FROM t\n```").RepeatLast()
	g := newGen(t, m, Options{})
	c, err := g.Generate(context.Background(), simpleRequest())
	if err != nil {
		t.Fatal(err)
	}
	if !c.Answerable || c.SQL != "-- count rows\nSELECT COUNT(*) FROM t" {
		t.Errorf("candidate = %+v", c)
	}
	if n := m.CallCount(); n != 1 || len(c.Calls) != 1 {
		t.Errorf("%d model calls, %d recorded; want exactly 1", n, len(c.Calls))
	}
}

func TestGenerateRequestAndCalls(t *testing.T) {
	m := llmtest.New(`{"answerable": true, "sql": "SELECT COUNT(*) FROM t;", "explanation": "Counts the rows."}`)
	g := newGen(t, m, Options{})
	req := simpleRequest()
	c, err := g.Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if c.SQL != "SELECT COUNT(*) FROM t" || c.Explanation != "Counts the rows." || !c.Answerable {
		t.Errorf("candidate = %+v", c)
	}
	system, user, err := g.Prompt(req)
	if err != nil {
		t.Fatal(err)
	}
	calls := m.Calls()
	if len(calls) != 1 {
		t.Fatalf("%d calls", len(calls))
	}
	got := calls[0]
	if got.System != system || len(got.Messages) != 1 || got.Messages[0].Role != text2sql.RoleUser || got.Messages[0].Content != user {
		t.Errorf("the model got a different prompt than Prompt returns")
	}
	if got.Temperature == nil || *got.Temperature != 0 {
		t.Errorf("temperature = %v, want 0", got.Temperature)
	}
	var sch map[string]any
	if err := json.Unmarshal(got.Schema, &sch); err != nil {
		t.Fatalf("schema: %v", err)
	}
	if sch["type"] != "object" || sch["additionalProperties"] != false {
		t.Errorf("schema = %v", sch)
	}
	req2, _ := sch["required"].([]any)
	props, _ := sch["properties"].(map[string]any)
	if len(req2) != 3 || len(props) != 3 {
		t.Errorf("schema required %v, properties %v", req2, props)
	}
	for name, typ := range map[string]string{"answerable": "boolean", "sql": "string", "explanation": "string"} {
		p, _ := props[name].(map[string]any)
		if p["type"] != typ {
			t.Errorf("schema property %s = %v, want type %s", name, p, typ)
		}
	}
	call := c.Calls[0]
	if call.Model != llmtest.ModelName || call.Usage.InputTokens == 0 || call.Usage.OutputTokens == 0 || call.Duration <= 0 {
		t.Errorf("call = %+v", call)
	}
	if call.Prompt != Transcript(system, []text2sql.Message{{Role: text2sql.RoleUser, Content: user}}) {
		t.Errorf("call prompt = %q", call.Prompt)
	}
}

func TestGenerateTemperature(t *testing.T) {
	m := llmtest.New(`{"answerable": true, "sql": "SELECT 1", "explanation": ""}`)
	g := newGen(t, m, Options{Temperature: 0.7})
	if _, err := g.Generate(context.Background(), simpleRequest()); err != nil {
		t.Fatal(err)
	}
	if tp := m.Calls()[0].Temperature; tp == nil || *tp != 0.7 {
		t.Errorf("temperature = %v", tp)
	}
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
		if !errors.As(err, &oe) || !errors.Is(err, text2sql.ErrInvalidOutput) || oe.Raw != bad {
			t.Fatalf("MaxReasks %d: err = %v, want an OutputError wrapping ErrInvalidOutput with the raw text", tc.reasks, err)
		}
		if m.CallCount() != tc.calls {
			t.Errorf("MaxReasks %d: %d model calls, want %d", tc.reasks, m.CallCount(), tc.calls)
		}
		if c == nil || c.Answerable || c.SQL != "" || len(c.Calls) != tc.calls {
			t.Errorf("MaxReasks %d: candidate = %+v, want one carrying %d calls", tc.reasks, c, tc.calls)
		}
	}
}

func TestGenerateReaskRecovers(t *testing.T) {
	m := llmtest.New(`{"sql": "SELECT 1"`, `{"answerable": true, "sql": "SELECT COUNT(*) FROM t", "explanation": "ok"}`)
	g := newGen(t, m, Options{})
	c, err := g.Generate(context.Background(), simpleRequest())
	if err != nil {
		t.Fatal(err)
	}
	if c.SQL != "SELECT COUNT(*) FROM t" || len(c.Calls) != 2 {
		t.Errorf("candidate = %+v", c)
	}
	second := m.Calls()[1]
	if len(second.Messages) != 3 || second.Messages[1].Role != text2sql.RoleAssistant || second.Messages[1].Content != `{"sql": "SELECT 1"` ||
		second.Messages[2].Role != text2sql.RoleUser || !strings.Contains(second.Messages[2].Content, "malformed") {
		t.Errorf("re-ask messages = %+v", second.Messages)
	}
	if !strings.Contains(c.Calls[1].Prompt, "[assistant]") {
		t.Errorf("the second call's prompt does not show the conversation: %q", c.Calls[1].Prompt)
	}
}

// C2 #14: prose is re-asked too (the model may have meant to decline), and
// ends as ErrNoSQL with the raw text.
func TestGenerateProseNoSQL(t *testing.T) {
	const prose = `The "invoices" table holds customer orders: invoice date, customer id and total.`
	m := llmtest.New(prose).RepeatLast()
	g := newGen(t, m, Options{})
	_, err := g.Generate(context.Background(), simpleRequest())
	var oe *text2sql.OutputError
	if !errors.As(err, &oe) || !errors.Is(err, text2sql.ErrNoSQL) || oe.Raw != prose {
		t.Fatalf("err = %v", err)
	}
	if m.CallCount() != 2 {
		t.Errorf("%d calls, want 2", m.CallCount())
	}
	if note := m.Calls()[1].Messages[2].Content; !strings.Contains(note, "no SQL") || !strings.Contains(note, "answerable to false") {
		t.Errorf("re-ask note = %q", note)
	}
}

func TestGenerateDecline(t *testing.T) {
	m := llmtest.New(`{"answerable": false, "sql": "", "explanation": "This database has no weather data."}`)
	g := newGen(t, m, Options{})
	req := simpleRequest()
	req.Question = "What is the capital of France?"
	req.Context.LowConfidence = true
	c, err := g.Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if c.Answerable || c.SQL != "" || c.Explanation == "" || len(c.Calls) != 1 {
		t.Errorf("candidate = %+v", c)
	}
	if !strings.Contains(m.Calls()[0].Messages[0].Content, "may not be about this database") {
		t.Error("the low-confidence note is missing")
	}
}

func TestGenerateModelError(t *testing.T) {
	want := &text2sql.ModelError{Provider: "gemini", StatusCode: 503, Message: "overloaded", Retryable: true}
	m := llmtest.Func(func(text2sql.ModelRequest) (string, error) { return "", want })
	g := newGen(t, m, Options{})
	c, err := g.Generate(context.Background(), simpleRequest())
	var me *text2sql.ModelError
	if !errors.As(err, &me) || me != want || !errors.Is(err, text2sql.ErrModel) {
		t.Fatalf("err = %v, want the ModelError wrapped", err)
	}
	if c == nil || len(c.Calls) != 0 {
		t.Errorf("candidate = %+v", c)
	}
	// A model that returns nothing is a model failure too.
	g = newGen(t, text2sql.ModelFunc(func(context.Context, text2sql.ModelRequest) (*text2sql.ModelResponse, error) { return nil, nil }), Options{})
	if _, err := g.Generate(context.Background(), simpleRequest()); !errors.Is(err, text2sql.ErrModel) {
		t.Errorf("nil response: err = %v", err)
	}
}

func TestGenerateCancelled(t *testing.T) {
	m := llmtest.New("SELECT 1")
	g := newGen(t, m, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := g.Generate(ctx, simpleRequest()); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v", err)
	}
	if m.CallCount() != 0 {
		t.Errorf("%d calls after cancellation", m.CallCount())
	}
}

// C3 #23 through Generate: within budget the model gets the prompt; over
// it, no model call at all.
func TestGenerateBudget(t *testing.T) {
	ctx := bigContext(3)
	m := llmtest.New(`{"answerable": true, "sql": "SELECT SUM(amount) FROM orders", "explanation": ""}`)
	g := newGen(t, m, Options{PromptBudget: 6000})
	if _, err := g.Generate(context.Background(), text2sql.GenerateRequest{Question: ctx.Question, Context: ctx}); err != nil {
		t.Fatal(err)
	}
	call := m.Calls()[0]
	if n := EstimateTokens(call.System) + EstimateTokens(call.Messages[0].Content); n > 6000 {
		t.Errorf("the model got about %d tokens", n)
	}
	if !strings.Contains(call.Messages[0].Content, "CREATE TABLE orders (") {
		t.Error("the top table is missing")
	}

	big := bigContext(3000)
	m2 := llmtest.New("SELECT 1")
	g2 := newGen(t, m2, Options{PromptBudget: 6000})
	c, err := g2.Generate(context.Background(), text2sql.GenerateRequest{Question: big.Question, Context: big})
	if !errors.Is(err, text2sql.ErrSchemaTooLarge) || c != nil {
		t.Fatalf("Generate = %+v, %v; want ErrSchemaTooLarge", c, err)
	}
	if m2.CallCount() != 0 {
		t.Errorf("%d model calls, want none", m2.CallCount())
	}
}

func TestNewOptions(t *testing.T) {
	for _, o := range []Options{{Dialect: "oracle"}, {Temperature: -0.1}, {Temperature: 2.5}, {PromptBudget: -1}} {
		if _, err := New(nil, o); !errors.Is(err, text2sql.ErrInvalidConfig) {
			t.Errorf("New(%+v): err = %v, want ErrInvalidConfig", o, err)
		}
	}
	g, err := New(nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if g.opts.MaxReasks != 1 || g.dialect(text2sql.GenerateRequest{}) != text2sql.DialectSQLite {
		t.Errorf("defaults = %+v", g.opts)
	}
	if _, err := g.Generate(context.Background(), simpleRequest()); !errors.Is(err, text2sql.ErrInvalidConfig) {
		t.Errorf("Generate without a model: err = %v", err)
	}
	if _, err := g.Generate(context.Background(), text2sql.GenerateRequest{}); !errors.Is(err, text2sql.ErrEmptyQuestion) {
		t.Errorf("empty question: err = %v", err)
	}
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
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/text2sql-go/text2sql/demo"
	"github.com/text2sql-go/text2sql/internal/shareddata"
)

// cli runs the command line in-process and returns stdout, stderr and the
// exit code main would use; the index goes to a fresh directory unless
// args name one.
func cli(t testing.TB, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	root := newRoot()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	if !slices.Contains(args, "--index-dir") {
		args = append(args, "--index-dir", t.TempDir())
	}
	root.SetArgs(args)
	err := root.Execute()
	if err != nil {
		code = exitError
		var ee *exitErr
		if errors.As(err, &ee) {
			code = ee.code
		}
		errOut.WriteString(err.Error())
	}
	return out.String(), errOut.String(), code
}

func TestContextRanksSinger(t *testing.T) {
	db := shareddata.SpiderDB(t, "concert_singer")
	out, _, code := cli(t, "context", "--db", db, "--json", "How many singers do we have?")
	require.Equal(t, 0, code, "exit %d", code)
	var c struct {
		Tables []struct{ Name, Reason string }
		Items  []struct{ ID, Kind, Provenance string }
	}
	require.NoError(t, json.Unmarshal([]byte(out), &c), out)
	require.NotEqual(t, 0, len(c.Tables), "tables %+v", c.Tables)
	require.Equal(t, "singer", c.Tables[0].Name, "tables %+v", c.Tables)
	// No knowledge file: the tables' notes would only repeat their DDL, so
	// there are no items, and the JSON says so with an empty list.
	assert.Empty(t, c.Items)
	assert.Contains(t, out, `"items": []`)
}

func TestContextDemoLinksThroughExamples(t *testing.T) {
	out, _, code := cli(t, "context", "--demo", "--json", "How many students take each class?")
	require.Equal(t, 0, code, "exit %d", code)
	var c struct {
		Tables []struct{ Name, Reason string }
	}
	require.NoError(t, json.Unmarshal([]byte(out), &c))
	shown := map[string]string{}
	for _, tb := range c.Tables {
		shown[tb.Name] = tb.Reason
	}
	_, ok := shown["enrollments"]
	assert.True(t, ok, "enrollments not shown: %+v", c.Tables)
	_, ok = shown["courses"]
	assert.True(t, ok, "courses not shown: %+v", c.Tables)
	via := false
	for _, r := range shown {
		via = via || strings.HasPrefix(r, "via example ")
	}
	assert.True(t, via, "no table linked through an example: %+v", c.Tables)
}

// The text form names the example a table was linked through, as the
// JSON does.
func TestContextTextNamesTheExample(t *testing.T) {
	out, _, code := cli(t, "context", "--demo", "How many students take each class?")
	require.Equal(t, 0, code)
	assert.Regexp(t, `(?m)^ *\d+\. \S+ +via example \S+$`, out)
}

// Case C1 #11 (CLI entry point): a write is refused with the kind and exit 3.
func TestRunRefuses(t *testing.T) {
	out, _, code := cli(t, "run", "--demo", "--json", "DROP TABLE students")
	require.Equal(t, exitSQL, code, "exit %d, want %d", code, exitSQL)
	var r struct {
		Error struct{ Kind string }
	}
	require.NoError(t, json.Unmarshal([]byte(out), &r))
	require.Equal(t, "not_read_only", r.Error.Kind, "kind %q", r.Error.Kind)
	out, _, code = cli(t, "run", "--demo", "--json", "SELECT count(*) FROM students")
	require.Equal(t, 0, code, "exit %d: %s", code, out)
	require.Contains(t, out, `"row_count": 1`, "exit %d: %s", code, out)
}

// Without a provider, the first screen says what was retrieved, why there
// is no answer and how to get one; --verbose adds the prompt.
func TestAskWithoutProviderPrintsPrompt(t *testing.T) {
	t.Setenv("GEMINI_API_KEY", "")
	t.Setenv("OPENAI_API_KEY", "")
	out, errOut, code := cli(t, "ask", "--demo", "Which instructors were hired before 2010?")
	require.Equal(t, exitNoModel, code, "exit %d: %s", code, errOut)
	first := strings.Join(strings.SplitN(out, "\n", 16)[:15], "\n")
	for _, want := range []string{"No answer: no model provider is configured", "Retrieved ", "instructors", "GEMINI_API_KEY", "--base-url", "--verbose"} {
		assert.Contains(t, first, want, "the first 15 lines lack %q", want)
	}
	assert.Contains(t, out, "== tables shown")
	assert.NotContains(t, out, "== prompt", "the prompt is behind --verbose")
	out, _, code = cli(t, "ask", "--demo", "--verbose", "Which instructors were hired before 2010?")
	require.Equal(t, exitNoModel, code)
	for _, want := range []string{"== prompt", "CREATE TABLE instructors"} {
		assert.Contains(t, out, want, "output lacks %q", want)
	}
}

// The README's main command is answered offline: its question is a
// verified example of the demo.
func TestREADMEMainCommand(t *testing.T) {
	t.Setenv("GEMINI_API_KEY", "")
	t.Setenv("OPENAI_API_KEY", "")
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	m := regexp.MustCompile(`go run \./cmd/text2sql ask --demo "([^"]+)"`).FindSubmatch(readme)
	require.NotNil(t, m, "README has no main command")
	out, errOut, code := cli(t, "ask", "--demo", string(m[1]))
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "reused verified example")
	assert.Contains(t, out, "rows)")
}

// ask with an OpenAI-compatible server (here a local fake speaking the chat
// completions protocol) generates, runs and prints the rows.
func TestAskWithOpenAICompatibleServer(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-test-secret")
	t.Setenv("GEMINI_API_KEY", "")
	var calls int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		io.Copy(io.Discard, r.Body)
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		writeCompletion(w, modelAnswer("SELECT count(*) AS n FROM instructors WHERE hire_year < 2010", "counts"), 900)
	}))
	defer srv.Close()
	out, errOut, code := cli(t, "ask", "--demo", "--json", "--provider", "openai", "--base-url", srv.URL+"/v1", "--model", "local-model",
		"How many instructors were hired before 2010?")
	require.Equal(t, 0, code, "exit %d: %s", code, errOut)
	var a struct {
		Status     string
		SQL        string
		ModelCalls int `json:"model_calls"`
		Result     struct {
			Columns []string
			Rows    [][]any
		}
	}
	require.NoError(t, json.Unmarshal([]byte(out), &a), out)
	require.Equal(t, "answered", a.Status, "%+v, %d calls", a, calls)
	require.Equal(t, 1, calls, "%+v, %d calls", a, calls)
	require.Equal(t, 1, a.ModelCalls, "%+v, %d calls", a, calls)
	require.Len(t, a.Result.Rows, 1, "%+v, %d calls", a, calls)
	assert.NotContains(t, out+errOut, "sk-test-secret", "the API key leaked into the output")
}

func TestUsageErrors(t *testing.T) {
	_, _, code := cli(t, "context", "How many?")
	assert.Equal(t, exitUsage, code, "no --db/--demo: exit %d, want %d", code, exitUsage)
	_, _, code = cli(t, "context", "--demo")
	assert.Equal(t, exitUsage, code, "no question: exit %d, want %d", code, exitUsage)
	missing := filepath.Join(t.TempDir(), "missing.sqlite")
	_, _, code = cli(t, "run", "--db", missing, "SELECT 1")
	assert.NotEqual(t, 0, code, "a missing database file must fail")
	_, err := os.Stat(missing)
	assert.Error(t, err, "opening a missing database created it")
	bad := filepath.Join(t.TempDir(), "k.yaml")
	os.WriteFile(bad, []byte("examples:\n  - id: x\n    question: drop it\n    sql: DROP TABLE students\n"), 0o600)
	_, errOut, code := cli(t, "context", "--demo", "--knowledge", bad, "Anything?")
	assert.False(t, code == 0 || !strings.Contains(errOut, "x"), "a knowledge file with a write example must be refused: exit %d %s", code, errOut)

}

// writeCompletion answers a chat completions request with content, as
// OpenAI's API does, counting promptTokens of input.
func writeCompletion(w http.ResponseWriter, content string, promptTokens int) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "local-model",
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": content}}},
		"usage": map[string]any{"prompt_tokens": promptTokens, "completion_tokens": 20, "total_tokens": promptTokens + 20},
	})
}

// openAIServer is a local server speaking the chat completions protocol;
// answer picks the reply from the request's system instruction. The
// count of calls is for reading once the command has returned; requests
// may come concurrently (eval).
func openAIServer(t *testing.T, answer func(system string) string) (*httptest.Server, *int) {
	t.Helper()
	return openAIServerRequest(t, func(system, _ string, _ float64) string { return answer(system) })
}

// modelAnswer is the generator's JSON answer of an answerable question:
// sql and its explanation.
func modelAnswer(sql, explanation string) string {
	b, _ := json.Marshal(map[string]any{"answerable": true, "sql": sql, "explanation": explanation})
	return string(b)
}

// ask --plan --judge: the plan, the SQL and the judge's verdict each take
// one call, and --json shows the attempt with its verdict and the steps.
func TestAskPlanJudge(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("GEMINI_API_KEY", "")
	srv, calls := openAIServer(t, func(system string) string {
		switch {
		case strings.HasPrefix(system, "You plan queries"):
			return `{"database": "registrar", "objects": [{"kind": "table", "name": "instructors", "value": ""}], "instruction": ["Count instructors."], "output": "a number"}`
		case strings.HasPrefix(system, "You review one attempt"):
			return `{"ok": true, "stage": "", "reason": "counts the instructors", "hints": [], "terms": [], "tables": []}`
		}
		return `{"answerable": true, "sql": "SELECT count(*) AS n FROM instructors", "explanation": "counts"}`
	})
	out, errOut, code := cli(t, "ask", "--demo", "--json", "--plan", "on", "--judge", "on", "--provider", "openai", "--base-url", srv.URL+"/v1",
		"How many lecturers work here?")
	require.Equal(t, 0, code, "exit %d: %s", code, errOut)
	var a struct {
		Status   string
		Attempts []struct {
			Verdict *struct{ OK bool }
			Plan    *struct{ Instruction []string }
		}
		Steps []struct{ Stage string }
	}
	require.NoError(t, json.Unmarshal([]byte(out), &a), out)
	require.Equal(t, "verified", a.Status, "status %s, %d calls, %+v", a.Status, *calls, a.Attempts)
	require.Equal(t, 3, *calls, "status %s, %d calls, %+v", a.Status, *calls, a.Attempts)
	require.Len(t, a.Attempts, 1, "status %s, %d calls, %+v", a.Status, *calls, a.Attempts)
	require.NotNil(t, a.Attempts[0].Verdict, "status %s, %d calls, %+v", a.Status, *calls, a.Attempts)
	require.NotNil(t, a.Attempts[0].Plan, "status %s, %d calls, %+v", a.Status, *calls, a.Attempts)
	var stages []string
	for _, s := range a.Steps {
		stages = append(stages, s.Stage)
	}
	got := strings.Join(stages, ",")
	assert.Equal(t, "retrieval,plan,sql,check,execution,judge,words", got, "steps %s", got)
	_, _, code = cli(t, "ask", "--demo", "--judge=sometimes", "--provider", "openai", "--base-url", srv.URL+"/v1", "x?")
	assert.Equal(t, exitUsage, code, "--judge=sometimes: exit %d", code)
}

// ask --candidates 3: the usual prompt (temperature 0) counts courses,
// both variants (sampled warmer) count instructors; the vote picks theirs,
// and --json and the text output show every candidate and why.
func TestAskCandidates(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("GEMINI_API_KEY", "")
	var mu sync.Mutex
	temps := map[float64]int{}
	srv, _ := openAIServerRequest(t, func(_, _ string, temperature float64) string {
		mu.Lock()
		temps[temperature]++
		mu.Unlock()
		sql := "SELECT count(*) AS n FROM courses"
		if temperature > 0 {
			sql = "SELECT count(*) AS n FROM instructors"
		}
		return modelAnswer(sql, "counts")
	})
	args := []string{"ask", "--demo", "--candidates", "3", "--provider", "openai", "--base-url", srv.URL + "/v1", "How many instructors are there?"}
	out, errOut, code := cli(t, append(args[:1:1], append([]string{"--json"}, args[1:]...)...)...)
	require.Equal(t, 0, code, "exit %d: %s", code, errOut)
	var a struct {
		SQL        string
		ModelCalls int `json:"model_calls"`
		Selection  *struct {
			Method, Reason string
			Winner, Votes  int
			Candidates     []struct {
				Variant, Group int
				SQL            string
			}
		}
		Attempts []struct{ Selection *struct{ Method string } }
	}
	require.NoError(t, json.Unmarshal([]byte(out), &a), out)
	assert.Equal(t, "SELECT count(*) AS n FROM instructors", a.SQL)
	assert.Equal(t, 3, a.ModelCalls)
	assert.Equal(t, map[float64]int{0: 1, 0.7: 2}, temps)
	require.NotNil(t, a.Selection, out)
	assert.Equal(t, "vote", a.Selection.Method)
	assert.Equal(t, 2, a.Selection.Votes)
	require.Len(t, a.Selection.Candidates, 3)
	assert.Equal(t, 1, a.Selection.Candidates[0].Group)
	assert.Equal(t, 2, a.Selection.Candidates[a.Selection.Winner].Group)
	require.Len(t, a.Attempts, 1)
	require.NotNil(t, a.Attempts[0].Selection)

	out, errOut, code = cli(t, args...)
	require.Equal(t, 0, code, "exit %d: %s", code, errOut)
	assert.Contains(t, out, "== candidates (3), vote: 2 of 3 candidates agree")
	assert.Contains(t, out, " 1. group 1, 1 row: SELECT count(*) AS n FROM courses")
}

// ask --candidates 3 --pairwise: three different results, and the model
// compares them two at a time; the one it always prefers wins.
func TestAskCandidatesPairwise(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("GEMINI_API_KEY", "")
	var mu sync.Mutex
	next := []string{"instructors", "departments"}
	srv, calls := openAIServerRequest(t, func(system, user string, temperature float64) string {
		if strings.HasPrefix(system, "You compare two SQL queries") {
			if strings.Contains(user[strings.Index(user, "## Query A"):strings.Index(user, "## Query B")], "instructors") {
				return `{"winner": "A", "reason": "A counts instructors"}`
			}
			return `{"winner": "B", "reason": "B counts instructors"}`
		}
		table := "courses"
		if temperature > 0 {
			mu.Lock()
			table, next = next[0], next[1:]
			mu.Unlock()
		}
		return modelAnswer("SELECT count(*) AS n FROM "+table, "counts")
	})
	out, errOut, code := cli(t, "ask", "--demo", "--json", "--candidates", "3", "--pairwise", "--provider", "openai", "--base-url", srv.URL+"/v1",
		"How many instructors are there?")
	require.Equal(t, 0, code, "exit %d: %s", code, errOut)
	var a struct {
		SQL       string
		Selection struct{ Method, Reason string }
	}
	require.NoError(t, json.Unmarshal([]byte(out), &a), out)
	assert.Equal(t, "SELECT count(*) AS n FROM instructors", a.SQL)
	assert.Equal(t, "selector", a.Selection.Method, a.Selection.Reason)
	assert.Equal(t, 6, *calls, "three candidates, three comparisons")
}

// openAIServerRequest is openAIServer whose answer also sees the last
// user message and the temperature of the request.
func openAIServerRequest(t *testing.T, answer func(system, user string, temperature float64) string) (*httptest.Server, *int) {
	t.Helper()
	calls := new(int)
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		*calls++
		mu.Unlock()
		var req struct {
			Messages    []struct{ Role, Content string }
			Temperature float64
		}
		json.NewDecoder(r.Body).Decode(&req)
		system, user := "", ""
		for _, m := range req.Messages {
			switch m.Role {
			case "system":
				system = m.Content
			case "user":
				user = m.Content
			}
		}
		writeCompletion(w, answer(system, user, req.Temperature), 500)
	}))
	t.Cleanup(srv.Close)
	return srv, calls
}

func TestFlagErrors(t *testing.T) {
	for _, args := range [][]string{
		{"run", "--demo"},
		{"run", "--demo", "--max-rows", "-1", "SELECT 1"},
		{"run", "--demo", "--timeout", "-1s", "SELECT 1"},
		{"context", "--demo", "--plan=maybe", "Anything?"},
		{"ask", "--demo", "--candidates", "21", "Anything?"},
		{"ask", "--demo", "--candidates", "-1", "Anything?"},
	} {
		_, errOut, code := cli(t, args...)
		assert.Equal(t, exitUsage, code, "%q: exit %d (%s), want %d", args, code, errOut, exitUsage)
	}
}

// silentServer accepts connections and reads what is sent, but never
// answers: a provider that hangs. It returns its base URL.
func silentServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() })
			go io.Copy(io.Discard, c)
		}
	}()
	return "http://" + ln.Addr().String()
}

// ask --model-timeout 2s against a provider that never answers fails
// within 3 s with a message naming the provider and the limit, for each
// provider.
func TestAskModelTimeout(t *testing.T) {
	base := silentServer(t)
	for _, tc := range []struct{ provider, url string }{
		{"openai", base + "/v1"},
		{"gemini", base},
	} {
		t.Run(tc.provider, func(t *testing.T) {
			t.Setenv("OPENAI_API_KEY", "")
			t.Setenv("GEMINI_API_KEY", "test-key")
			start := time.Now()
			_, errOut, code := cli(t, "ask", "--demo", "--provider", tc.provider, "--base-url", tc.url, "--model-timeout", "2s",
				"Which instructor teaches the most courses?")
			el := time.Since(start)
			assert.Equal(t, exitError, code)
			assert.Contains(t, errOut, tc.provider+": no answer within 2s, the time limit of one model call")
			assert.GreaterOrEqual(t, el, 2*time.Second)
			assert.Less(t, el, 3*time.Second)
			t.Logf("%s: typed timeout error after %v", tc.provider, el.Round(time.Millisecond))
		})
	}
	_, _, code := cli(t, "ask", "--demo", "--model-timeout", "-1s", "Anything?")
	assert.Equal(t, exitUsage, code)
}

// eval goes on past a stuck question: it is a failure of kind timeout at
// --question-timeout, and the other questions are answered and scored.
func TestEvalQuestionTimeout(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("GEMINI_API_KEY", "")
	db, err := demo.Ensure("")
	require.NoError(t, err)
	gold := map[string]string{
		"How many students are there?":       "SELECT count(*) FROM students",
		"How many courses are there?":        "SELECT count(*) FROM courses",
		"STUCK: how many instructors exist?": "SELECT count(*) FROM instructors",
	}
	var qs strings.Builder
	fmt.Fprintf(&qs, "database: %s\nquestions:\n", db)
	for _, q := range []string{"How many students are there?", "STUCK: how many instructors exist?", "How many courses are there?"} {
		fmt.Fprintf(&qs, "  - question: %q\n    sql: %s\n", q, gold[q])
	}
	file := filepath.Join(t.TempDir(), "questions.yaml")
	require.NoError(t, os.WriteFile(file, []byte(qs.String()), 0o600))

	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct{ Role, Content string }
		}
		json.NewDecoder(r.Body).Decode(&req)
		user := req.Messages[len(req.Messages)-1].Content
		if strings.Contains(user, "STUCK") {
			select { // accepted, never answered
			case <-r.Context().Done():
			case <-done:
			}
			return
		}
		sql := ""
		for q, s := range gold {
			if strings.Contains(user, q) {
				sql = s
			}
		}
		writeCompletion(w, modelAnswer(sql, "gold"), 500)
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(done) })

	records := filepath.Join(t.TempDir(), "records.jsonl")
	start := time.Now()
	out, errOut, code := cli(t, "eval", "--dataset", file, "--provider", "openai", "--base-url", srv.URL+"/v1",
		"--question-timeout", "1s", "--model-timeout", "30s", "--records", records, "--json")
	require.Equal(t, 0, code, errOut)
	assert.Less(t, time.Since(start), 10*time.Second)
	var rep struct {
		Correct, Total int
		Failures       []struct{ Outcome, Kind string }
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
	assert.Equal(t, 3, rep.Total)
	assert.Equal(t, 2, rep.Correct)
	require.Len(t, rep.Failures, 1)
	assert.Equal(t, "no_sql", rep.Failures[0].Outcome)
	assert.Equal(t, "timeout", rep.Failures[0].Kind)
	b, err := os.ReadFile(records)
	require.NoError(t, err)
	assert.Contains(t, string(b), "no answer within 1s (QuestionTimeout)")
}

// TestContextBudgetFlags: --budget -1 lets --max-tables decide; a budget
// the schema fits shows it whole; bad values are usage errors.
func TestContextBudgetFlags(t *testing.T) {
	db := shareddata.SpiderDB(t, "concert_singer")
	tables := func(args ...string) []string {
		out, errOut, code := cli(t, append([]string{"context", "--db", db, "--json"}, args...)...)
		require.Equal(t, 0, code, "exit %d: %s", code, errOut)
		var c struct {
			Tables []struct{ Name, Reason string }
		}
		require.NoError(t, json.Unmarshal([]byte(out), &c), out)
		var names []string
		for _, tb := range c.Tables {
			names = append(names, tb.Name+" "+tb.Reason)
		}
		return names
	}
	assert.Equal(t, []string{"singer retrieved"}, tables("--budget", "-1", "--max-tables", "1", "How many singers do we have?"))
	whole := tables("--max-tables", "1", "How many singers do we have?")
	assert.Equal(t, []string{"singer retrieved", "singer_in_concert whole schema", "concert whole schema", "stadium whole schema"}, whole)
	for _, bad := range [][]string{{"--budget", "0"}, {"--budget", "-2"}, {"--max-tables", "0"}} {
		_, errOut, code := cli(t, append([]string{"context", "--db", db}, append(bad, "How many singers?")...)...)
		assert.Equal(t, exitUsage, code, "%v: %s", bad, errOut)
		assert.Contains(t, errOut, bad[0], "%v", bad)
	}
}

// Tests of what a newcomer meets first on the command line: flags that
// read as written, usage errors, messages that name the fault.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/shareddata"
	"github.com/text2sql-go/text2sql/retriever"
)

// --plan and --judge take their value in both forms, and a value is never
// read as the start of the question (it was, while the value was optional:
// "--judge off Q" asked "off Q" with the judge on).
func TestStageFlagForms(t *testing.T) {
	const q = "How many students?"
	for _, flag := range []string{"--plan", "--judge"} {
		for _, v := range []string{"off", "on", "hard"} {
			for _, args := range [][]string{{flag, v}, {flag + "=" + v}} {
				out, errOut, code := cli(t, append(append([]string{"context", "--demo", "--json"}, args...), q)...)
				require.Equal(t, 0, code, "%v: %s", args, errOut)
				var got struct{ Question string }
				require.NoError(t, json.Unmarshal([]byte(out), &got), args)
				assert.Equal(t, q, got.Question, args)
			}
		}
	}
	_, errOut, code := cli(t, "ask", "--demo", "--plan", "maybe", q)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "use off, on or hard")
	_, errOut, code = cli(t, "ask", "--demo", "--judge")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "--judge")
	// On eval, "--judge on" is the flag and its value, not a command "on".
	_, errOut, _ = cli(t, "eval", "--judge", "on", "--help")
	assert.NotContains(t, errOut, "unknown command")
}

// A word that names no command is a usage error, exit 2 as the README says.
func TestUnknownCommand(t *testing.T) {
	_, errOut, code := cli(t, "frobnicate")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, `unknown command "frobnicate"`)
	out, _, code := cli(t)
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "Available Commands")
}

// --base-url without --provider is an OpenAI-compatible endpoint: a
// GEMINI_API_KEY in the environment never reaches that host.
func TestBaseURLGetsNoGeminiKey(t *testing.T) {
	const secret = "gemini-secret-key"
	t.Setenv("GEMINI_API_KEY", secret)
	t.Setenv("OPENAI_API_KEY", "")
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, fmt.Sprint(r.URL, r.Header))
		mu.Unlock()
		http.Error(w, `{"error":{"message":"no"}}`, http.StatusBadRequest)
	}))
	defer srv.Close()
	_, errOut, _ := cli(t, "ask", "--demo", "--max-repairs", "0", "--base-url", srv.URL+"/v1", "Which course has the most students?")
	assert.Contains(t, errOut, "--base-url without --model asks "+srv.URL+"/v1 for gpt-4o-mini", "a local server rarely serves OpenAI's model")
	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, seen, "the endpoint was called")
	for _, s := range seen {
		assert.NotContains(t, s, secret)
		assert.Contains(t, s, "/chat/completions")
	}
}

// A missing database or a directory given as the knowledge file is named
// as what it is, first.
func TestFileErrorsNameTheFault(t *testing.T) {
	_, errOut, code := cli(t, "context", "--db", "/nonexistent/x.sqlite", "q")
	assert.NotEqual(t, 0, code)
	assert.Contains(t, errOut, "sqlite: database file /nonexistent/x.sqlite does not exist")
	_, errOut, code = cli(t, "context", "--demo", "--knowledge", t.TempDir(), "q")
	assert.NotEqual(t, 0, code)
	assert.Contains(t, errOut, "is a directory; give the knowledge file")
	assert.NotContains(t, errOut, "unknown file extension")
}

// run applies the pipeline's deterministic checks (hints included) unless
// --no-check, and counts in English.
func TestRunChecksAndCounts(t *testing.T) {
	out, errOut, code := cli(t, "run", "--demo", "--json", "SELECT TOP 1 course_id FROM courses")
	assert.Equal(t, exitSQL, code, errOut)
	var res struct {
		Error struct{ Kind, Hint string }
	}
	require.NoError(t, json.Unmarshal([]byte(out), &res))
	assert.Equal(t, "dialect", res.Error.Kind)
	assert.Contains(t, res.Error.Hint, "LIMIT 1")
	out, _, code = cli(t, "run", "--demo", "--json", "--no-check", "SELECT TOP 1 course_id FROM courses")
	assert.Equal(t, exitSQL, code)
	require.NoError(t, json.Unmarshal([]byte(out), &res))
	assert.Equal(t, "syntax", res.Error.Kind, "--no-check leaves the engine's own error")
	out, _, code = cli(t, "run", "--demo", "SELECT count(*) FROM courses")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "(1 row)")
	assert.Equal(t, "1 row", plural(1, "row"))
	assert.Equal(t, "0 model calls", plural(0, "model call"))
}

// --auth static without tokens says where the tokens go.
func TestStaticAuthWithoutTokens(t *testing.T) {
	t.Setenv("TEXT2SQL_TOKENS", "")
	_, errOut, code := cli(t, "serve", "--demo", "--auth", "static", "--addr", "127.0.0.1:0")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "TEXT2SQL_TOKENS")
	assert.Contains(t, errOut, "--tokens-file")
}

// --model-conns must leave room for one model call.
func TestModelConnsPositive(t *testing.T) {
	_, errOut, code := cli(t, "serve", "--demo", "--auth", "none", "--model-conns", "0")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "--model-conns")
}

// Each outcome has its own exit status; unverified is not success.
func TestAnswerExit(t *testing.T) {
	code := func(ans *text2sql.Answer) int {
		var ee *exitErr
		if err := answerExit(ans, nil); errors.As(err, &ee) {
			return ee.code
		}
		return 0
	}
	assert.Equal(t, 0, code(&text2sql.Answer{Status: text2sql.StatusVerified, Result: &text2sql.Result{}}))
	assert.Equal(t, 0, code(&text2sql.Answer{Status: text2sql.StatusAnswered, Result: &text2sql.Result{}}))
	assert.Equal(t, exitUnverified, code(&text2sql.Answer{Status: text2sql.StatusUnverified, Result: &text2sql.Result{}}))
	assert.Equal(t, exitDeclined, code(&text2sql.Answer{Status: text2sql.StatusDeclined}))
	assert.Equal(t, exitSQL, code(&text2sql.Answer{Status: text2sql.StatusFailed, Result: &text2sql.Result{Error: &text2sql.SQLError{Kind: text2sql.KindSyntax}}}))
}

// eval --provider scores the pipeline ask runs: with --judge on, every
// question's attempt is reviewed (eval ignored --plan and --judge before),
// and a failed attempt is repaired.
func TestEvalProviderRunsAsksPipeline(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("GEMINI_API_KEY", "")
	spider := shareddata.Path(t, "spider")
	var mu sync.Mutex
	judged, generated := 0, 0
	srv, _ := openAIServer(t, func(system string) string {
		mu.Lock()
		defer mu.Unlock()
		if strings.HasPrefix(system, "You review one attempt") {
			judged++
			return `{"ok": true, "stage": "", "reason": "fine", "hints": [], "terms": [], "tables": []}`
		}
		generated++
		if generated == 1 {
			return `{"answerable": true, "sql": "SELECT TOP 1 name FROM singer", "explanation": "SQL Server syntax"}`
		}
		return `{"answerable": true, "sql": "SELECT count(*) FROM singer", "explanation": "counts"}`
	})
	_, errOut, code := cli(t, "eval", "--spider", spider, "--json", "--limit", "2", "--judge", "on",
		"--provider", "openai", "--base-url", srv.URL+"/v1")
	require.Equal(t, 0, code, errOut)
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, 2, judged, "one review per question")
	assert.Equal(t, 3, generated, "the TOP query is repaired")
}

// The offline header says so when nothing was retrieved, rather than
// listing empty counts.
func TestOfflineHeaderEmpty(t *testing.T) {
	var b strings.Builder
	printOfflineHeader(&b, &text2sql.Retrieval{})
	assert.Contains(t, b.String(), "Nothing in the schema or the knowledge base matched")
	assert.NotContains(t, b.String(), "()")
}

// The text form of ask counts a provider's retries beside the model calls
// (the JSON has them per call as attempts).
func TestAskTextShowsRetries(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("GEMINI_API_KEY", "")
	var mu sync.Mutex
	failed := false
	ok, _ := openAIServer(t, func(string) string {
		return `{"answerable": true, "sql": "SELECT count(*) AS n FROM instructors", "explanation": "counts"}`
	})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		first := !failed
		failed = true
		mu.Unlock()
		if first {
			http.Error(w, `{"error":{"message":"overloaded"}}`, http.StatusServiceUnavailable)
			return
		}
		ok.Config.Handler.ServeHTTP(w, r)
	}))
	defer srv.Close()
	out, errOut, code := cli(t, "ask", "--demo", "--base-url", srv.URL+"/v1", "--model", "local-model", "How many instructors are there?")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "1 model call (1 retry after provider errors), 500 input + 20 output tokens")
	assert.Equal(t, "2 retries", plural(2, "retry"))
	assert.Equal(t, "2 keys", plural(2, "key"))
}

// A damaged index is rebuilt with one warning, not a failure of every
// later command.
func TestDamagedIndexRebuilt(t *testing.T) {
	dir := t.TempDir()
	const q = "Who teaches Linear Algebra?"
	want, errOut, code := cli(t, "context", "--demo", "--index-dir", dir, q)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, want, "instructors")
	file := filepath.Join(dir, retriever.IndexFile)
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	copy(b[len(b)/2:], "40 bytes that are not the index's bytes!")
	require.NoError(t, os.WriteFile(file, b, 0o600))
	out, errOut, code := cli(t, "context", "--demo", "--index-dir", dir, q)
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, 1, strings.Count(errOut, "warning"), errOut)
	assert.Contains(t, errOut, "could not be read")
	assert.Contains(t, errOut, "it is rebuilt")
	assert.Equal(t, want, out)
	_, errOut, code = cli(t, "context", "--demo", "--index-dir", dir, q)
	require.Equal(t, 0, code, errOut)
	assert.NotContains(t, errOut, "could not be read")
}

// Several CLI runs on one index directory at once build it once: doctor
// reports one build, the others reuse it.
func TestParallelRunsBuildIndexOnce(t *testing.T) {
	dir := t.TempDir()
	const n = 4
	outs := make([]string, n)
	var wg sync.WaitGroup
	for i := range outs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, errOut, code := cli(t, "doctor", "--demo", "--json", "--index-dir", dir)
			assert.Equal(t, 0, code, errOut)
			outs[i] = out
		}()
	}
	wg.Wait()
	built, reused := 0, 0
	for _, out := range outs {
		var rep struct {
			Checks []struct{ Name, Status, Detail string }
		}
		require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
		for _, c := range rep.Checks {
			if c.Name == "index" {
				assert.Equal(t, "ok", c.Status, c.Detail)
				switch {
				case strings.Contains(c.Detail, " built ("):
					built++
				case strings.Contains(c.Detail, " reused"):
					reused++
				}
			}
		}
	}
	assert.Equal(t, 1, built, "runs that built the index: %v", outs)
	assert.Equal(t, n-1, reused, "runs that reused it: %v", outs)
}

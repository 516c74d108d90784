package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/text2sql-go/text2sql/demo"
)

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
		content, _ := json.Marshal(map[string]any{"answerable": true, "sql": sql, "explanation": "gold"})
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "local-model",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": string(content)}}},
		})
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

package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// chat answers a conversation on standard input against a local
// OpenAI-compatible server: a greeting, a question, a follow-up rewritten
// by the model.
func TestChat(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-test")
	t.Setenv("GEMINI_API_KEY", "")
	srv, _ := openAIServer(t, func(system string) string {
		switch {
		case strings.HasPrefix(system, "You route"):
			return `{"route": "data"}`
		case strings.HasPrefix(system, "You rewrite"):
			return `{"question": "How many instructors were hired before 2000?"}`
		}
		b, _ := json.Marshal(map[string]any{"answerable": true, "sql": "SELECT COUNT(*) FROM instructors WHERE hire_year < 2010", "explanation": "count"})
		return string(b)
	})
	root := newRoot()
	var out strings.Builder
	root.SetOut(&out)
	root.SetErr(&strings.Builder{})
	root.SetIn(strings.NewReader("Hi!\nHow many instructors were hired before 2010?\nand before 2000?\n"))
	root.SetArgs([]string{"chat", "--demo", "--index-dir", t.TempDir(), "--provider", "openai", "--base-url", srv.URL + "/v1", "--model", "m"})
	require.NoError(t, root.Execute())
	s := out.String()
	assert.Contains(t, s, "[small_talk]")
	assert.Contains(t, s, "[data]\nSELECT COUNT(*) FROM instructors")
	assert.Contains(t, s, "[data: How many instructors were hired before 2000?]")
}

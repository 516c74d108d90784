package main

import (
	"encoding/json"
	"path/filepath"
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
		return modelAnswer("SELECT COUNT(*) FROM instructors WHERE hire_year < 2010", "count")
	})
	s := runChat(t, "Hi!\nHow many instructors were hired before 2010?\nand before 2000?\n",
		"--demo", "--index-dir", t.TempDir(), "--provider", "openai", "--base-url", srv.URL+"/v1", "--model", "m")
	assert.Contains(t, s, "[small_talk]")
	assert.Contains(t, s, "[data]\nSELECT COUNT(*) FROM instructors")
	assert.Contains(t, s, "[data: How many instructors were hired before 2000?]")
}

// chat's saved answers: /save keeps the last answer, /new starts afresh,
// and the question asked again is answered from the saved answer with no
// model call, also in a later chat on the same --saved file (--json: one
// object per line); /saved lists, /forget deletes.
func TestChatSaved(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-test")
	t.Setenv("GEMINI_API_KEY", "")
	srv, calls := openAIServer(t, func(string) string {
		return modelAnswer("SELECT COUNT(*) FROM instructors WHERE hire_year < 2010", "count")
	})
	saved, index := filepath.Join(t.TempDir(), "saved.sqlite"), t.TempDir()
	chatSaved := func(input string, extra ...string) string {
		return runChat(t, input, append([]string{"--demo", "--index-dir", index, "--saved", saved, "--provider", "openai", "--base-url", srv.URL + "/v1", "--model", "m"}, extra...)...)
	}
	s := chatSaved("/save too early\nHow many instructors were hired before 2010?\n/save for HR\n/new\nhow many instructors were hired before 2010\n/saved\n")
	assert.Equal(t, 1, *calls, "one generation: the repeat came from the saved answer")
	assert.Contains(t, s, "Not saved: conversation: no answer to save")
	assert.Regexp(t, `Saved sa-[0-9a-f]{16}: How many instructors were hired before 2010\?`, s)
	assert.Contains(t, s, "New conversation")
	assert.Regexp(t, `\[data \(saved answer sa-[0-9a-f]{16}, no model call\)\]\nSELECT COUNT\(\*\) FROM instructors`, s)
	assert.Contains(t, s, "1 saved answer\nsa-")
	assert.Contains(t, s, "(for HR)")

	s = chatSaved("How many instructors were hired before 2010?\n/saved\n", "--json")
	assert.Equal(t, 1, *calls, "the saved answer outlives the process")
	lines := strings.Split(strings.TrimSpace(s), "\n")
	require.Len(t, lines, 2, "one object per line: %s", s)
	var reply struct {
		Route       string `json:"route"`
		SavedAnswer string `json:"saved_answer"`
	}
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &reply))
	assert.Equal(t, "data", reply.Route)
	require.NotEmpty(t, reply.SavedAnswer)
	var list struct {
		Command string `json:"command"`
		Saved   []struct {
			ID   string `json:"id"`
			Note string `json:"note"`
		} `json:"saved"`
	}
	require.NoError(t, json.Unmarshal([]byte(lines[1]), &list))
	assert.Equal(t, "saved", list.Command)
	require.Len(t, list.Saved, 1)
	assert.Equal(t, reply.SavedAnswer, list.Saved[0].ID)

	s = chatSaved("/forget " + reply.SavedAnswer + "\n/forget " + reply.SavedAnswer + "\nHow many instructors were hired before 2010?\n")
	assert.Contains(t, s, "Deleted "+reply.SavedAnswer)
	assert.Contains(t, s, "No saved answer "+reply.SavedAnswer)
	assert.Equal(t, 2, *calls, "forgotten: the model answers again")
}

// A result of more than one value is printed as rows under the words, at
// most chatRows of them; a single value is the words alone.
func TestChatPrintsRows(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-test")
	t.Setenv("GEMINI_API_KEY", "")
	srv, _ := openAIServer(t, func(string) string {
		return modelAnswer("SELECT code, title FROM courses ORDER BY code", "courses")
	})
	s := runChat(t, "Which courses are there?\n",
		"--demo", "--index-dir", t.TempDir(), "--provider", "openai", "--base-url", srv.URL+"/v1", "--model", "m", "--saved", filepath.Join(t.TempDir(), "s.sqlite"))
	head := strings.Index(s, "\ncode ")
	end := strings.Index(s, "(36 rows)")
	require.True(t, head >= 0 && end > head, "a table of the rows, then their count: %s", s)
	rows := strings.Split(strings.TrimSpace(s[head+1:end]), "\n")[1:]
	assert.Len(t, rows, chatRows, "a screenful of the 36 rows")
}

// runChat runs the chat command with args and input on its standard input,
// and returns its standard output; the command must succeed.
func runChat(t *testing.T, input string, args ...string) string {
	t.Helper()
	root := newRoot()
	var out strings.Builder
	root.SetOut(&out)
	root.SetErr(&strings.Builder{})
	root.SetIn(strings.NewReader(input))
	root.SetArgs(append([]string{"chat"}, args...))
	require.NoError(t, root.Execute())
	return out.String()
}

package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/text2sql-go/text2sql/executor/sqlite"
	"github.com/text2sql-go/text2sql/internal/shareddata"
	"github.com/text2sql-go/text2sql/knowledge"
)

func TestKnowledgeInitAndAccept(t *testing.T) {
	db := shareddata.SpiderDB(t, "concert_singer")
	file := filepath.Join(t.TempDir(), "concert.yaml")
	out, errOut, code := cli(t, "knowledge", "init", "--db", db, "-o", file)
	require.Equal(t, 0, code, errOut)
	assert.Empty(t, out)
	assert.Contains(t, errOut, "then run: text2sql knowledge accept "+file)

	// The file loads back and validates; an existing file is not replaced.
	b, err := knowledge.Load(file)
	require.NoError(t, err)
	ex, err := sqlite.Open(db, sqlite.Options{})
	require.NoError(t, err)
	defer ex.Close()
	require.NoError(t, b.Validate(context.Background(), ex.Schema(), ex))
	_, errOut, code = cli(t, "knowledge", "init", "--db", db, "-o", file)
	assert.Equal(t, exitError, code)
	assert.Contains(t, errOut, "the file exists")

	// The reviewer fills in one note; accept keeps it and drops the rest.
	b.Drafts.Columns[0].Description = "Concert number."
	require.NoError(t, b.Save(file))
	_, errOut, code = cli(t, "knowledge", "accept", file)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, "accepted 2 table notes, 1 column note, 0 examples")
	got, err := knowledge.Load(file)
	require.NoError(t, err)
	assert.Nil(t, got.Drafts)
	assert.Equal(t, []knowledge.ColumnNote{{Table: "concert", Column: "concert_ID", Description: "Concert number."}}, got.Columns)
	require.NoError(t, got.Validate(context.Background(), ex.Schema(), ex))
}

func TestKnowledgeInitDemoStdout(t *testing.T) {
	out, errOut, code := cli(t, "knowledge", "init", "--demo")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "drafts:\n")
	file := filepath.Join(t.TempDir(), "demo.yaml")
	require.NoError(t, os.WriteFile(file, []byte(out), 0o644))
	_, err := knowledge.Load(file)
	require.NoError(t, err)

	_, _, code = cli(t, "knowledge", "init", "--demo", "-o", filepath.Join(t.TempDir(), "x.json"))
	assert.Equal(t, exitUsage, code)
}

// With a provider (a local OpenAI-compatible server), init drafts notes and
// examples; the example the guard refuses and the repeats are left out and
// listed on standard error, the sound one is written as a draft.
func TestKnowledgeInitDraftsWithModel(t *testing.T) {
	t.Setenv("GEMINI_API_KEY", "")
	t.Setenv("OPENAI_API_KEY", "sk-test")
	srv, calls := openAIServer(t, func(string) string {
		return `{"description": "Drafted.", "synonyms": ["gig"], "columns": [{"name": "Name", "meaning": "The name."}],
			"examples": [{"question": "How many singers?", "sql": "SELECT count(*) FROM singer"},
			             {"question": "Delete them", "sql": "DELETE FROM singer"}]}`
	})
	db := shareddata.SpiderDB(t, "concert_singer")
	file := filepath.Join(t.TempDir(), "drafted.yaml")
	_, errOut, code := cli(t, "knowledge", "init", "--db", db, "-o", file, "--base-url", srv.URL+"/v1", "--model", "local-model")
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, 4, *calls, "one call per table")
	assert.Contains(t, errOut, `left out ("Delete them"): sql does not pass the guard`)
	assert.Contains(t, errOut, `left out ("How many singers?"): a drafted example asks the same question`)
	assert.Contains(t, errOut, "1 example to review")
	assert.NotContains(t, errOut, "sk-test")

	b, err := knowledge.Load(file)
	require.NoError(t, err)
	require.Len(t, b.Drafts.Examples, 1)
	assert.Empty(t, b.Examples, "drafted examples wait for accept")
	assert.Equal(t, "Drafted.", b.Drafts.Tables[0].Description)
	ex, err := sqlite.Open(db, sqlite.Options{})
	require.NoError(t, err)
	defer ex.Close()
	require.NoError(t, b.Validate(context.Background(), ex.Schema(), ex))

	_, errOut, code = cli(t, "knowledge", "accept", file)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, ", 1 example;")
	got, err := knowledge.Load(file)
	require.NoError(t, err)
	assert.Len(t, got.Examples, 1)
}

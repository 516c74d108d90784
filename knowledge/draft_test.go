package knowledge_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/check"
	"github.com/text2sql-go/text2sql/executor/sqlite"
	"github.com/text2sql-go/text2sql/internal/shareddata"
	"github.com/text2sql-go/text2sql/knowledge"
	"github.com/text2sql-go/text2sql/llm/llmtest"
)

// singerDraft is the scripted model's answer about table singer: notes and
// four candidate examples, of which only the first is sound.
const singerDraft = "Here it is:\n```json\n" + `{
  "description": "One row per singer.",
  "synonyms": ["artist", "performer"],
  "columns": [{"name": "age", "meaning": "Age in years."}, {"name": "Country", "meaning": "Country of origin."}],
  "examples": [
    {"question": "How many singers are there?", "sql": "SELECT count(*) FROM singer;"},
    {"question": "Remove the singers", "sql": "DELETE FROM singer"},
    {"question": "Which singers have a nickname?", "sql": "SELECT Name AS nickname FROM singer"},
    {"question": "What is the biggest age?", "sql": "SELECT abs(-9223372036854775808) FROM singer"}
  ]
}` + "\n```"

// strictChecker is the deterministic checks of package check plus one
// failure the SQLite guard cannot see: any SQL naming "nickname" (on
// SQLite, whatever package check refuses the guard's prepare refuses too).
type strictChecker struct{ *check.Checker }

func (c strictChecker) Failure(sql string) *text2sql.SQLError {
	if strings.Contains(sql, "nickname") {
		return &text2sql.SQLError{Kind: text2sql.KindUnknownColumn, Message: "no nicknames here"}
	}
	return c.Checker.Failure(sql)
}

func TestInitDraftsWithScriptedModel(t *testing.T) {
	ctx := context.Background()
	path := shareddata.Path(t, "spider", "database", "concert_singer", "concert_singer.sqlite")
	ex, err := sqlite.Open(path, sqlite.Options{})
	require.NoError(t, err)
	defer ex.Close()
	sch := ex.Schema()
	model := llmtest.Func(func(req text2sql.ModelRequest) (string, error) {
		msg := req.Messages[0].Content
		switch {
		case strings.Contains(msg, "Table to document: singer "):
			return singerDraft, nil
		case strings.Contains(msg, "Table to document: stadium "):
			return "I cannot help with that.", nil
		}
		return `{"description": "", "columns": [], "examples": []}`, nil
	})

	b, left, err := knowledge.Init(ctx, ex, sch, knowledge.InitOptions{
		Model: model, Checker: strictChecker{check.New(sch, sch.Dialect)}, DraftExamples: 4,
	})
	require.NoError(t, err)
	assert.Equal(t, len(sch.Tables), model.CallCount(), "one call per table")
	assert.Contains(t, model.Calls()[1].Messages[0].Content, "'United States'", "values go to the model as literals")

	// Only the sound example is kept, as a draft; the others are listed.
	require.Len(t, b.Drafts.Examples, 1)
	assert.Equal(t, "SELECT count(*) FROM singer", b.Drafts.Examples[0].SQL)
	assert.Empty(t, b.Examples)
	var msgs []string
	for _, p := range left {
		msgs = append(msgs, p.String())
	}
	require.Len(t, left, 4, strings.Join(msgs, "\n"))
	assert.Contains(t, msgs[0], `"Remove the singers"): sql does not pass the guard`)
	assert.ErrorIs(t, left[0].Err, text2sql.ErrRefused)
	assert.Contains(t, msgs[1], `"Which singers have a nickname?"): sql fails the deterministic checks`)
	assert.Contains(t, msgs[2], `"What is the biggest age?"): sql does not run`)
	assert.Equal(t, "drafts.table:stadium", left[3].Item)

	// The notes are drafted where they were empty.
	for _, n := range b.Drafts.Tables {
		if n.Table == "singer" {
			assert.Equal(t, "One row per singer.", n.Description)
			assert.Equal(t, []string{"artist", "performer"}, n.Synonyms)
		}
	}
	meanings := map[string]string{}
	for _, n := range b.Drafts.Columns {
		meanings[n.Table+"."+n.Column] = n.Description
	}
	assert.Equal(t, "Age in years.", meanings["singer.Age"])
	assert.Equal(t, "Country of origin.", meanings["singer.Country"])

	// Drafts are not retrieved; the file round-trips and validates; accept
	// makes the example a verified one.
	for _, d := range b.Documents(sch) {
		assert.NotEqual(t, text2sql.ItemExample, d.Kind)
	}
	data, err := b.EncodeStarter(sch)
	require.NoError(t, err)
	file := filepath.Join(t.TempDir(), "k.yaml")
	require.NoError(t, os.WriteFile(file, data, 0o644))
	got, err := knowledge.Load(file)
	require.NoError(t, err)
	require.NoError(t, got.Validate(ctx, sch, ex))
	st, err := got.Accept()
	require.NoError(t, err)
	assert.Equal(t, 1, st.Examples)
	require.NoError(t, got.Validate(ctx, sch, ex))
	var examples int
	for _, d := range got.Documents(sch) {
		if d.Kind == text2sql.ItemExample {
			examples++
		}
	}
	assert.Equal(t, 1, examples)
}

func TestInitModelErrorEnds(t *testing.T) {
	path := shareddata.Path(t, "spider", "database", "concert_singer", "concert_singer.sqlite")
	ex, err := sqlite.Open(path, sqlite.Options{})
	require.NoError(t, err)
	defer ex.Close()
	_, _, err = knowledge.Init(context.Background(), ex, ex.Schema(), knowledge.InitOptions{Model: llmtest.New()})
	assert.ErrorIs(t, err, text2sql.ErrModel)
	assert.ErrorContains(t, err, "drafting table concert")
}

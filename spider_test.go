package text2sql_test

import (
	"context"
	"database/sql"
	"testing"

	_ "github.com/mattn/go-sqlite3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/executor/sqlite"
	"github.com/text2sql-go/text2sql/generator"
	"github.com/text2sql-go/text2sql/internal/shareddata"
	"github.com/text2sql-go/text2sql/llm/llmtest"
	"github.com/text2sql-go/text2sql/retriever"
)

// Every Spider dev question on the shared databases goes through the whole
// pipeline (retrieval, prompt, parsing, guard, execution) with a scripted
// model that answers the gold SQL: no gold query is refused, and each result
// equals direct execution through a plain connection.
func TestSpiderDevThroughPipeline(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 972 questions")
	}
	qs, missing := shareddata.SpiderDev(t)
	require.Len(t, qs, 972, "%d questions with databases, %d without; want 972 and 62 (wta_1)", len(qs), missing)
	require.Equal(t, 62, missing, "%d questions with databases, %d without; want 972 and 62 (wta_1)", len(qs), missing)
	byDB := map[string][]shareddata.SpiderQuestion{}
	var order []string
	for _, q := range qs {
		if byDB[q.DBID] == nil {
			order = append(order, q.DBID)
		}
		byDB[q.DBID] = append(byDB[q.DBID], q)
	}
	ctx := context.Background()
	ran := 0
	for _, dbID := range order {
		path := shareddata.SpiderDB(t, dbID)
		ex, err := sqlite.Open(path, sqlite.Options{MaxRows: 1_000_000})
		require.NoError(t, err)
		plain, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
		require.NoError(t, err)
		ret, err := retriever.NewHybrid(ctx, retriever.HybridOptions{Schema: ex.Schema()})
		require.NoError(t, err)
		var gold, question string
		model := llmtest.Func(func(req text2sql.ModelRequest) (string, error) {
			last := req.Messages[len(req.Messages)-1].Content
			assert.Contains(t, last, question, "%s: the prompt misses the question %q", dbID, question)
			return reply(gold), nil
		})
		gen, err := generator.New(model, generator.Options{Dialect: text2sql.DialectSQLite})
		require.NoError(t, err)
		p, err := text2sql.New(text2sql.Config{Retriever: ret, Generator: gen, Executor: ex, MaxRepairs: -1, MaxRows: 1_000_000})
		require.NoError(t, err)
		for _, q := range byDB[dbID] {
			gold, question = q.Query, q.Question
			ans, err := p.Ask(ctx, q.Question)
			ran++
			if !assert.NoError(t, err, "%s: %q", dbID, q.Query) {
				continue
			}
			if !assert.Equal(t, text2sql.StatusAnswered, ans.Status, "%s: %q: status %s", dbID, q.Query, ans.Status) {
				continue
			}
			want, err := shareddata.PlainRows(plain, q.Query)
			require.NoError(t, err)
			if len(want) == 0 && len(ans.Result.Rows) == 0 {
				continue
			}
			assert.Equal(t, want, ans.Result.Rows, "%s: %q: pipeline rows differ from direct execution", dbID, q.Query)
		}
		got := model.CallCount()
		assert.Equal(t, len(byDB[dbID]), got, "%s: %d model calls for %d questions", dbID, got, len(byDB[dbID]))
		plain.Close()
		ex.Close()
	}
	assert.Equal(t, 972, ran, "ran %d questions, want 972", ran)
}

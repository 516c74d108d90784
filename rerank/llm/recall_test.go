package llmrerank_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/generator"
	"github.com/text2sql-go/text2sql/internal/demotest"
	"github.com/text2sql-go/text2sql/llm/llmtest"
	llmrerank "github.com/text2sql-go/text2sql/rerank/llm"
)

// A Spider dev question whose gold query reads cars_data, which the fused
// ranking puts 6th of car_1's 6 tables, after the tables whose names say
// "model" and "make": without a reranker it is not shown (5 tables), with
// a model that selects the gold tables it is, first.
func TestSelectionRecoversSixthTable(t *testing.T) {
	db := spiderDB(t, "car_1")
	const q = "Which model saves the most gasoline? That is to say, have the maximum miles per gallon."
	// Gold: SELECT T1.Model FROM CAR_NAMES AS T1 JOIN CARS_DATA AS T2
	// ON T1.MakeId = T2.Id ORDER BY T2.mpg DESC LIMIT 1
	plain := retrieve(t, selecting(t, db, nil), q)
	require.NotContains(t, tableNames(plain), "cars_data", "the fused ranking must miss the table for this test: %v", tableNames(plain))
	cands := candidates(t, db, nil, q)
	require.Contains(t, firstTables(cands, 100), "cars_data", "the reranker must be given it")

	m := llmtest.Func(func(req text2sql.ModelRequest) (string, error) {
		require.Contains(t, req.Messages[0].Content, "CREATE TABLE cars_data", "the model is shown the candidate's columns")
		return tablesReply("CARS_DATA", "car_names"), nil
	})
	c := retrieve(t, selecting(t, db, newReranker(t, m, llmrerank.Options{Schema: db})), q)
	require.NotNil(t, c.Rerank)
	assert.Empty(t, c.Rerank.Fallback)
	assert.Equal(t, []string{"cars_data", "car_names"}, c.Rerank.Tables)
	shown := tableNames(c)
	assert.Equal(t, []string{"cars_data", "car_names"}, shown[:2], "shown: %v", shown)
	assert.Contains(t, shown, plain.Tables[0].Name, "the fused best still has a slot")
	assert.Contains(t, c.Schema, "CREATE TABLE cars_data")
}

// A model that selects every table but the one the fused ranking puts
// first cannot push it out of the retriever's 5 tables with the default
// MaxTables (4); with MaxTables 5 it can.
func TestFusedBestKeepsASlot(t *testing.T) {
	db := spiderDB(t, "car_1")
	const q = "What are the different models for the cards produced after 1980?"
	plain := retrieve(t, selecting(t, db, nil), q)
	best := plain.Tables[0].Name
	var others []string
	for _, tb := range db.Tables {
		if tb.Name != best {
			others = append(others, tb.Name)
		}
	}
	require.Len(t, others, 5)
	m := llmtest.New(tablesReply(others...)).RepeatLast()

	c := retrieve(t, selecting(t, db, newReranker(t, m, llmrerank.Options{Schema: db})), q)
	assert.Len(t, c.Rerank.Tables, llmrerank.DefaultMaxTables)
	assert.Contains(t, tableNames(c), best, "default MaxTables")

	c = retrieve(t, selecting(t, db, newReranker(t, m, llmrerank.Options{Schema: db, MaxTables: 5})), q)
	assert.NotContains(t, tableNames(c), best, "MaxTables 5 gives the model every slot: %v", tableNames(c))
}

// The reranker's calls reach the pipeline's trace: the retrieval step
// holds them, they count in ModelCalls and usage, and the outcome says
// what the reranker did.
func TestCallsInPipelineTrace(t *testing.T) {
	_, ex := demotest.Open(t)
	db := ex.Schema()
	_, kb := demoDB(t)
	const q = "How many students take each class?"
	sql := `{"answerable": true, "sql": "SELECT count(*) FROM enrollments", "explanation": "scripted"}`
	for _, tc := range []struct {
		name    string
		rerank  string
		outcome string
	}{
		{"selected", tablesReply("enrollments", "courses"), "reranked: 2 tables selected"},
		{"fallback", "no JSON", "rerank fallback: malformed answer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := llmtest.Func(func(req text2sql.ModelRequest) (string, error) {
				if req.System == llmrerank.System(db.Dialect) {
					return tc.rerank, nil
				}
				return sql, nil
			})
			gen, err := generator.New(m, generator.Options{})
			require.NoError(t, err)
			rr := newReranker(t, m, llmrerank.Options{Schema: db, MaxReasks: -1})
			p, err := text2sql.New(text2sql.Config{Retriever: hybrid(t, db, kb, rr), Generator: gen, Executor: ex, DisableExampleReuse: true})
			require.NoError(t, err)
			ans, err := p.Ask(context.Background(), q)
			require.NoError(t, err)
			require.Equal(t, text2sql.StatusAnswered, ans.Status)

			step := ans.Trace.Steps[0]
			require.Equal(t, text2sql.StageRetrieval, step.Stage)
			require.Len(t, step.Calls, 1, "the reranker's call is in the retrieval step")
			assert.Positive(t, step.Usage.InputTokens)
			assert.True(t, strings.Contains(step.Outcome, tc.outcome), "outcome %q, want %q", step.Outcome, tc.outcome)
			assert.Equal(t, 2, ans.Trace.ModelCalls, "one rerank and one generate call")
			assert.Equal(t, m.CallCount(), ans.Trace.ModelCalls)
			require.NotNil(t, ans.Retrieval.Rerank)
			assert.Equal(t, step.Calls, ans.Retrieval.Rerank.Calls)
		})
	}
}

// The selection is shown first, whole, even where the retriever's
// foreign-key preference and bridge tables would fill the slots: on
// student_transcripts_tracking (11 tables), Transcripts and Courses join
// only through two bridge tables, and Addresses and Semesters through
// Students and Student_Enrolment.
func TestSelectionShownFirst(t *testing.T) {
	db := spiderDB(t, "student_transcripts_tracking")
	const q = "What are the last name of the students who live in North Carolina but have not registered in any degree programs?"
	sel := []string{"Transcripts", "Courses", "Addresses", "Semesters"}
	m := llmtest.New(tablesReply(sel...))
	c := retrieve(t, selecting(t, db, newReranker(t, m, llmrerank.Options{Schema: db})), q)
	require.Equal(t, sel, c.Rerank.Tables)
	shown := tableNames(c)
	require.Len(t, shown, 5)
	assert.Equal(t, sel, shown[:4])
	assert.Equal(t, text2sql.ReasonRetrieved, c.Tables[0].Reason)
}

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
	"github.com/text2sql-go/text2sql/retriever"
)

// A Spider dev question whose gold query reads Degree_Programs, which the
// fused ranking leaves out of student_transcripts_tracking's 11 tables
// (the 6 shown are those whose names say "semester", "enrolment" and
// "student"): without a reranker it is not shown, with a model that
// selects the gold tables it is, first.
func TestSelectionRecoversMissedTable(t *testing.T) {
	db := spiderDB(t, "student_transcripts_tracking")
	const q = "Find the semester when both Master students and Bachelor students got enrolled in."
	// Gold: SELECT DISTINCT T2.semester_id FROM Degree_Programs AS T1 JOIN
	// Student_Enrolment AS T2 ON T1.degree_program_id = T2.degree_program_id
	// WHERE degree_summary_name = 'Master' INTERSECT … 'Bachelor'
	plain := retrieve(t, selecting(t, db, nil), q)
	require.NotContains(t, tableNames(plain), "Degree_Programs", "the fused ranking must miss the table for this test: %v", tableNames(plain))
	cands := candidates(t, db, nil, q)
	require.Contains(t, firstTables(cands, 100), "Degree_Programs", "the reranker must be given it")

	m := llmtest.Func(func(req text2sql.ModelRequest) (string, error) {
		require.Contains(t, req.Messages[0].Content, `CREATE TABLE "Degree_Programs"`, "the model is shown the candidate's columns")
		return tablesReply("DEGREE_PROGRAMS", "student_enrolment"), nil
	})
	c := retrieve(t, selecting(t, db, newReranker(t, m, llmrerank.Options{Schema: db})), q)
	require.NotNil(t, c.Rerank)
	assert.Empty(t, c.Rerank.Fallback)
	assert.Equal(t, []string{"Degree_Programs", "Student_Enrolment"}, c.Rerank.Tables)
	shown := tableNames(c)
	assert.Equal(t, []string{"Degree_Programs", "Student_Enrolment"}, shown[:2], "shown: %v", shown)
	assert.Contains(t, shown, plain.Tables[0].Name, "the fused best still has a slot")
	assert.Contains(t, c.Schema, `CREATE TABLE "Degree_Programs"`)
}

// A model that selects every table but the one the fused ranking puts
// first cannot push it out of the retriever's tables with the defaults
// (the reranker keeps one table less than the retriever shows); with
// MaxTables equal to the retriever's it can.
func TestFusedBestKeepsASlot(t *testing.T) {
	db := spiderDB(t, "student_transcripts_tracking")
	const q = "How many degree programs does each department offer?"
	plain := retrieve(t, selecting(t, db, nil), q)
	best := plain.Tables[0].Name
	var others []string
	for _, tb := range db.Tables {
		if tb.Name != best {
			others = append(others, tb.Name)
		}
	}
	require.Greater(t, len(others), retriever.DefaultMaxTables)
	m := llmtest.New(tablesReply(others...)).RepeatLast()

	c := retrieve(t, selecting(t, db, newReranker(t, m, llmrerank.Options{Schema: db})), q)
	assert.Len(t, c.Rerank.Tables, llmrerank.DefaultMaxTables)
	assert.Contains(t, tableNames(c), best, "default MaxTables")

	c = retrieve(t, selecting(t, db, newReranker(t, m, llmrerank.Options{Schema: db, MaxTables: retriever.DefaultMaxTables})), q)
	assert.NotContains(t, tableNames(c), best, "MaxTables %d gives the model every slot: %v", retriever.DefaultMaxTables, tableNames(c))
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
	require.Len(t, shown, retriever.DefaultMaxTables)
	assert.Equal(t, sel, shown[:4])
	assert.Equal(t, text2sql.ReasonRetrieved, c.Tables[0].Reason)
}

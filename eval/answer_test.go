package eval

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/accuracy"
)

func TestCheckAnswer(t *testing.T) {
	ex := openExec(t, newDB(t, "quiz.sqlite",
		"CREATE TABLE emp(name TEXT, dept TEXT, salary REAL)",
		"INSERT INTO emp VALUES ('ann', 'it', 10), ('bob', 'it', 20), ('cid', 'hr', 30), ('dan', 'hr', 30)",
	))
	ctx := context.Background()
	tests := []struct {
		name, cand, key string
		mode            accuracy.Mode
		matched         bool
		summary         string
	}{
		{"same rows, other column order", "SELECT dept, name FROM emp", "SELECT name, dept FROM emp", accuracy.ModeSpider, true, "match (columns permuted"},
		{"column order fixed in strict", "SELECT dept, name FROM emp", "SELECT name, dept FROM emp", accuracy.ModeStrict, false, "columns in another order"},
		{"missing and extra rows", "SELECT name FROM emp WHERE salary > 10", "SELECT name FROM emp WHERE dept = 'it'", accuracy.ModeSpider, false, "1 missing row, 2 extra rows"},
		{"column mismatch", "SELECT name, salary FROM emp", "SELECT name FROM emp", accuracy.ModeSpider, false, "column mismatch: gold has 1 column, prediction 2 columns"},
		{"answer key orders", "SELECT name FROM emp ORDER BY name DESC", "SELECT name FROM emp ORDER BY name", accuracy.ModeSpider, false, "different order"},
		{"answer key does not order", "SELECT name FROM emp ORDER BY name DESC", "SELECT name FROM emp", accuracy.ModeSpider, true, "match"},
		{"subquery ORDER BY does not order the key", "SELECT name FROM emp ORDER BY name DESC",
			"SELECT name FROM emp WHERE salary >= (SELECT salary FROM emp ORDER BY salary LIMIT 1)", accuracy.ModeSpider, true, "match"},
		{"AVG vs SUM/COUNT within tolerance", "SELECT sum(salary) * 1.0 / count(*) / 3 FROM emp", "SELECT avg(salary) / 3 FROM emp", accuracy.ModeStrict, true, "match"},
		{"bird: duplicates ignored", "SELECT dept FROM emp", "SELECT DISTINCT dept FROM emp", accuracy.ModeBIRD, true, "match"},
		{"candidate fails", "SELECT nope FROM emp", "SELECT name FROM emp", accuracy.ModeSpider, false, "the candidate failed: unknown_column"},
		{"candidate refused", "DELETE FROM emp", "SELECT name FROM emp", accuracy.ModeSpider, false, "the candidate failed: not_read_only"},
		{"nondeterministic key", "SELECT name FROM emp ORDER BY salary DESC LIMIT 1", "SELECT name FROM emp ORDER BY salary DESC LIMIT 1", accuracy.ModeSpider, true, "the answer key is nondeterministic"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			chk, err := accuracy.CheckAnswer(ctx, ex, tc.cand, tc.key, tc.mode)
			require.NoError(t, err)
			assert.Equal(t, tc.matched, chk.Matched, chk.Summary)
			assert.Contains(t, chk.Summary, tc.summary)
		})
	}
	// The rows of a diff are there for a quiz page to show.
	chk, err := accuracy.CheckAnswer(ctx, ex, "SELECT name FROM emp WHERE dept = 'it' AND name <> 'bob'", "SELECT name FROM emp WHERE dept = 'it'", "")
	require.NoError(t, err)
	assert.False(t, chk.Matched)
	assert.Equal(t, accuracy.ModeSpider, chk.Mode)
	require.NotNil(t, chk.Diff)
	require.Len(t, chk.Diff.Missing, 1)
	assert.Equal(t, "bob", chk.Diff.Missing[0][0])
	// A broken answer key is the caller's error.
	for _, key := range []string{"SELECT nope FROM emp", "DROP TABLE emp", ""} {
		_, err := accuracy.CheckAnswer(ctx, ex, "SELECT 1", key, accuracy.ModeSpider)
		assert.ErrorIs(t, err, accuracy.ErrAnswerKey, "%q", key)
	}
	_, err = accuracy.CheckAnswer(ctx, ex, "SELECT 1", "SELECT 1", "fuzzy")
	assert.Error(t, err, "unknown mode")
	_, err = accuracy.CheckAnswer(ctx, nil, "SELECT 1", "SELECT 1", accuracy.ModeSpider)
	assert.ErrorIs(t, err, text2sql.ErrInvalidConfig)
	// The table survives the refused candidate.
	r := run(t, ex, "SELECT count(*) FROM emp")
	require.NotEmpty(t, r.Rows)
	assert.Equal(t, int64(4), r.Rows[0][0])
}

package judge_test

import (
	"testing"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/stagekit/stagekittest"
	"github.com/text2sql-go/text2sql/judge"

	"github.com/stretchr/testify/require"
)

// FuzzParseVerdict: ParseVerdict never panics; a rejection always names a
// stage of the three, an acceptance none.
func FuzzParseVerdict(f *testing.F) {
	seeds := []string{`{"ok": true}`, `{"ok": false, "stage": "plan", "hints": "a\nb"}`, `{"ok": "yes"`, "```json\n{\"correct\": false, \"fault\": \"schema\"}\n```", `{"ok": false, "stage": 3}`}
	stagekittest.Fuzz(f, judge.ParseVerdict, seeds, func(t *testing.T, _ string, v *text2sql.Verdict) {
		if v.OK {
			require.Empty(t, v.Stage, "accepted verdict with a stage: %+v", v)
			require.Nil(t, v.Terms, "accepted verdict with a stage: %+v", v)
			require.Nil(t, v.Tables, "accepted verdict with a stage: %+v", v)
		} else {
			require.Contains(t, []text2sql.Stage{text2sql.StageRetrieval, text2sql.StagePlan, text2sql.StageSQL}, v.Stage, "rejection without a stage: %+v", v)
		}
	})
}

// FuzzSample: Sample never panics and stays within its budget whatever
// the values.
func FuzzSample(f *testing.F) {
	f.Add("a", "b\nc", 100, 3)
	f.Add("", "'''", 1, 0)
	f.Fuzz(func(t *testing.T, col, val string, budget, rows int) {
		if rows < 0 || rows > 500 {
			return
		}
		res := &text2sql.Result{Columns: []string{col, "x"}, RowCount: rows}
		for i := 0; i < rows; i++ {
			res.Rows = append(res.Rows, []any{val, []byte(val)})
		}
		s := judge.Sample(res, budget)
		require.NotEmpty(t, s, "empty sample")
	})
}

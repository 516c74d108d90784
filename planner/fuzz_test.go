package planner_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/planner"
)

// FuzzParse: Parse never panics; it returns a plan with steps or objects,
// or an OutputError holding the raw text.
func FuzzParse(f *testing.F) {
	for _, s := range []string{goodPlan, `{"objects": [`, "```json\n{\"steps\": \"a\\nb\"}\n```", `{"objects": ["t.c", 3, {"table": "x"}]}`, `[{"plan": {"instruction": [1, null]}}]`, "{{{{"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		p, err := planner.Parse(text)
		if err != nil {
			var oe *text2sql.OutputError
			require.ErrorAs(t, err, &oe)
			require.Equal(t, text, oe.Raw)
			require.ErrorIs(t, err, text2sql.ErrInvalidOutput)
			return
		}
		require.False(t, len(p.Instruction) == 0 && len(p.Objects) == 0, "empty plan from %q", text)
	})
}

package planner_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/stagekit/stagekittest"
	"github.com/text2sql-go/text2sql/planner"
)

// FuzzParse: Parse never panics; it returns a plan with steps or objects,
// or an OutputError holding the raw text.
func FuzzParse(f *testing.F) {
	seeds := []string{goodPlan, `{"objects": [`, "```json\n{\"steps\": \"a\\nb\"}\n```", `{"objects": ["t.c", 3, {"table": "x"}]}`, `[{"plan": {"instruction": [1, null]}}]`, "{{{{"}
	stagekittest.Fuzz(f, planner.Parse, seeds, func(t *testing.T, text string, p *text2sql.Plan) {
		require.False(t, len(p.Instruction) == 0 && len(p.Objects) == 0, "empty plan from %q", text)
	})
}

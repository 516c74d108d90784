package planner_test

import (
	"errors"
	"testing"

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
			if !errors.As(err, &oe) || oe.Raw != text || !errors.Is(err, text2sql.ErrInvalidOutput) {
				t.Fatalf("err = %v", err)
			}
			return
		}
		if len(p.Instruction) == 0 && len(p.Objects) == 0 {
			t.Fatalf("empty plan from %q", text)
		}
	})
}

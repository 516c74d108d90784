package planner_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/executor/sqlite"
	"github.com/text2sql-go/text2sql/internal/birdschema"
	"github.com/text2sql-go/text2sql/internal/shareddata"
	"github.com/text2sql-go/text2sql/planner"
	"github.com/text2sql-go/text2sql/schema"
)

// realSchemas returns the schema models of the Spider dev databases and
// of BIRD mini-dev (materialised empty from dev_tables.json).
func realSchemas(t *testing.T) []*schema.Database {
	qs, _ := shareddata.SpiderDev(t)
	seen := map[string]bool{}
	var out []*schema.Database
	open := func(path string) {
		ex, err := sqlite.Open(path, sqlite.Options{})
		require.NoError(t, err)
		out = append(out, ex.Schema())
		ex.Close()
	}
	for _, q := range qs {
		if !seen[q.DBID] {
			seen[q.DBID] = true
			open(shareddata.SpiderDB(t, q.DBID))
		}
	}
	paths, err := birdschema.Materialize(t.TempDir(), shareddata.Path(t, "bird", "mini_dev", "dev_tables.json"))
	require.NoError(t, err)
	for _, p := range paths {
		open(p)
	}
	return out
}

// Every table and column of the Spider and BIRD schemas validates as a
// plan object, in any letter case and quoted; each misspelt one is a
// problem, and most come with a hint.
func TestValidateRealSchemas(t *testing.T) {
	total, bad, hinted := 0, 0, 0
	for _, db := range realSchemas(t) {
		p, err := planner.New(nil, planner.Options{Schema: db})
		require.NoError(t, err)
		var good, wrong []text2sql.PlanObject
		for _, tb := range db.Tables {
			good = append(good, text2sql.PlanObject{Kind: "table", Name: strings.ToUpper(tb.Name)})
			wrong = append(wrong, text2sql.PlanObject{Kind: "table", Name: tb.Name + "x"})
			for _, c := range tb.Columns {
				good = append(good, text2sql.PlanObject{Kind: "column", Name: fmt.Sprintf("%q.%q", tb.Name, c.Name)},
					text2sql.PlanObject{Kind: "value", Name: tb.Name + "." + strings.ToLower(c.Name), Value: "x"})
				wrong = append(wrong, text2sql.PlanObject{Kind: "column", Name: tb.Name + "." + c.Name + "x"})
			}
		}
		plan := &text2sql.Plan{Objects: good}
		assert.Empty(t, p.Validate(plan), "%s: valid objects rejected", db.Name)
		for _, o := range plan.Objects {
			if o.Kind == "table" {
				assert.NotNil(t, db.Lookup(o.Name), "%s: %q is not the schema's spelling", db.Name, o.Name)
			}
		}
		probs := p.Validate(&text2sql.Plan{Objects: wrong})
		total += len(wrong)
		bad += len(probs)
		for _, pr := range probs {
			if pr.Hint != "" {
				hinted++
			}
		}
	}
	assert.Equal(t, total, bad, "misspelt objects reported")
	t.Logf("%d misspelt objects, all reported, %d with a hint", total, hinted)
}

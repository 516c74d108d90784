package lint_test

import (
	"context"
	"errors"
	"testing"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/shareddata"
	"github.com/text2sql-go/text2sql/lint"

	"github.com/stretchr/testify/assert"
)

// Every identifier of every Spider dev gold query is misspelt in turn
// (name → namezq); of the mutants the engine rejects as an unknown table
// or column, the checker must catch nearly all (it catches every one
// today), and it must never fail a mutant the engine accepts.
func TestSpiderMutantsCaught(t *testing.T) {
	if testing.Short() {
		t.Skip("checks about 15,000 mutants")
	}
	qs, _ := shareddata.SpiderDev(t)
	spider := spiderExecutors(t)
	ctx := context.Background()
	mutants, unknown, caught := 0, 0, 0
	for _, q := range qs {
		ex := spider(q.DBID)
		c := lint.New(ex.Schema(), text2sql.DialectSQLite)
		for _, mut := range shareddata.Misspellings(q.Query) {
			mutants++
			err := ex.Check(ctx, mut)
			rep := c.Check(mut)
			if err == nil {
				assert.Empty(t, rep.Failures, "false failure on a mutant the engine accepts:\n  %s", mut)
			}
			var se *text2sql.SQLError
			if !errors.As(err, &se) || (se.Kind != text2sql.KindUnknownColumn && se.Kind != text2sql.KindUnknownTable) {
				continue
			}
			unknown++
			if !rep.OK() {
				caught++
			} else {
				t.Logf("missed (%v): %s", se, mut)
			}
		}
	}
	t.Logf("%d mutants; the engine reports an unknown name for %d; the checker catches %d", mutants, unknown, caught)
	assert.Positive(t, unknown, "the engine reports no unknown name")
	assert.GreaterOrEqual(t, float64(caught), 0.99*float64(unknown), "the checker catches %d of %d unknown names, want at least 99%%", caught, unknown)
}

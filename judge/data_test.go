package judge_test

import (
	"context"
	"testing"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/executor/sqlite"
	"github.com/text2sql-go/text2sql/generator"
	"github.com/text2sql-go/text2sql/internal/shareddata"
	"github.com/text2sql-go/text2sql/judge"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Real results from the Spider databases fit the budget with their marker.
func TestSampleSpiderResults(t *testing.T) {
	for _, tc := range []struct{ db, sql, total string }{
		{"world_1", "SELECT * FROM city", "4,079"},
		{"world_1", "SELECT * FROM country", "239"},
		{"car_1", "SELECT * FROM cars_data", "406"},
	} {
		ex, err := sqlite.Open(shareddata.SpiderDB(t, tc.db), sqlite.Options{MaxRows: 100_000})
		require.NoError(t, err)
		res, err := ex.Execute(context.Background(), text2sql.ExecuteRequest{SQL: tc.sql})
		ex.Close()
		require.NoError(t, err, tc.sql)
		require.Nil(t, res.Error, tc.sql)
		for _, budget := range []int{200, 2000, 8000} {
			s := judge.Sample(res, budget)
			assert.LessOrEqual(t, generator.EstimateTokens(s), budget, "%s, budget %d; head %q", tc.sql, budget, s[:min(80, len(s))])
			assert.Contains(t, s, " of "+tc.total+" rows", "%s, budget %d; head %q", tc.sql, budget, s[:min(80, len(s))])
		}
	}
}

package judge_test

import (
	"context"
	"strings"
	"testing"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/executor/sqlite"
	"github.com/text2sql-go/text2sql/generator"
	"github.com/text2sql-go/text2sql/internal/shareddata"
	"github.com/text2sql-go/text2sql/judge"
)

// Real results from the Spider databases fit the budget with their marker.
func TestSampleSpiderResults(t *testing.T) {
	for _, tc := range []struct{ db, sql, total string }{
		{"world_1", "SELECT * FROM city", "4,079"},
		{"world_1", "SELECT * FROM country", "239"},
		{"car_1", "SELECT * FROM cars_data", "406"},
	} {
		ex, err := sqlite.Open(shareddata.SpiderDB(t, tc.db), sqlite.Options{MaxRows: 100_000})
		if err != nil {
			t.Fatal(err)
		}
		res, err := ex.Execute(context.Background(), text2sql.ExecuteRequest{SQL: tc.sql})
		ex.Close()
		if err != nil || res.Error != nil {
			t.Fatalf("%s: %v %v", tc.sql, err, res.Error)
		}
		for _, budget := range []int{200, 2000, 8000} {
			s := judge.Sample(res, budget)
			if generator.EstimateTokens(s) > budget || !strings.Contains(s, " of "+tc.total+" rows") {
				t.Errorf("%s, budget %d: %d tokens; head %q", tc.sql, budget, generator.EstimateTokens(s), s[:min(80, len(s))])
			}
		}
	}
}

package chart_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/chart"
)

// BenchmarkFor charts a result of DefaultMaxRows rows (a date and two
// measures: the line chart's fold) and marshals the spec, as a response
// does.
func BenchmarkFor(b *testing.B) {
	res := &text2sql.Result{Columns: []string{"day", "orders", "revenue"}}
	for i := range chart.DefaultMaxRows {
		res.Rows = append(res.Rows, []any{time.Date(2020, 1, 1+i, 0, 0, 0, 0, time.UTC).Format("2006-01-02"), int64(i), float64(i) * 1.5})
	}
	res.RowCount = len(res.Rows)
	var size int
	for b.Loop() {
		s := chart.For(res, chart.Options{})
		out, err := json.Marshal(s)
		require.NoError(b, err)
		size = len(out)
	}
	b.ReportMetric(float64(size), "spec-bytes")
}

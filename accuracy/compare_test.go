package accuracy

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"

	text2sql "github.com/text2sql-go/text2sql"
)

// Floats print as Python's repr prints them, as the official evaluators
// compare them.
func TestPyFloat(t *testing.T) {
	point1, point2 := 0.1, 0.2
	for f, want := range map[float64]string{
		1: "1.0", 1.5: "1.5", 0.0001: "0.0001", 0.00001: "1e-05", 1e16: "1e+16", 1234567890123456: "1234567890123456.0",
		-2.5: "-2.5", point1 + point2: "0.30000000000000004", 1.5e300: "1.5e+300", 123.456: "123.456", math.Inf(1): "inf",
	} {
		assert.Equal(t, want, pyFloat(f), "pyFloat(%v)", f)
	}
}

// SameResult groups candidates as execution accuracy would: columns in
// any order, numbers to 12 digits; a failed result is never the same.
func TestSameResult(t *testing.T) {
	r := func(rows ...[]any) *text2sql.Result {
		return &text2sql.Result{Columns: []string{"a", "b"}, Rows: rows, RowCount: len(rows)}
	}
	assert.True(t, SameResult(r([]any{"x", 1}, []any{"y", 2}), r([]any{2, "y"}, []any{1, "x"})))
	assert.True(t, SameResult(r([]any{0.1 + 0.2, 1}), r([]any{0.3, int64(1)})))
	assert.False(t, SameResult(r([]any{"x", 1}), r([]any{"x", 2})))
	assert.False(t, SameResult(r([]any{"x", 1}), r([]any{"x", 1}, []any{"x", 1})))
	failed := r()
	failed.Error = &text2sql.SQLError{Kind: text2sql.KindSyntax, Message: "near x"}
	assert.False(t, SameResult(r(), failed))
	assert.False(t, SameResult(nil, r()))
}

package rowbudget

import (
	"fmt"
	"strings"
	"testing"
)

// C5 #32 (langchain#2817): a 5,000 × 8 result handed to a judge or answer
// step with a 2,000-token budget is cut to the budget with an explicit
// "showing N of 5,000 rows" marker, instead of overflowing the context.
func TestC5ResultCutToBudget(t *testing.T) {
	cols := []string{"id", "name", "email", "city", "country", "amount", "created_at", "note"}
	rows := make([][]any, 5000)
	for i := range rows {
		rows[i] = []any{int64(i), fmt.Sprintf("Customer %d", i), fmt.Sprintf("c%d@example.com", i), "Lyon", "France",
			float64(i) * 1.25, "2024-01-02 03:04:05", nil}
	}
	const budget = 2000
	f := Fit(cols, rows, budget, Options{})
	if f.Tokens > budget || EstimateTokens(f.Text) > budget {
		t.Fatalf("%d tokens for a budget of %d", f.Tokens, budget)
	}
	if f.Shown == 0 || f.Shown >= 5000 || f.Total != 5000 {
		t.Fatalf("shown %d of %d", f.Shown, f.Total)
	}
	want := fmt.Sprintf("(showing %d of 5000 rows)", f.Shown)
	if !strings.HasSuffix(f.Text, want) {
		t.Fatalf("no marker %q at the end of:\n…%s", want, f.Text[len(f.Text)-200:])
	}
	if got := strings.Count(f.Text, "\n"); got != f.Shown+1 {
		t.Fatalf("%d lines for %d rows + header + marker", got+1, f.Shown)
	}
	t.Logf("%d of 5000 rows in %d tokens", f.Shown, f.Tokens)
}

func TestFitSmallAndEdges(t *testing.T) {
	f := Fit([]string{"a"}, [][]any{{int64(1)}, {nil}}, 100, Options{})
	if f.Text != "a\n1\nNULL" || f.Shown != 2 {
		t.Fatalf("%q", f.Text)
	}
	// A row cap cut the result: the marker says so even when all fit.
	f = Fit([]string{"a"}, [][]any{{int64(1)}}, 100, Options{Total: 1000})
	if !strings.HasSuffix(f.Text, "(showing 1 of 1000 rows)") {
		t.Fatalf("%q", f.Text)
	}
	// No budget: no rows, still the marker.
	f = Fit([]string{"a"}, [][]any{{int64(1)}}, 0, Options{})
	if f.Shown != 0 || !strings.HasSuffix(f.Text, "(showing 0 of 1 rows)") {
		t.Fatalf("%q", f.Text)
	}
	// Long cells and line breaks are bounded.
	long := strings.Repeat("x", 10000) + "\nDROP TABLE t"
	f = Fit([]string{"a", "b"}, [][]any{{long, []byte{1, 2}}}, 1000, Options{MaxCell: 20})
	if f.Tokens > 1000 || strings.Contains(f.Text, "DROP") || !strings.Contains(f.Text, "<2 bytes>") {
		t.Fatalf("%q", f.Text)
	}
	// Nil inputs do not panic.
	_ = Fit(nil, nil, 10, Options{})
	_ = Fit(nil, [][]any{nil, {}}, 10, Options{Total: -5})
}

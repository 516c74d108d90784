package eval

import (
	"encoding/json"
	"math"
	"math/big"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/accuracy"
)

func res(cols []string, rows ...[]any) *text2sql.Result {
	return &text2sql.Result{Columns: cols, Rows: rows, RowCount: len(rows)}
}

func row(v ...any) []any { return v }

// The C6 cases of ../shared/cases (comparing results) with their right
// values, plus the rules of EVAL_SEMANTICS.md they rest on.
func TestCompareC6(t *testing.T) {
	apple, pear := "apple", "pear"
	point1, point2 := 0.1, 0.2 // variables: Go constant arithmetic is exact
	tests := []struct {
		name       string
		gold, pred *text2sql.Result
		cmp        accuracy.Comparison
		match      bool
		reason     string
	}{
		// C6 #33 (DAMO-ConvAI#177): duplicates count by default; order
		// counts when the gold orders; a set comparison only in bird mode.
		{"33 multiset: extra duplicate", res([]string{"f"}, row(apple), row(pear)), res([]string{"f"}, row(apple), row(apple), row(pear)),
			accuracy.Comparison{Mode: accuracy.ModeSpider}, false, accuracy.ReasonRowCount},
		{"33 ordered gold, other order", res([]string{"f"}, row(apple), row(pear)), res([]string{"f"}, row(pear), row(apple)),
			accuracy.Comparison{Mode: accuracy.ModeSpider, Ordered: true}, false, accuracy.ReasonOrder},
		{"33 bird set mode ignores the duplicate", res([]string{"f"}, row(apple), row(pear)), res([]string{"f"}, row(apple), row(apple), row(pear)),
			accuracy.Comparison{Mode: accuracy.ModeBIRD}, true, ""},
		{"33 bird ignores order", res([]string{"f"}, row(apple), row(pear)), res([]string{"f"}, row(pear), row(apple)),
			accuracy.Comparison{Mode: accuracy.ModeBIRD}, true, ""},
		{"33 strict duplicate", res([]string{"f"}, row(apple), row(pear)), res([]string{"f"}, row(apple), row(apple), row(pear)),
			accuracy.Comparison{Mode: accuracy.ModeStrict}, false, accuracy.ReasonRowCount},
		// C6 #34 (DAMO-ConvAI PR#162, unitxt PR#1702): columns swapped.
		{"34 spider accepts a column permutation", res([]string{"price", "user"}, row(int64(10), "a"), row(int64(20), "b")),
			res([]string{"user", "price"}, row("a", int64(10)), row("b", int64(20))), accuracy.Comparison{Mode: accuracy.ModeSpider}, true, ""},
		{"34 strict refuses it", res([]string{"price", "user"}, row(int64(10), "a"), row(int64(20), "b")),
			res([]string{"user", "price"}, row("a", int64(10)), row("b", int64(20))), accuracy.Comparison{Mode: accuracy.ModeStrict}, false, accuracy.ReasonColumnOrder},
		{"34 bird refuses it", res([]string{"price", "user"}, row(int64(10), "a"), row(int64(20), "b")),
			res([]string{"user", "price"}, row("a", int64(10)), row("b", int64(20))), accuracy.Comparison{Mode: accuracy.ModeBIRD}, false, accuracy.ReasonColumnOrder},
		// C6 #35 (spider#31).
		{"35a unordered gold, rows in another order", res([]string{"x"}, row(int64(1)), row(int64(2))), res([]string{"x"}, row(int64(2)), row(int64(1))),
			accuracy.Comparison{Mode: accuracy.ModeSpider}, true, ""},
		{"35b every column compared (MAX vs AVG)", res([]string{"name", "max", "count"}, row("x", int64(3), int64(2))),
			res([]string{"name", "avg", "count"}, row("x", 2.0, int64(2))), accuracy.Comparison{Mode: accuracy.ModeSpider}, false, accuracy.ReasonValues},

		// Value equality is Python's.
		{"1 == 1.0", res(nil, row(int64(1))), res(nil, row(1.0)), accuracy.Comparison{Mode: accuracy.ModeSpider}, true, ""},
		{"'1' != 1", res(nil, row("1")), res(nil, row(int64(1))), accuracy.Comparison{Mode: accuracy.ModeSpider}, false, accuracy.ReasonValues},
		{"NULL == NULL", res(nil, row(nil)), res(nil, row(nil)), accuracy.Comparison{Mode: accuracy.ModeStrict}, true, ""},
		{"case-sensitive text", res(nil, row("Paris")), res(nil, row("paris")), accuracy.Comparison{Mode: accuracy.ModeSpider}, false, accuracy.ReasonValues},
		{"no float tolerance by default", res(nil, row(0.3)), res(nil, row(point1+point2)), accuracy.Comparison{Mode: accuracy.ModeSpider}, false, accuracy.ReasonValues},
		{"12 digits of tolerance", res(nil, row(0.3)), res(nil, row(point1+point2)), accuracy.Comparison{Mode: accuracy.ModeSpider, Digits: 12}, true, ""},
		{"tolerance never equates distinct values", res(nil, row(0.3)), res(nil, row(0.31)), accuracy.Comparison{Mode: accuracy.ModeSpider, Digits: 12}, false, accuracy.ReasonValues},
		{"decimal json.Number vs float", res(nil, row(json.Number("2.5"))), res(nil, row(2.5)), accuracy.Comparison{Mode: accuracy.ModeStrict}, true, ""},
		{"big.Rat vs int", res(nil, row(big.NewRat(6, 2))), res(nil, row(int64(3))), accuracy.Comparison{Mode: accuracy.ModeStrict}, true, ""},
		{"uint8 vs int64", res(nil, row(uint8(7))), res(nil, row(int64(7))), accuracy.Comparison{Mode: accuracy.ModeStrict}, true, ""},
		{"-0.0 == 0", res(nil, row(math.Copysign(0, -1))), res(nil, row(int64(0))), accuracy.Comparison{Mode: accuracy.ModeStrict}, true, ""},
		{"bytes != text", res(nil, row([]byte("a"))), res(nil, row("a")), accuracy.Comparison{Mode: accuracy.ModeStrict}, false, accuracy.ReasonValues},

		// Empty results.
		{"both empty, different column counts (spider)", res([]string{"a"}), res([]string{"a", "b"}), accuracy.Comparison{Mode: accuracy.ModeSpider}, true, ""},
		{"both empty (bird)", res([]string{"a"}), res([]string{"a", "b"}), accuracy.Comparison{Mode: accuracy.ModeBIRD}, true, ""},
		{"both empty, different column counts (strict)", res([]string{"a"}), res([]string{"a", "b"}), accuracy.Comparison{Mode: accuracy.ModeStrict}, false, accuracy.ReasonColumnCount},
		{"expected no rows, width unknown (strict)", res(nil), res([]string{"a"}), accuracy.Comparison{Mode: accuracy.ModeStrict}, true, ""},
		{"gold empty, prediction not", res([]string{"a"}), res([]string{"a"}, row(int64(1))), accuracy.Comparison{Mode: accuracy.ModeSpider}, false, accuracy.ReasonRowCount},
		{"column count", res([]string{"a"}, row(int64(1))), res([]string{"a", "b"}, row(int64(1), int64(2))), accuracy.Comparison{Mode: accuracy.ModeSpider}, false, accuracy.ReasonColumnCount},
		{"bird: duplicates ignored both ways", res(nil, row(int64(1)), row(int64(1)), row(int64(2))), res(nil, row(int64(2)), row(int64(1))),
			accuracy.Comparison{Mode: accuracy.ModeBIRD}, true, ""},

		// Permutation with more than 3 columns and an ordered gold.
		{"4 columns permuted, ordered", res(nil, row("a", int64(1), 2.5, nil), row("b", int64(2), 3.5, "z")),
			res(nil, row(nil, 2.5, int64(1), "a"), row("z", 3.5, int64(2), "b")), accuracy.Comparison{Mode: accuracy.ModeSpider, Ordered: true}, true, ""},
		{"4 columns permuted, rows swapped, ordered", res(nil, row("a", int64(1), 2.5, nil), row("b", int64(2), 3.5, "z")),
			res(nil, row("z", 3.5, int64(2), "b"), row(nil, 2.5, int64(1), "a")), accuracy.Comparison{Mode: accuracy.ModeSpider, Ordered: true}, false, accuracy.ReasonOrder},
		// A single permutation must fit every row: swapping per row is not
		// allowed.
		{"no per-row permutation", res(nil, row(int64(1), int64(2)), row(int64(3), int64(4))), res(nil, row(int64(2), int64(1)), row(int64(3), int64(4))),
			accuracy.Comparison{Mode: accuracy.ModeSpider}, false, accuracy.ReasonValues},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := accuracy.Compare(tc.gold, tc.pred, tc.cmp)
			assert.Equal(t, tc.match, d.Match, d.Summary())
			assert.Equal(t, tc.reason, d.Reason, d.Summary())
		})
	}
}

// The Spider evaluator rejects early when the rows, each with its values
// sorted by Python's str(v)+str(type(v)), differ. With mixed int and float
// values that sort differently as text this rejects a pair Python's ==
// would accept; the harness keeps the quirk to give the evaluator's
// numbers.
func TestSpiderQuickRejectQuirk(t *testing.T) {
	// str keys: "1<class 'int'>" > "1.5<class 'float'>" ('<' > '.'), while
	// "1.0<class 'float'>" < "1.5<class 'float'>": the sorted rows differ.
	d := accuracy.Compare(res(nil, row(int64(1), 1.5)), res(nil, row(1.0, 1.5)), accuracy.Comparison{Mode: accuracy.ModeSpider})
	assert.False(t, d.Match, "the evaluator's quick rejection refuses (1, 1.5) vs (1.0, 1.5)")
	// Strict and bird have no such step.
	d = accuracy.Compare(res(nil, row(int64(1), 1.5)), res(nil, row(1.0, 1.5)), accuracy.Comparison{Mode: accuracy.ModeBIRD})
	assert.True(t, d.Match, d.Summary())
}

func TestDiffRowsAndSummary(t *testing.T) {
	d := accuracy.Compare(res([]string{"n"}, row("a"), row("b"), row("c")), res([]string{"n"}, row("a"), row("d")), accuracy.Comparison{Mode: accuracy.ModeSpider})
	assert.False(t, d.Match)
	assert.Equal(t, 2, d.MissingCount)
	assert.Equal(t, 1, d.ExtraCount)
	assert.Len(t, d.Missing, 2)
	require.NotEmpty(t, d.Extra)
	assert.Equal(t, "d", d.Extra[0][0])
	assert.Contains(t, d.Summary(), "2 missing rows, 1 extra row")
	d = accuracy.Compare(res([]string{"a"}, row(int64(1))), res([]string{"a", "b"}, row(int64(1), int64(2))), accuracy.Comparison{Mode: accuracy.ModeStrict})
	assert.Contains(t, d.Summary(), "column mismatch: gold has 1 column, prediction 2 columns")
	// A matching permutation is reported.
	d = accuracy.Compare(res(nil, row(int64(1), "x")), res(nil, row("x", int64(1))), accuracy.Comparison{Mode: accuracy.ModeSpider})
	assert.True(t, d.Match)
	require.Len(t, d.Permutation, 2)
	assert.Equal(t, 1, d.Permutation[0])
}

// Hostile or odd values never panic and compare by their text.
func TestCompareOddValues(t *testing.T) {
	type custom struct{ A int }
	vals := []any{custom{1}, map[string]any{"a": 1}, []any{1}, math.NaN(), math.Inf(-1), float32(1.5), new(big.Float).SetInf(true),
		(*big.Int)(nil), json.Number("x"), true, uint64(math.MaxUint64), "\xff\xfe", []byte{0xff}}
	var rows [][]any
	for _, v := range vals {
		rows = append(rows, []any{v, v, v, v, v})
	}
	for _, m := range accuracy.Modes {
		for _, ordered := range []bool{false, true} {
			d := accuracy.Compare(res(nil, rows...), res(nil, rows...), accuracy.Comparison{Mode: m, Ordered: ordered, Digits: 3})
			assert.True(t, d.Match, "%s: a result matches itself: %s", m, d.Summary())
		}
	}
	_ = accuracy.Compare(nil, nil, accuracy.Comparison{})
	_ = accuracy.Compare(res(nil, row()), res(nil, row(int64(1))), accuracy.Comparison{Mode: accuracy.ModeSpider})
	_ = accuracy.Compare(res(nil, row(int64(1)), row()), res(nil, row(int64(1)), row(int64(2), int64(3))), accuracy.Comparison{Mode: accuracy.ModeSpider})
	// Invalid UTF-8 is dropped in spider mode, as the evaluator's decoder does.
	d := accuracy.Compare(res(nil, row("caf\xffé")), res(nil, row("café")), accuracy.Comparison{Mode: accuracy.ModeSpider, ValidUTF8: true})
	assert.True(t, d.Match, d.Summary())
}

// Many identical columns: the permutation search is bounded.
func TestPermutationLimit(t *testing.T) {
	const n = 10
	g, p := make([]any, n), make([]any, n)
	for i := range g {
		g[i], p[i] = int64(1), int64(1)
	}
	g2, p2 := append([]any(nil), g...), append([]any(nil), p...)
	g2[0], p2[n-1] = int64(2), int64(3) // never equal
	d := accuracy.Compare(res(nil, g, g2), res(nil, p, p2), accuracy.Comparison{Mode: accuracy.ModeSpider})
	assert.False(t, d.Match)
}

func TestParseMode(t *testing.T) {
	for _, s := range []string{"spider", "BIRD", " strict "} {
		_, err := accuracy.ParseMode(s)
		assert.NoError(t, err, s)
	}
	_, err := accuracy.ParseMode("set")
	assert.Error(t, err)
}

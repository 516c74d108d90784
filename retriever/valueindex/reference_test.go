package valueindex

import (
	"cmp"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// referenceIndex is Builder.Index as it was before the parallel
// normalising and sorting and the numbered trigrams: one sort, maps
// throughout. Index must build the same index.
func referenceIndex(b *Builder) *Index {
	ix := &Index{cols: slices.Clone(b.cols), vals: slices.Clone(b.vals), postings: map[gram]span{}}
	norms := make([]string, len(b.vals))
	for _, e := range b.pairs {
		if norms[e.val] == "" {
			n := normalize(b.vals[e.val])
			if n == b.vals[e.val] {
				n = b.vals[e.val] // stored once
			}
			norms[e.val] = n
		}
	}
	// Sorted with their keys beside them: the comparisons read no other
	// memory.
	ks := make([]keyed, len(b.pairs)) // keyed as index.go has it
	for i, e := range b.pairs {
		ks[i] = keyed{norms[e.val], e}
	}
	slices.SortFunc(ks, func(a, c keyed) int {
		return cmp.Or(strings.Compare(a.key, c.key), cmp.Compare(a.e.col, c.e.col), cmp.Compare(a.e.val, c.e.val))
	})
	ix.setEntries(ks) // the step the two share: what differs is how ks is made and sorted
	var gs []gram
	counts := map[gram]uint32{}
	for _, key := range ix.keys {
		for _, g := range grams(gs[:0], key) {
			counts[g]++
		}
	}
	total := uint32(0)
	for g, n := range counts {
		ix.postings[g] = span{off: total}
		total += n
	}
	ix.arena = make([]uint32, total)
	for k, key := range ix.keys {
		gs = grams(gs[:0], key)
		for _, g := range gs {
			sp := ix.postings[g]
			ix.arena[sp.off+sp.n] = uint32(k)
			sp.n++
			ix.postings[g] = sp
		}
	}
	used := map[uint32]bool{}
	for _, e := range b.pairs {
		used[e.col] = true
	}
	ix.stats = Stats{Columns: len(used), Values: len(b.pairs), Keys: len(ix.keys), Bytes: b.bytes, Grams: len(ix.postings), Skipped: slices.Clone(b.skip)}
	ix.stats.Full = b.full
	for ci := range b.cols {
		if b.trunc[uint32(ci)] {
			ix.stats.Truncated = append(ix.stats.Truncated, b.cols[ci].table+"."+b.cols[ci].name)
		}
	}
	return ix
}

// sameIndex requires a and b to hold the same values, keys, entries,
// postings and statistics (the arena's layout may differ: only each
// trigram's keys count).
func sameIndex(t *testing.T, want, got *Index) {
	t.Helper()
	require.Equal(t, want.cols, got.cols, "columns")
	require.Equal(t, want.vals, got.vals, "values")
	require.Equal(t, want.keys, got.keys, "keys")
	require.Equal(t, want.keyStart, got.keyStart, "key starts")
	require.Equal(t, want.entries, got.entries, "entries")
	require.Equal(t, want.stats, got.stats, "stats")
	require.Equal(t, slices.Sorted(maps.Keys(want.postings)), slices.Sorted(maps.Keys(got.postings)), "trigrams")
	for g := range want.postings {
		require.Equal(t, want.posting(g), got.posting(g), "posting of %x", uint64(g))
	}
	require.Len(t, got.arena, len(want.arena), "arena")
}

// referenceValues adds n values to b over columns of perColumn each
// (referenceAdds).
func referenceValues(b *Builder, n, perColumn int) {
	referenceAdds(func(table, col string, vals ...string) { b.Add(table, col, vals...) }, n, perColumn)
}

// referenceAdds calls add with n values over columns of perColumn each,
// with values repeated within a column and across columns, columns added
// in several calls, accents, non-Latin scripts and punctuation.
func referenceAdds(add func(table, col string, vals ...string), n, perColumn int) {
	words := strings.Fields("North Harbor São Zürich Ōsaka 東京 Kraków O'Brien hotel guest airport lounge Α΄ ÆSIR straße ĳssel x")
	next := rand.New(rand.NewPCG(3, 0)).IntN // deterministic, no global state
	for c := 0; c*perColumn < n; c++ {
		var vals []string
		for range perColumn {
			vals = append(vals, fmt.Sprintf("%s %s-%d", words[next(len(words))], words[next(len(words))], next(50)))
		}
		table, col := fmt.Sprintf("t%d", c/4), fmt.Sprintf("c%d", c%4)
		add(table, col, vals[:perColumn/2]...)
		add(fmt.Sprintf("t%d", next(c+1)/4), "c0", vals[:min(3, perColumn)]...) // the same values in another column
		add(table, col, vals[perColumn/2:]...)
		add(table, col, vals[0]) // again
	}
}

func TestIndexMatchesReference(t *testing.T) {
	for _, c := range []struct{ n, perColumn int }{{0, 1}, {1, 1}, {100, 7}, {parallelSort + 1, 20}, {100_000, 20}} {
		var b Builder
		referenceValues(&b, c.n, c.perColumn)
		sameIndex(t, referenceIndex(&b), b.Index())
	}
	b, err := NewBuilder(Options{MaxPerColumn: 5, MaxValues: 10_000})
	require.NoError(t, err)
	referenceValues(b, 60_000, 20)
	want, got := referenceIndex(b), b.Index()
	require.True(t, got.stats.Full)
	require.NotEmpty(t, got.stats.Truncated)
	sameIndex(t, want, got)
}

// TestAddKeepsEachPairOnce: Add keeps every distinct (column, value) of
// the values it keeps once, whichever call added it and in how many
// columns it is.
func TestAddKeepsEachPairOnce(t *testing.T) {
	var b Builder
	referenceValues(&b, 5_000, 20)
	type pair struct{ col, val string }
	seen := map[pair]bool{}
	for _, e := range b.pairs {
		c := b.cols[e.col]
		p := pair{c.table + "." + c.name, b.vals[e.val]}
		require.False(t, seen[p], "%v twice", p)
		seen[p] = true
	}
	// No bound is reached: every distinct pair added is kept.
	want := map[pair]bool{}
	referenceAdds(func(table, col string, vals ...string) {
		for _, v := range vals {
			want[pair{table + "." + col, v}] = true
		}
	}, 5_000, 20)
	require.Equal(t, want, seen)
	require.Equal(t, len(want), b.Index().Len())
}

// referenceGrams is grams as it was before its byte loop.
func referenceGrams(dst []gram, s string) []gram {
	var w [3]rune
	n := 0
	push := func(r rune) {
		w[0], w[1], w[2] = w[1], w[2], r
		n++
		if n < 3 {
			return
		}
		g := gram(w[0])<<42 | gram(w[1])<<21 | gram(w[2])
		for _, x := range dst {
			if x == g {
				return
			}
		}
		dst = append(dst, g)
	}
	push(' ')
	for _, r := range s {
		push(r)
	}
	push(' ')
	return dst
}

func FuzzGrams(f *testing.F) {
	for _, s := range []string{"", "a", "uk", "aaaa", "zürich", "東京 x", "\xff\xfe", "o brien jr"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		require.Equal(t, referenceGrams(nil, s), grams(nil, s), "%q", s)
		require.Equal(t, referenceGrams([]gram{1, 2}, s), grams([]gram{1, 2}, s), "%q after two", s)
	})
}

package valueindex

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

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
		return cmp.Or(cmp.Compare(len(a.key), len(c.key)), strings.Compare(a.key, c.key), cmp.Compare(a.e.col, c.e.col), cmp.Compare(a.e.val, c.e.val))
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

// noted is a key fuzzy noted: its number, score and kind.
type noted struct {
	k     uint32
	score float64
	whole bool
}

// referenceFuzzy is fuzzy as it was before the keys were numbered by
// length, without the cut-off it had then (grams whose rarest trigrams'
// postings held more than 4,000 keys were matched exactly only): prefix
// filtering over the whole postings, counted in a map, each candidate's
// other trigrams counted from its own.
func (ix *Index) referenceFuzzy(g string, n int, gs []gram, threshold float64) []noted {
	need := int(math.Ceil(minContainment * float64(len(gs))))
	slices.SortFunc(gs, func(a, b gram) int {
		return cmp.Or(cmp.Compare(ix.postings[a].n, ix.postings[b].n), cmp.Compare(a, b))
	})
	prefix := gs[:len(gs)-need+1]
	counts := map[uint32]int{}
	for _, x := range prefix {
		for _, k := range ix.posting(x) {
			counts[k]++
		}
	}
	glen := len(g)
	near := func(klen int) bool { return float64(abs(klen-glen)) <= (1-threshold)*float64(max(klen, glen)) }
	var kg []gram
	for k := range counts {
		kg = grams(kg[:0], ix.keys[k])
		for _, x := range gs[len(prefix):] {
			if slices.Contains(kg, x) {
				counts[k]++
			}
		}
	}
	var out, partials []noted
	for k, c := range counts {
		key := ix.keys[k]
		if c < need {
			continue
		}
		if near(len(key)) {
			if score := ratio(g, key); score >= threshold {
				out = append(out, noted{k, score, true})
				continue
			}
		}
		if len(key) > glen {
			if p := partialWeight * windowRatio(g, n, key); p >= threshold {
				partials = append(partials, noted{k, p, false})
			}
		}
	}
	if len(partials) <= maxPartial {
		out = append(out, partials...)
	}
	return out
}

// fuzzyGrams returns grams as questions hold them: runs of one to three
// words of keys of ix, some with a letter dropped, changed or added.
func fuzzyGrams(ix *Index, n int) []string {
	r := rand.New(rand.NewPCG(5, 0)) // deterministic, no global state
	var out []string
	for len(out) < n {
		ws := strings.Split(ix.keys[r.IntN(len(ix.keys))], " ")
		i := r.IntN(len(ws))
		g := []byte(strings.Join(ws[i:min(len(ws), i+1+r.IntN(maxGramWords))], " "))
		p := r.IntN(len(g))
		switch r.IntN(4) {
		case 1:
			g = slices.Delete(g, p, p+1)
		case 2:
			g[p] = 'a' + byte(r.IntN(26))
		case 3:
			g = slices.Insert(g, p, 'e')
		}
		if s := normalize(string(g)); utf8.RuneCountInString(s) >= minFuzzyRunes && !digits(s) {
			out = append(out, s)
		}
	}
	return out
}

func sortNoted(ns []noted) []noted {
	slices.SortFunc(ns, func(a, b noted) int { return cmp.Compare(a.k, b.k) })
	return ns
}

// TestFuzzyMatchesReference: with a budget that reaches every length,
// fuzzy notes what the exhaustive search notes, and leaves its scratch
// counts zero.
func TestFuzzyMatchesReference(t *testing.T) {
	var b Builder
	referenceValues(&b, 20_000, 20)
	ix := b.Index()
	sc := &scratch{counts: make([]uint8, len(ix.keys))}
	matched := 0
	for _, g := range fuzzyGrams(ix, 1_000) {
		n := len(strings.Fields(g))
		want := sortNoted(ix.referenceFuzzy(g, n, grams(nil, g), DefaultThreshold))
		var got []noted
		ix.fuzzy(g, n, grams(nil, g), sc, DefaultThreshold, math.MaxInt, func(k uint32, score float64, _ string, _ int, whole bool) {
			got = append(got, noted{k, score, whole})
		})
		require.Equal(t, want, sortNoted(got), "%q", g)
		if len(want) > 0 {
			matched++
		}
	}
	require.Equal(t, make([]uint8, len(ix.keys)), sc.counts)
	require.Greater(t, matched, 250, "grams that match something") // 306
}

// TestFuzzyBounded: on an index of 500,000 values fuzzy reads at most
// maxScan posting entries a gram, and searches every gram.
func TestFuzzyBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("builds an index of 500,000 values")
	}
	var b Builder
	referenceValues(&b, 500_000, 20)
	ix := b.Index()
	sc := &scratch{counts: make([]uint8, len(ix.keys))}
	gs := fuzzyGrams(ix, 2_000)
	searched := 0
	for _, g := range gs {
		read := ix.fuzzy(g, len(strings.Fields(g)), grams(nil, g), sc, DefaultThreshold, maxScan, func(uint32, float64, string, int, bool) {})
		require.LessOrEqual(t, read, maxScan, "%q", g)
		if read > 0 {
			searched++
		}
	}
	require.Equal(t, len(gs), searched, "every gram searched")
}

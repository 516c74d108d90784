// Package valueindex is an index of the cell values of a database's text
// columns, for linking the values a question names ("singers from
// France", "races Lewis Hamilton took part in") to the columns that hold
// them, as CHESS (Talaei et al., "CHESS: Contextual Harnessing for
// Efficient SQL Synthesis", 2024) and CodeS (Li et al., "CodeS: Towards
// Building Open-source Language Models for Text-to-SQL", SIGMOD 2024) do.
//
// Build reads the distinct values of the text columns of a database
// through database/sql (SQLite, PostgreSQL, MySQL), bounded per column and
// in total, skipping the columns knowledge.ValueColumn rejects (keys,
// identifiers, secrets, contact details). Values are normalised (lower
// case, accents folded, punctuation to single spaces), numbered by length
// and indexed by their padded character trigrams in an inverted index.
// Index.Match takes the word 1–3-grams of a question, counts the trigrams
// each shares with the values of the lengths nearest its own (the count
// filter of Gravano et al., "Approximate String Joins in a Database
// (Almost) for Free", VLDB 2001, with its length filter as the order in
// which values are read, so that the entries read are bounded) and
// confirms the candidates by Levenshtein similarity.
//
// Values are data. Hits carry them verbatim; callers show them quoted as
// SQL literals (knowledge.Literal), never as instructions.
package valueindex

import (
	"cmp"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/bm25"
	"github.com/text2sql-go/text2sql/knowledge"
)

// Bounds of an index, the defaults of Options.
const (
	// DefaultMaxPerColumn is the most values read from one column, its
	// most frequent first. The largest text column of the Spider dev
	// databases (world_1's city.Name) has 4,001 distinct values; 10,000
	// keeps every Spider column whole and, of bigger ones, the most
	// frequent values, those a question is likeliest to name, at 1.6 MB
	// for a 1,000,000-row table (BenchmarkBuildMillionRows).
	DefaultMaxPerColumn = 10_000
	// DefaultMaxValues is the most values of one index, all columns
	// together: about 160 MB of memory at the measured 160 bytes per
	// distinct value of 17 characters (the value, its normalised form,
	// 19 trigram postings of 4 bytes, its entry; BenchmarkIndex1M), a
	// third of the 500 MB issue 14 allows a 10,000-table catalog.
	DefaultMaxValues = 1_000_000
	// DefaultMaxBytes bounds the bytes of the values kept, all columns
	// together, so that long values cannot exceed the memory
	// DefaultMaxValues allows for short ones.
	DefaultMaxBytes = 64 << 20
	// DefaultThreshold is the score from which Match reports a value.
	// With it a one-letter typo in a word of eight ("Hamiltn" for
	// "Hamilton", 0.875) matches, and a 4-letter word with one wrong
	// letter (0.75) does not.
	DefaultThreshold = 0.8
	// DefaultMaxHits bounds the hits of one Match.
	DefaultMaxHits = 10
)

// Matching constants, chosen on the Spider dev questions whose gold SQL
// compares a column with a string literal (valueindex_test.go).
const (
	// maxGramWords is the longest run of question words matched: names
	// of people, places and titles are mostly one to three words.
	maxGramWords = 3
	// minGramRunes is the shortest gram matched, in runes (spaces
	// included): two-letter grams ("no", "uk") are too ambiguous.
	minGramRunes = 3
	// minFuzzyRunes is the shortest gram matched by similarity rather
	// than only exactly: one wrong letter in four is a different word.
	minFuzzyRunes = 5
	// minContainment is the share of a gram's trigrams a value must hold
	// to be compared by edit distance: "hamiltn" and "lewis hamilton"
	// share 5 of the gram's 7.
	minContainment = 0.5
	// partialWeight scales the score of a gram that matches a run of
	// words inside a longer value ("hamilton" in "lewis hamilton"): a
	// whole-word exact match (0.85) passes DefaultThreshold, a misspelt
	// one does not.
	partialWeight = 0.85
	// maxScan bounds the posting entries the fuzzy search of one gram
	// reads, so that its cost does not grow with the index. It reads the
	// keys of the gram's own length first, then those one byte shorter
	// and longer, and so on while the entries stay within the bound: the
	// length difference is the least edit distance, so the keys left out
	// are the furthest (and, of keys holding the gram, the longest, which
	// name it least). Below the bound nothing is left out; a gram whose
	// own length alone holds more entries is matched exactly only (none
	// of 2,000 grams of 500,000 values, TestFuzzyBounded). Match takes
	// p50 0.11–0.21 ms, p95 0.33–0.52 ms of CPU on 1,000,000 values
	// (BenchmarkMatch1M).
	maxScan = 1 << 13
	// maxPerColumn bounds the hits of one column in one Match.
	maxPerColumn = 3
	// maxPartial bounds the values a gram may match as a run of words
	// inside them: a word inside more values ("region" in "Capital
	// Region", "Special Administrative Region of China", …) names none of
	// them, so it matches none partially.
	maxPartial = 3
)

// Hit is a value of the index that a question names.
type Hit struct {
	Table  string  `json:"table"`  // the table, as schema.Table.QualifiedName spells it
	Column string  `json:"column"` // the column, as the schema spells it
	Value  string  `json:"value"`  // the value as stored
	Score  float64 `json:"score"`  // in [0, 1]: 1 for an exact match of the normalised forms
	// Words are the question's words that matched, normalised.
	Words string `json:"words"`
	// Whole reports whether Words match the whole value, exactly or
	// within edit distance, rather than a run of words inside it.
	Whole bool `json:"whole"`
}

// Stats describe an index.
type Stats struct {
	Columns int   // columns with at least one value
	Values  int   // values (a value in two columns counts twice)
	Keys    int   // distinct normalised values
	Bytes   int64 // bytes of the distinct values kept
	Grams   int   // distinct trigrams
	// Truncated lists the columns whose values were cut by a bound, as
	// "table.column".
	Truncated []string
	// Full reports that a total bound (MaxValues, MaxBytes) was reached:
	// the values added after it, and the columns Read did not reach, are
	// not in the index.
	Full bool
	// Skipped lists the columns whose values could not be read, as
	// "table.column: error".
	Skipped []string
}

type column struct{ table, name string }

// span is a trigram's keys: arena[off : off+n].
type span struct{ off, n uint32 }

// posting returns the keys holding g, ascending.
func (ix *Index) posting(g gram) []uint32 {
	sp := ix.postings[g]
	return ix.arena[sp.off : sp.off+sp.n]
}

type entry struct {
	col uint32 // index into Index.cols
	val uint32 // index into Index.vals
}

// Index is an immutable value index, safe for concurrent use. The zero
// value and nil are empty indexes.
type Index struct {
	cols []column
	vals []string // distinct values as stored
	// keys are the distinct normalised values, ordered by length in
	// bytes, then bytewise (compareKeys): a key's number orders it by
	// length, so a posting's keys of one length are adjacent.
	keys []string
	// lenStart[n] is the first key of n bytes or more, for n up to one
	// past the longest key.
	lenStart []uint32
	// keyStart[k]:keyStart[k+1] are key k's entries.
	keyStart []uint32
	entries  []entry
	postings map[gram]span // trigram → its keys in arena
	arena    []uint32      // the keys of each trigram, ascending
	stats    Stats
	scratch  sync.Pool // of *scratch, for Match
}

// Builder collects values for an index. The zero value is ready with the
// default bounds; use NewBuilder for others. Not safe for concurrent use.
type Builder struct {
	opts   Options
	cols   []column
	colIdx map[column]uint32
	vals   []string
	valIdx map[string]uint32 // interned values
	// valCol[v] is the first column value v was added to; seen holds its
	// other columns, so that a value of one column (most) costs no entry.
	valCol []uint32
	seen   map[entry]bool
	pairs  []entry
	perCol []int  // values per column
	trunc  []bool // columns cut by a bound
	bytes  int64
	full   bool // a total bound was reached
	skip   []string
}

// NewBuilder returns a builder with opts' bounds (zero fields: the
// defaults). Errors wrap text2sql.ErrInvalidConfig for negative bounds.
func NewBuilder(opts Options) (*Builder, error) {
	if opts.MaxPerColumn < 0 || opts.MaxValues < 0 || opts.MaxBytes < 0 || opts.MaxLength < 0 {
		return nil, fmt.Errorf("%w: valueindex: negative bound in Options", text2sql.ErrInvalidConfig)
	}
	return &Builder{opts: opts.withDefaults()}, nil
}

// Add adds values of table.column and reports whether the total bounds
// still leave room (false: the index is full, further values are not
// kept). Values that knowledge.KeepValue rejects (blank, longer than
// MaxLength, holding control characters) or that normalise to nothing
// are dropped; a column's values past MaxPerColumn too, and the column is
// listed in Stats.Truncated. A value added twice to one column is kept
// once.
func (b *Builder) Add(table, col string, values ...string) bool {
	b.init()
	c := column{table, col}
	ci, ok := b.colIdx[c]
	if !ok {
		ci = uint32(len(b.cols))
		b.colIdx[c] = ci
		b.cols = append(b.cols, c)
		b.perCol = append(b.perCol, 0)
		b.trunc = append(b.trunc, false)
	}
	for _, v := range values {
		if !b.room() {
			b.trunc[ci] = true
			return false
		}
		if b.perCol[ci] >= b.opts.MaxPerColumn {
			b.trunc[ci] = true
			return true
		}
		if !knowledge.KeepValue(v, b.opts.MaxLength) || strings.IndexFunc(v, isWordRune) < 0 {
			continue
		}
		vi, ok := b.valIdx[v]
		if !ok {
			if b.bytes+int64(len(v)) > int64(b.opts.MaxBytes) {
				b.trunc[ci] = true
				b.full = true
				return false
			}
			vi = uint32(len(b.vals))
			v = strings.Clone(v) // not the driver's buffer
			b.valIdx[v] = vi
			b.vals = append(b.vals, v)
			b.valCol = append(b.valCol, ci)
			b.bytes += int64(len(v))
		} else {
			e := entry{ci, vi}
			if b.valCol[vi] == ci || b.seen[e] {
				continue
			}
			b.seen[e] = true
		}
		b.pairs = append(b.pairs, entry{ci, vi})
		b.perCol[ci]++
	}
	return b.room()
}

// init makes the zero Builder ready.
func (b *Builder) init() {
	if b.colIdx == nil {
		if b.opts.MaxValues == 0 {
			b.opts = b.opts.withDefaults()
		}
		b.colIdx, b.valIdx, b.seen = map[column]uint32{}, map[string]uint32{}, map[entry]bool{}
	}
}

// room reports whether the total bounds leave room for another value.
func (b *Builder) room() bool {
	b.full = b.full || len(b.pairs) >= b.opts.MaxValues || b.bytes >= int64(b.opts.MaxBytes)
	return !b.full
}

// Index builds the index of the values added so far. The builder can go
// on collecting; each call builds anew. It normalises the values and
// sorts them by their normalised form, each over GOMAXPROCS goroutines,
// and lays the trigram postings out in one array (two passes over the
// keys' trigrams: count, then fill, with the trigrams of ASCII runes
// numbered through a table rather than a map), so the cost is O(n log n)
// in the values and the postings carry no slack.
func (b *Builder) Index() *Index {
	ix := &Index{cols: slices.Clone(b.cols), vals: slices.Clone(b.vals)}
	norms := make([]string, len(b.vals))
	// Every value is in a pair: Add makes one for each new value.
	inParallel(len(b.vals), func(lo, hi int) {
		for v := lo; v < hi; v++ {
			n := normalize(b.vals[v])
			if n == b.vals[v] {
				n = b.vals[v] // stored once
			}
			norms[v] = n
		}
	})
	// Sorted with their keys beside them: the comparisons read no other
	// memory. The pairs are distinct, so the order is total and the
	// result that of one sort.
	ks := make([]keyed, len(b.pairs))
	for i, e := range b.pairs {
		ks[i] = keyed{norms[e.val], e}
	}
	sortKeyed(ks)
	ix.setEntries(ks)
	ix.postings, ix.arena = postings(ix.keys)
	used := make([]bool, len(b.cols))
	columns := 0
	for _, e := range b.pairs {
		if !used[e.col] {
			used[e.col] = true
			columns++
		}
	}
	ix.stats = Stats{Columns: columns, Values: len(b.pairs), Keys: len(ix.keys), Bytes: b.bytes, Grams: len(ix.postings), Skipped: slices.Clone(b.skip)}
	ix.stats.Full = b.full
	for ci := range b.cols {
		if b.trunc[ci] {
			ix.stats.Truncated = append(ix.stats.Truncated, b.cols[ci].table+"."+b.cols[ci].name)
		}
	}
	return ix
}

// keyed is a pair of the index with its normalised value.
type keyed struct {
	key string
	e   entry
}

func compareKeyed(a, c keyed) int {
	return cmp.Or(compareKeys(a.key, c.key), cmp.Compare(a.e.col, c.e.col), cmp.Compare(a.e.val, c.e.val))
}

// compareKeys orders keys by length in bytes, then bytewise.
func compareKeys(a, b string) int {
	return cmp.Or(cmp.Compare(len(a), len(b)), strings.Compare(a, b))
}

// sortKeyed sorts ks by compareKeyed: halves sorted concurrently and
// merged when there are GOMAXPROCS to spare and at least parallelSort.
func sortKeyed(ks []keyed) {
	if len(ks) < parallelSort || runtime.GOMAXPROCS(0) < 2 {
		slices.SortFunc(ks, compareKeyed)
		return
	}
	mid := len(ks) / 2
	var wg sync.WaitGroup
	wg.Go(func() { slices.SortFunc(ks[:mid], compareKeyed) })
	slices.SortFunc(ks[mid:], compareKeyed)
	wg.Wait()
	merged := make([]keyed, 0, len(ks))
	i, j := 0, mid
	for i < mid && j < len(ks) {
		if compareKeyed(ks[j], ks[i]) < 0 {
			merged = append(merged, ks[j])
			j++
		} else {
			merged = append(merged, ks[i])
			i++
		}
	}
	merged = append(append(merged, ks[i:mid]...), ks[j:]...)
	copy(ks, merged)
}

// parallelSort is the fewest pairs sortKeyed sorts in two halves: below
// it (a column's or a small database's values) the sort takes under a
// millisecond.
const parallelSort = 1 << 14

// inParallel calls f on GOMAXPROCS contiguous ranges of [0, n)
// concurrently, or on [0, n) alone when n is under parallelSort.
func inParallel(n int, f func(lo, hi int)) {
	parts := 1
	if n >= parallelSort {
		parts = runtime.GOMAXPROCS(0)
	}
	var wg sync.WaitGroup
	for p := range parts {
		wg.Go(func() { f(p*n/parts, (p+1)*n/parts) })
	}
	wg.Wait()
}

// asciiGrams is the number of trigrams of ASCII runes (below
// utf8.RuneSelf, 7 bits each): postings numbers them through a table of
// this size, the rest through a map.
const asciiGrams = 1 << 21

// postings returns the trigram postings of keys: each trigram's keys,
// ascending, in one array.
func postings(keys []string) (map[gram]span, []uint32) {
	// Trigrams are numbered in order of first appearance: ids[a] (a the
	// three 7-bit runes) or other[g] is the number plus one (0: not seen
	// yet).
	ids := make([]uint32, asciiGrams)
	other := map[gram]uint32{}
	var (
		byID   []gram   // number → trigram
		counts []uint32 // number → keys holding it
	)
	number := func(g gram) uint32 {
		if r0, r1, r2 := g>>42, g>>21&(1<<21-1), g&(1<<21-1); r0|r1|r2 < utf8.RuneSelf {
			a := r0<<14 | r1<<7 | r2
			if ids[a] == 0 {
				byID = append(byID, g)
				counts = append(counts, 0)
				ids[a] = uint32(len(byID))
			}
			return ids[a] - 1
		}
		n, ok := other[g]
		if !ok {
			byID = append(byID, g)
			counts = append(counts, 0)
			n = uint32(len(byID))
			other[g] = n
		}
		return n - 1
	}
	var gs []gram
	for _, key := range keys {
		for _, g := range grams(gs[:0], key) {
			counts[number(g)]++
		}
	}
	pos := make([]uint32, len(byID)) // number → where its next key goes
	total := uint32(0)
	spans := make(map[gram]span, len(byID))
	for n, g := range byID {
		spans[g] = span{off: total, n: counts[n]}
		pos[n] = total
		total += counts[n]
	}
	arena := make([]uint32, total)
	for k, key := range keys {
		gs = grams(gs[:0], key)
		for _, g := range gs {
			n := number(g)
			arena[pos[n]] = uint32(k)
			pos[n]++
		}
	}
	return spans, arena
}

// Stats returns what the index holds.
func (ix *Index) Stats() Stats {
	if ix == nil {
		return Stats{}
	}
	s := ix.stats
	s.Truncated, s.Skipped = slices.Clone(s.Truncated), slices.Clone(s.Skipped)
	return s
}

// Len is the number of values indexed (a value in two columns counts
// twice).
func (ix *Index) Len() int {
	if ix == nil {
		return 0
	}
	return len(ix.entries)
}

// MatchOptions tune Match. The zero value means the defaults.
type MatchOptions struct {
	// Threshold is the lowest score reported, in (0, 1]; 0 means
	// DefaultThreshold.
	Threshold float64
	// MaxHits bounds the hits returned; 0 means DefaultMaxHits.
	MaxHits int
}

// Match returns the values the question names, best first: for each run
// of one to three adjacent words of the question (not starting or ending
// with a stop word, at least three characters), the values whose
// normalised form equals it (score 1), or is within edit distance of it
// (score 1 − distance / length, in bytes, grams of five characters or
// more), or
// holds it as a run of whole words (0.85 × that similarity; only when at
// most three values hold it so). The similar values are searched among
// those of the lengths nearest the words', as many as a fixed number of
// index entries reaches, so that Match's cost does not grow with the
// index. A value keeps its best score. Hits are
// ordered whole-value matches first, then by score times the length of
// the words matched (a near match of two words before an exact one of
// one), then score, then table, column and value in byte order, so the order is
// deterministic. At most three
// values per column and opts.MaxHits in all; scores under opts.Threshold
// are left out. A nil or empty index matches nothing.
func (ix *Index) Match(question string, opts MatchOptions) []Hit {
	if ix == nil || len(ix.keys) == 0 {
		return nil
	}
	threshold := opts.Threshold
	if threshold <= 0 || threshold > 1 || math.IsNaN(threshold) {
		threshold = DefaultThreshold
	}
	maxHits := cmp.Or(max(opts.MaxHits, 0), DefaultMaxHits)
	ws := words(question)
	type best struct {
		score float64
		words string
		n     int
		whole bool
	}
	found := map[entry]best{}
	note := func(k uint32, score float64, g string, n int, whole bool) {
		for _, e := range ix.entries[ix.keyStart[k]:ix.keyStart[k+1]] {
			if b, ok := found[e]; !ok || score > b.score || (score == b.score && n > b.n) {
				found[e] = best{score, g, n, whole}
			}
		}
	}
	var gs []gram
	sc, _ := ix.scratch.Get().(*scratch)
	if sc == nil {
		sc = &scratch{counts: make([]uint8, len(ix.keys))}
	}
	for n := 1; n <= maxGramWords; n++ {
		for i := 0; i+n <= len(ws); i++ {
			if bm25.IsStopWord(ws[i]) || bm25.IsStopWord(ws[i+n-1]) {
				continue
			}
			g := strings.Join(ws[i:i+n], " ")
			size := utf8.RuneCountInString(g)
			if size < minGramRunes {
				continue
			}
			if k, ok := ix.lookup(g); ok {
				note(k, 1, g, n, true)
			}
			if size < minFuzzyRunes || digits(g) {
				continue
			}
			gs = grams(gs[:0], g)
			ix.fuzzy(g, n, gs, sc, threshold, maxScan, note)
		}
	}
	ix.scratch.Put(sc)
	hits := make([]Hit, 0, len(found))
	for e, b := range found {
		c := ix.cols[e.col]
		hits = append(hits, Hit{Table: c.table, Column: c.name, Value: ix.vals[e.val], Score: b.score, Words: b.words, Whole: b.whole})
	}
	slices.SortFunc(hits, func(a, b Hit) int {
		return cmp.Or(cmp.Compare(btoi(b.Whole), btoi(a.Whole)), cmp.Compare(weight(b), weight(a)), cmp.Compare(b.Score, a.Score), cmp.Compare(len(b.Words), len(a.Words)),
			cmp.Compare(a.Table, b.Table), cmp.Compare(a.Column, b.Column), cmp.Compare(a.Value, b.Value))
	})
	perCol := map[column]int{}
	out := hits[:0]
	for _, h := range hits {
		c := column{h.Table, h.Column}
		if perCol[c] >= maxPerColumn {
			continue
		}
		perCol[c]++
		out = append(out, h)
		if len(out) == maxHits {
			break
		}
	}
	return slices.Clip(out)
}

func abs(n int) int { return max(n, -n) }

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// weight orders hits: the score times the length of the words matched,
// so "Lewis Hamilton" for "Lewis Hamiltn" (0.93 × 13) comes before the
// exact "Lewis" (1 × 5).
func weight(h Hit) float64 { return h.Score * float64(utf8.RuneCountInString(h.Words)) }

// lookup returns the number of key g, if g is a key.
func (ix *Index) lookup(g string) (uint32, bool) {
	lo, hi := ix.firstOfLen(len(g)), ix.firstOfLen(len(g)+1)
	i, ok := slices.BinarySearch(ix.keys[lo:hi], g)
	return lo + uint32(i), ok
}

// firstOfLen is the first key of n bytes or more (len(keys) past the
// longest).
func (ix *Index) firstOfLen(n int) uint32 {
	if n >= len(ix.lenStart) {
		return uint32(len(ix.keys))
	}
	return ix.lenStart[max(n, 0)]
}

// scratch is the working memory of one Match: counts[k] is the trigrams
// of the current gram key k holds, for the keys in touched (the others
// are 0).
type scratch struct {
	counts  []uint8
	touched []uint32
	lists   [][]uint32
}

// fuzzy finds the keys similar to the gram g of n words with trigrams gs
// and calls note for each scoring at least threshold: the keys holding
// minContainment of gs, counted over the postings of gs, of the lengths
// nearest g's as far as budget posting entries reach (maxScan), then
// scored by edit distance. It returns the entries read.
func (ix *Index) fuzzy(g string, n int, gs []gram, sc *scratch, threshold float64, budget int, note func(k uint32, score float64, g string, words int, whole bool)) int {
	glen := len(g)
	// A whole match needs lengths within the threshold (the edit
	// distance is at least their difference, in bytes as ratio counts);
	// a partial one needs a longer key.
	near := func(klen int) bool { return float64(abs(klen-glen)) <= (1-threshold)*float64(max(klen, glen)) }
	shortest := glen
	for shortest > 0 && near(shortest-1) {
		shortest--
	}
	if len(gs) > math.MaxUint8 {
		return 0 // more than counts can count: g is longer than a value is
	}
	sc.lists = sc.lists[:0]
	for _, x := range gs {
		sc.lists = append(sc.lists, ix.posting(x))
	}
	// The keys of lengths glen-d (not under shortest) to glen+d: the
	// postings' ranges of them.
	ranges := func(d int, f func(list []uint32, from, to int)) {
		lo, hi := ix.firstOfLen(max(shortest, glen-d)), ix.firstOfLen(glen+d+1)
		for _, list := range sc.lists {
			from, _ := slices.BinarySearch(list, lo)
			to, _ := slices.BinarySearch(list[from:], hi)
			f(list, from, from+to)
		}
	}
	entries := func(d int) (total int) {
		ranges(d, func(_ []uint32, from, to int) { total += to - from })
		return total
	}
	widest := max(glen-shortest, len(ix.lenStart)-glen)
	d := sort.Search(widest+1, func(d int) bool { return entries(d) > budget }) - 1
	if d < 0 {
		return 0
	}
	sc.touched = sc.touched[:0]
	read := 0
	ranges(d, func(list []uint32, from, to int) {
		read += to - from
		for _, k := range list[from:to] {
			if sc.counts[k] == 0 {
				sc.touched = append(sc.touched, k)
			}
			sc.counts[k]++
		}
	})
	need := int(math.Ceil(minContainment * float64(len(gs))))
	// An edit removes at most three trigrams: a key within distance e of
	// g holds all but 3e of gs, and a key holding a run of words within
	// e of g too (the run's padding is the key's spaces). Partial
	// matches need the similarity threshold/partialWeight of a run at
	// most two bytes longer than g (windowRatio).
	holds := func(c int, similarity float64, longest int) bool {
		return c >= len(gs)-3*int((1-similarity)*float64(longest)+1e-9)
	}
	type partial struct {
		k     uint32
		score float64
	}
	var partials []partial
	for _, k := range sc.touched {
		c := int(sc.counts[k])
		sc.counts[k] = 0
		if c < need {
			continue
		}
		key := ix.keys[k]
		klen := len(key)
		if near(klen) && holds(c, threshold, max(klen, glen)) {
			if score := ratio(g, key); score >= threshold {
				note(k, score, g, n, true)
				continue
			}
		}
		// Past maxPartial partial matches none is noted: no need to
		// score more.
		if klen > glen && len(partials) <= maxPartial && holds(c, threshold/partialWeight, glen+2) {
			if p := partialWeight * windowRatio(g, n, key); p >= threshold {
				partials = append(partials, partial{k, p})
			}
		}
	}
	if len(partials) <= maxPartial {
		for _, p := range partials {
			note(p.k, p.score, g, n, false)
		}
	}
	return read
}

// setEntries fills entries, keys and keyStart from ks, sorted by key:
// one entry per pair, each distinct key once, keyStart[i] the first entry
// of keys[i] and a last element len(entries).
func (ix *Index) setEntries(ks []keyed) {
	ix.entries = make([]entry, len(ks))
	ix.keyStart = make([]uint32, 0, len(ks)+1)
	for i, k := range ks {
		ix.entries[i] = k.e
		if i == 0 || k.key != ix.keys[len(ix.keys)-1] {
			ix.keys = append(ix.keys, k.key)
			ix.keyStart = append(ix.keyStart, uint32(i))
		}
	}
	ix.keys = slices.Clip(ix.keys)
	ix.keyStart = append(ix.keyStart, uint32(len(ix.entries)))
	longest := 0
	if len(ix.keys) > 0 {
		longest = len(ix.keys[len(ix.keys)-1])
	}
	ix.lenStart = make([]uint32, longest+2)
	k := 0
	for n := range ix.lenStart {
		for k < len(ix.keys) && len(ix.keys[k]) < n {
			k++
		}
		ix.lenStart[n] = uint32(k)
	}
}

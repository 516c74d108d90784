package valueindex_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/demo"
	"github.com/text2sql-go/text2sql/executor/sqlite"
	"github.com/text2sql-go/text2sql/internal/shareddata"
	"github.com/text2sql-go/text2sql/retriever/valueindex"
)

func build(t *testing.T, cols map[string][]string) *valueindex.Index {
	t.Helper()
	b, err := valueindex.NewBuilder(valueindex.Options{})
	require.NoError(t, err)
	for tc, vals := range cols {
		table, col, ok := strings.Cut(tc, ".")
		require.True(t, ok)
		b.Add(table, col, vals...)
	}
	return b.Index()
}

var racing = map[string][]string{
	"drivers.forename": {"Lewis", "Nico", "Sebastian"},
	"drivers.surname":  {"Hamilton", "Rosberg", "Vettel"},
	"drivers.name":     {"Lewis Hamilton", "Nico Rosberg", "Sebastian Vettel"},
	"singer.name":      {"Joe Sharp", "Timbaland", "Justin Brown", "Rose White"},
	"singer.country":   {"France", "United States", "Netherlands"},
	"circuits.city":    {"São Paulo", "Monte Carlo"},
	"circuits.name":    {"Circuit de Monaco", "Silverstone Circuit", "Autódromo José Carlos Pace"},
	"words.word":       {"The", "of", "Who"},
}

func first(t *testing.T, hits []valueindex.Hit) valueindex.Hit {
	t.Helper()
	require.NotEmpty(t, hits)
	return hits[0]
}

func TestMatchExact(t *testing.T) {
	ix := build(t, racing)
	h := first(t, ix.Match("Show the age of the singer named Joe Sharp.", valueindex.MatchOptions{}))
	assert.Equal(t, valueindex.Hit{Table: "singer", Column: "name", Value: "Joe Sharp", Score: 1, Words: "joe sharp", Whole: true}, h)

	// Case, punctuation and accents are folded.
	h = first(t, ix.Match("races held in SAO-PAULO", valueindex.MatchOptions{}))
	assert.Equal(t, "São Paulo", h.Value)
	assert.Equal(t, 1.0, h.Score)

	// A value longer than three words matches by a run of its words.
	h = first(t, ix.Match("races at jose carlos pace", valueindex.MatchOptions{}))
	assert.Equal(t, "Autódromo José Carlos Pace", h.Value)
	assert.InDelta(t, 0.85, h.Score, 1e-9)
	assert.False(t, h.Whole)
}

func TestMatchMisspelt(t *testing.T) {
	ix := build(t, racing)
	h := first(t, ix.Match("How many races did Hamiltn win?", valueindex.MatchOptions{}))
	assert.Equal(t, "drivers", h.Table)
	assert.Equal(t, "surname", h.Column)
	assert.Equal(t, "Hamilton", h.Value)
	assert.InDelta(t, 0.875, h.Score, 1e-9) // one deletion in eight letters

	h = first(t, ix.Match("races Lewis Hamiltn took part in", valueindex.MatchOptions{}))
	assert.Equal(t, "Lewis Hamilton", h.Value)
	assert.Greater(t, h.Score, valueindex.DefaultThreshold)
	assert.Less(t, h.Score, 1.0)
	assert.True(t, h.Whole)

	// One wrong letter in a short word is another word.
	assert.Empty(t, ix.Match("Nixo", valueindex.MatchOptions{}))
}

func TestMatchPartial(t *testing.T) {
	ix := build(t, racing)
	var got []string
	for _, h := range ix.Match("Which races were held at Silverstone?", valueindex.MatchOptions{}) {
		got = append(got, fmt.Sprintf("%s.%s=%s %.2f", h.Table, h.Column, h.Value, h.Score))
	}
	assert.Equal(t, []string{"circuits.name=Silverstone Circuit 0.85"}, got)
}

func TestMatchSkipsStopWordsAndShortGrams(t *testing.T) {
	ix := build(t, racing)
	assert.Empty(t, ix.Match("Who is the best of them?", valueindex.MatchOptions{}))
	assert.Empty(t, ix.Match("", valueindex.MatchOptions{}))
	var nilIx *valueindex.Index
	assert.Empty(t, nilIx.Match("Joe Sharp", valueindex.MatchOptions{}))
	assert.Equal(t, 0, nilIx.Len())
}

func TestMatchDeterministic(t *testing.T) {
	// The same values in several columns: ties ordered by table, column.
	cols := map[string][]string{"b.x": {"Paris"}, "a.y": {"Paris"}, "a.x": {"Paris", "Paris Hilton"}}
	q := "hotels in Paris"
	want := build(t, cols).Match(q, valueindex.MatchOptions{})
	require.Len(t, want, 4)
	assert.Equal(t, []string{"a.x", "a.y", "b.x"}, []string{want[0].Table + "." + want[0].Column, want[1].Table + "." + want[1].Column, want[2].Table + "." + want[2].Column})
	assert.Equal(t, "Paris Hilton", want[3].Value)
	for range 5 {
		assert.Equal(t, want, build(t, cols).Match(q, valueindex.MatchOptions{}))
	}
	assert.Len(t, build(t, cols).Match(q, valueindex.MatchOptions{MaxHits: 2}), 2)
	assert.Len(t, build(t, cols).Match(q, valueindex.MatchOptions{Threshold: 1}), 3)
}

func TestBuilderBounds(t *testing.T) {
	_, err := valueindex.NewBuilder(valueindex.Options{MaxValues: -1})
	require.ErrorIs(t, err, text2sql.ErrInvalidConfig)

	b, err := valueindex.NewBuilder(valueindex.Options{MaxPerColumn: 2, MaxValues: 3})
	require.NoError(t, err)
	assert.True(t, b.Add("t", "a", "x1", "x2", "x3"))
	assert.False(t, b.Add("t", "b", "y1", "y2"))
	ix := b.Index()
	assert.Equal(t, 3, ix.Len())
	st := ix.Stats()
	assert.Equal(t, []string{"t.a", "t.b"}, st.Truncated)
	assert.Equal(t, 2, st.Columns)
	assert.True(t, st.Full)
	assert.False(t, build(t, racing).Stats().Full)

	b, err = valueindex.NewBuilder(valueindex.Options{MaxBytes: 5})
	require.NoError(t, err)
	assert.False(t, b.Add("t", "a", "abc", "defg"))
	st = b.Index().Stats()
	assert.Equal(t, int64(3), st.Bytes)
	assert.True(t, st.Full)

	// Blank, multi-line and long values are dropped; duplicates kept once;
	// a value in two columns is stored once.
	var zero valueindex.Builder
	zero.Add("t", "c", "", "  ", "two\nlines", strings.Repeat("x", 81), "ok", "ok")
	zero.Add("u", "c", "ok")
	st = zero.Index().Stats()
	assert.Equal(t, 2, st.Values)
	assert.Equal(t, 1, st.Keys)
	assert.Equal(t, int64(2), st.Bytes)
}

func openSQLite(t *testing.T, path string) *sqlite.Executor {
	t.Helper()
	ex, err := sqlite.Open(path, sqlite.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { ex.Close() })
	return ex
}

func TestBuildDemoSkipsSensitiveColumns(t *testing.T) {
	path, err := demo.Ensure(t.TempDir())
	require.NoError(t, err)
	ex := openSQLite(t, path)
	var progress []int
	ix, err := valueindex.Build(context.Background(), ex.DB(), ex.Schema(), valueindex.Options{Progress: func(done, total int) {
		progress = append(progress, done)
		assert.Positive(t, total)
	}})
	require.NoError(t, err)
	require.NotEmpty(t, progress)
	assert.Equal(t, len(progress), progress[len(progress)-1])

	// An e-mail address as the question names it is no value of the index.
	hits := ix.Match("courses of yusuf.quinn@students.example.edu", valueindex.MatchOptions{})
	require.NotEmpty(t, hits)
	for _, h := range hits {
		assert.NotEqual(t, "email", h.Column, h)
	}
	assert.Contains(t, ix.Match("courses taken by Yusuf Quinn", valueindex.MatchOptions{}),
		valueindex.Hit{Table: "students", Column: "last_name", Value: "Quinn", Score: 1, Words: "quinn", Whole: true})
	tables, cols, err := valueindex.Columns(ex.Schema(), valueindex.Options{})
	require.NoError(t, err)
	for i, tb := range tables {
		for _, c := range cols[i] {
			assert.NotContains(t, c.Name, "email", tb.Name)
			assert.NotContains(t, c.Name, "_id", tb.Name)
		}
	}
	_, _, err = valueindex.Columns(ex.Schema(), valueindex.Options{Tables: []string{"nope"}})
	require.ErrorIs(t, err, text2sql.ErrInvalidConfig)

	_, err = valueindex.Build(context.Background(), nil, ex.Schema(), valueindex.Options{})
	require.ErrorIs(t, err, text2sql.ErrInvalidConfig)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = valueindex.Build(ctx, ex.DB(), ex.Schema(), valueindex.Options{})
	require.ErrorIs(t, err, context.Canceled)
}

// TestSpiderLiterals matches each Spider dev question against the value
// index of its database, for the gold queries that compare a column with
// a string literal, and checks that the literal's column is among the
// hits: value linking on real data.
func TestSpiderLiterals(t *testing.T) {
	qs, _ := shareddata.SpiderDev(t)
	ctx := context.Background()
	indexes := map[string]*valueindex.Index{}
	total, found, indexed := 0, 0, 0
	for _, q := range qs {
		lits := shareddata.Literals(q.Query)
		if len(lits) == 0 {
			continue
		}
		ix := indexes[q.DBID]
		if ix == nil {
			ex := openSQLite(t, shareddata.SpiderDB(t, q.DBID))
			var err error
			ix, err = valueindex.Build(ctx, ex.DB(), ex.Schema(), valueindex.Options{})
			require.NoError(t, err)
			indexes[q.DBID] = ix
		}
		hits := ix.Match(q.Question, valueindex.MatchOptions{})
		for _, l := range lits {
			total++
			if len(ix.Match(l.Value, valueindex.MatchOptions{Threshold: 1})) > 0 {
				indexed++
			}
			for _, h := range hits {
				if strings.EqualFold(h.Column, l.Column) {
					found++
					break
				}
			}
		}
	}
	t.Logf("%d literals: %d (%.1f%%) have their column among the question's hits; %d (%.1f%%) are values of the index",
		total, found, 100*float64(found)/float64(total), indexed, 100*float64(indexed)/float64(total))
	// Measured: 252 of 395; 254 literals are values at all (Spider's
	// gold SQL also compares with values its data lacks, and with
	// numbers and one-letter codes the index leaves out).
	require.Equal(t, 395, total)
	assert.GreaterOrEqual(t, found, 245)
}

func TestCache(t *testing.T) {
	ix := build(t, racing)
	path := t.TempDir() + "/sub/values.gob"
	key := valueindex.CacheKey("schema", "v1", valueindex.Options{})
	assert.Len(t, key, 64)
	assert.NotEqual(t, key, valueindex.CacheKey("schema", "v2", valueindex.Options{}), "the data version is part of the key")
	assert.NotEqual(t, key, valueindex.CacheKey("schema", "v1", valueindex.Options{MaxPerColumn: 5}))

	_, err := valueindex.Load(path, key)
	require.ErrorIs(t, err, valueindex.ErrCacheMiss)
	require.NoError(t, ix.Save(path, key))
	got, err := valueindex.Load(path, key)
	require.NoError(t, err)
	assert.Equal(t, ix.Stats(), got.Stats())
	for _, q := range []string{"singer Joe Sharp", "Hamiltn", "races held in SAO-PAULO", "jose carlos pace"} {
		assert.Equal(t, ix.Match(q, valueindex.MatchOptions{}), got.Match(q, valueindex.MatchOptions{}), q)
	}
	_, err = valueindex.Load(path, valueindex.CacheKey("schema", "v2", valueindex.Options{}))
	require.ErrorIs(t, err, valueindex.ErrCacheMiss, "stale after a data change")

	require.NoError(t, os.WriteFile(path, []byte("not gob"), 0o644))
	_, err = valueindex.Load(path, key)
	require.ErrorIs(t, err, valueindex.ErrCacheMiss)
}

// TestSpiderBuildStats builds the index of every Spider dev database and
// reports its build time and size (the numbers of the issue 14 report).
func TestSpiderBuildStats(t *testing.T) {
	qs, _ := shareddata.SpiderDev(t)
	seen := map[string]bool{}
	var total time.Duration
	values := 0
	for _, q := range qs {
		if seen[q.DBID] {
			continue
		}
		seen[q.DBID] = true
		ex := openSQLite(t, shareddata.SpiderDB(t, q.DBID))
		t0 := time.Now()
		ix, err := valueindex.Build(context.Background(), ex.DB(), ex.Schema(), valueindex.Options{})
		d := time.Since(t0)
		require.NoError(t, err)
		st := ix.Stats()
		total += d
		values += st.Values
		t.Logf("%-30s %6.1f ms  %3d columns  %6d values  %6d keys  %7d bytes  %5d trigrams  cut %v  skipped %d",
			q.DBID, float64(d.Microseconds())/1000, st.Columns, st.Values, st.Keys, st.Bytes, st.Grams, st.Truncated, len(st.Skipped))
		assert.Positive(t, st.Values, q.DBID)
		assert.Empty(t, st.Skipped, q.DBID)
	}
	t.Logf("%d databases: %d values in %v", len(seen), values, total)
}

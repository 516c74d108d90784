package hashing

import (
	"context"
	"math"
	"testing"

	text2sql "github.com/text2sql-go/text2sql"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func mustNew(t testing.TB, dim int) *Embedder {
	t.Helper()
	e, err := New(dim)
	require.NoError(t, err)
	return e
}

func TestNew(t *testing.T) {
	e := mustNew(t, 0)
	require.Equal(t, 512, e.Dimension())
	require.Equal(t, "hashing-v1-512", e.Name())
	require.Equal(t, "hashing-v1-256", mustNew(t, 256).Name())
	for _, d := range []int{-1, MaxDimension + 1} {
		_, err := New(d)
		assert.ErrorIs(t, err, text2sql.ErrInvalidConfig, "New(%d)", d)
	}
}

func TestDeterministicAndNormalised(t *testing.T) {
	e := mustNew(t, 512)
	ctx := context.Background()
	texts := []string{"How many singers do we have?", "singer: singer_id, name, country, age", "Straße, ünïcode 名前"}
	a, err := e.EmbedDocuments(ctx, texts)
	require.NoError(t, err)
	for i, txt := range texts {
		b, _ := e.EmbedQuery(ctx, txt)
		require.Equal(t, a[i], b, "%q: documents and query differ", txt)
		for r := 0; r < 5; r++ {
			require.Equal(t, b, e.Embed(txt), "%q: not deterministic", txt)
		}
		require.Len(t, b, 512)
		var n float64
		for _, x := range b {
			n += float64(x) * float64(x)
		}
		require.InDelta(t, 1.0, n, 1e-5, "%q: norm²", txt)
	}
	for _, empty := range []string{"", "?!", "the of and"} {
		v := e.Embed(empty)
		for _, x := range v {
			require.Zero(t, x, "%q: not the zero vector", empty)
		}
		require.Zero(t, Cosine(v, a[0]), "cosine with zero vector")
	}
}

// TestGolden pins a few coordinates of one vector, so an accidental change
// of the feature scheme (which must increment Version) fails loudly.
func TestGolden(t *testing.T) {
	v := mustNew(t, 64).Embed("Singer_ID of singers")
	for i, want := range map[int]float64{1: 0.200595, 19: 0.401189, 26: -0.049364, 31: -0.334324, 32: -0.398052, 63: 0.197457, 0: 0} {
		assert.InDelta(t, want, float64(v[i]), 1e-6, "coordinate %d: the feature scheme changed; increment Version", i)
	}
}

func TestSimilarity(t *testing.T) {
	e := mustNew(t, 512)
	sim := func(a, b string) float64 { return Cosine(e.Embed(a), e.Embed(b)) }
	cases := []struct{ q, near, far string }{
		{"How many singers do we have?", "singer: singer_id, name, country, song_name, age", "stadium: stadium_id, location, capacity"},
		{"total order amount per customer", "orders: id, amount, created_at, customer_id", "employees: id, first_name, salary"},
		{"StudentName", "student_name", "course_title"},
		{"average grade of students", "the average grade points of each student", "flights departing from airports"},
	}
	for _, c := range cases {
		n, f := sim(c.q, c.near), sim(c.q, c.far)
		assert.Greater(t, n, f, "%q: near not above far", c.q)
	}
	assert.InDelta(t, 1.0, sim("How many singers do we have?", "How many singers do we have?"), 1e-6, "self similarity")
	assert.GreaterOrEqual(t, sim("singers", "singer"), 0.9, "plural similarity")
	assert.LessOrEqual(t, sim("What is the capital of France?", "singer: singer_id, name, country, song_name, age"), 0.2, "unrelated similarity")
}

func BenchmarkEmbedTableDoc(b *testing.B) {
	e := mustNew(b, 512)
	s := "Table stadium. Columns: stadium_id, location, name, capacity, highest, lowest, average. Stores stadiums and their attendance."
	for i := 0; i < b.N; i++ {
		e.Embed(s)
	}
}

func BenchmarkEmbedQuestion(b *testing.B) {
	e := mustNew(b, 512)
	for i := 0; i < b.N; i++ {
		e.Embed("What are the names and release years for all the songs of the youngest singer?")
	}
}

func FuzzEmbed(f *testing.F) {
	for _, s := range []string{"", "a_b", "\xff", "名前", "x y z"} {
		f.Add(s)
	}
	e := mustNew(f, 64)
	f.Fuzz(func(t *testing.T, s string) {
		v := e.Embed(s)
		for _, x := range v {
			require.False(t, math.IsNaN(float64(x)) || math.IsInf(float64(x), 0), "%q: bad coordinate", s)
		}
	})
}

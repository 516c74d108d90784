package hashing

import (
	"context"
	"errors"
	"math"
	"reflect"
	"testing"

	text2sql "github.com/text2sql-go/text2sql"
)

func mustNew(t testing.TB, dim int) *Embedder {
	t.Helper()
	e, err := New(dim)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestNew(t *testing.T) {
	e := mustNew(t, 0)
	if e.Dimension() != 512 || e.Name() != "hashing-v1-512" {
		t.Fatalf("%d %s", e.Dimension(), e.Name())
	}
	if e := mustNew(t, 256); e.Name() != "hashing-v1-256" {
		t.Fatal(e.Name())
	}
	for _, d := range []int{-1, MaxDimension + 1} {
		if _, err := New(d); !errors.Is(err, text2sql.ErrInvalidConfig) {
			t.Errorf("New(%d) = %v", d, err)
		}
	}
}

func TestDeterministicAndNormalised(t *testing.T) {
	e := mustNew(t, 512)
	ctx := context.Background()
	texts := []string{"How many singers do we have?", "singer: singer_id, name, country, age", "Straße, ünïcode 名前"}
	a, err := e.EmbedDocuments(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	for i, txt := range texts {
		b, _ := e.EmbedQuery(ctx, txt)
		if !reflect.DeepEqual(a[i], b) {
			t.Fatalf("%q: documents and query differ", txt)
		}
		for r := 0; r < 5; r++ {
			if !reflect.DeepEqual(e.Embed(txt), b) {
				t.Fatalf("%q: not deterministic", txt)
			}
		}
		if len(b) != 512 {
			t.Fatalf("len %d", len(b))
		}
		var n float64
		for _, x := range b {
			n += float64(x) * float64(x)
		}
		if math.Abs(n-1) > 1e-5 {
			t.Fatalf("%q: norm² %v", txt, n)
		}
	}
	for _, empty := range []string{"", "?!", "the of and"} {
		v := e.Embed(empty)
		for _, x := range v {
			if x != 0 {
				t.Fatalf("%q: not the zero vector", empty)
			}
		}
		if Cosine(v, a[0]) != 0 {
			t.Fatal("cosine with zero vector")
		}
	}
}

// TestGolden pins a few coordinates of one vector, so an accidental change
// of the feature scheme (which must increment Version) fails loudly.
func TestGolden(t *testing.T) {
	v := mustNew(t, 64).Embed("Singer_ID of singers")
	for i, want := range map[int]float64{1: 0.200595, 19: 0.401189, 26: -0.049364, 31: -0.334324, 32: -0.398052, 63: 0.197457, 0: 0} {
		if math.Abs(float64(v[i])-want) > 1e-6 {
			t.Errorf("coordinate %d = %.6f, want %.6f: the feature scheme changed; increment Version", i, v[i], want)
		}
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
		if !(n > f) {
			t.Errorf("%q: near %.3f not above far %.3f", c.q, n, f)
		}
	}
	if s := sim("How many singers do we have?", "How many singers do we have?"); math.Abs(s-1) > 1e-6 {
		t.Errorf("self similarity %v", s)
	}
	if s := sim("singers", "singer"); s < 0.9 {
		t.Errorf("plural similarity %v", s)
	}
	if s := sim("What is the capital of France?", "singer: singer_id, name, country, song_name, age"); s > 0.2 {
		t.Errorf("unrelated similarity %v", s)
	}
}

func TestContextCancelled(t *testing.T) {
	e := mustNew(t, 0)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := e.EmbedDocuments(ctx, []string{"a"}); !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	if _, err := e.EmbedQuery(ctx, "a"); !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
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
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				t.Fatalf("%q: bad coordinate", s)
			}
		}
	})
}

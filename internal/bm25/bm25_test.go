package bm25

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTokenize(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"student_id", []string{"student", "id", "student_id"}},
		{"StudentID", []string{"student", "id", "student_id"}},
		{"studentId", []string{"student", "id", "student_id"}},
		{"students_id", []string{"student", "id", "student_id"}},
		{"HTTPServer", []string{"http", "server", "http_server"}},
		{"orders.created_at", []string{"order", "created", "created_at"}},
		{"address2", []string{"address", "2", "address_2"}},
		{"How many singers do we have?", []string{"many", "singer"}},
		{"List the classes and categories!", []string{"class", "category"}},
		{"singer's age", []string{"singer", "age"}},
		{"is_active", []string{"active", "is_active"}},
		{"__x__", []string{"x"}},
		{"", nil},
		{"?!. ", nil},
		{"Straße Ünïcode", []string{"straße", "ünïcode"}},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, Tokenize(c.in), "Tokenize(%q)", c.in)
	}
	assert.Equal(t, []string{"singer", "id", "concert"}, Words("the Singer_ID of concerts"), "Words")
	assert.Equal(t, []string{"singer", "in", "the", "concert"}, Parts("Singers in the Concerts"), "Parts")
	assert.Equal(t, []string{"singer_id", "first_name"}, Identifiers("singer_id and FirstName, age"), "Identifiers")
}

func TestStem(t *testing.T) {
	for in, want := range map[string]string{
		"singers": "singer", "classes": "class", "categories": "category", "class": "class",
		"status": "status", "analysis": "analysis", "matches": "match", "boxes": "box",
		"people": "person", "courses": "course", "cities": "city", "ties": "tie",
		"campus": "campus", "famous": "famous", "statistics": "statistics", "leaves": "leaf",
		"id": "id", "ids": "ids", "bus": "bus", "addresses": "address", "horses": "horse",
		"x2s": "x2s", "series": "series", "running": "running",
	} {
		assert.Equal(t, want, Stem(in), "Stem(%q)", in)
	}
}

func TestSearch(t *testing.T) {
	docs := []string{
		"singer: singer_id, name, country, song_name, age",
		"concert: concert_id, concert_name, theme, stadium_id, year",
		"stadium: stadium_id, location, name, capacity, highest, lowest, average",
		"singer_in_concert: concert_id, singer_id",
	}
	ix := New(docs, Params{})
	require.Equal(t, 4, ix.Len(), "Len")
	require.Equal(t, DefaultParams(), ix.Params(), "Params")
	hits := ix.Search("names and countries of singers", 10)
	require.GreaterOrEqual(t, len(hits), 2, "singers: %+v", hits)
	require.Equal(t, 0, hits[0].Doc, "singers: %+v", hits)
	require.Equal(t, 3, hits[1].Doc, "singers: %+v", hits)
	for i := 1; i < len(hits); i++ {
		require.LessOrEqual(t, hits[i].Score, hits[i-1].Score, "not sorted: %+v", hits)
	}
	hits = ix.Search("stadium capacity", 1)
	require.Len(t, hits, 1, "capacity: %+v", hits)
	require.Equal(t, 2, hits[0].Doc, "capacity: %+v", hits)
	even := func(d int) bool { return d%2 == 0 }
	hits = ix.SearchFilter(Tokenize("names and countries of singers"), 10, even)
	require.Len(t, hits, 2, "filter: %+v", hits)
	require.Equal(t, 0, hits[0].Doc, "filter: %+v", hits)
	require.Equal(t, 2, hits[1].Doc, "filter: %+v", hits)
	require.Nil(t, ix.SearchFilter(Tokenize("singer"), 10, func(int) bool { return false }), "filter none")
	require.Nil(t, ix.Search("zebra", 5), "zebra")
	require.Nil(t, ix.Search("", 5), "empty")
	var nilIx *Index
	require.Nil(t, nilIx.SearchTerms([]string{"a"}, 3), "nil index")
	require.Nil(t, New(nil, Params{}).Search("singer", 3), "empty index")
}

// TestScoreFormula checks one score against the formula computed by hand.
func TestScoreFormula(t *testing.T) {
	docs := [][]string{{"a", "b", "a"}, {"b", "c"}, {"c"}}
	p := Params{K1: 1.5, B: 0.5}
	ix := NewTokens(docs, p)
	hits := ix.SearchTerms([]string{"a", "b", "a"}, 0)
	avg := 2.0
	idf := func(n float64) float64 { return math.Log(1 + (3-n+0.5)/(n+0.5)) }
	sat := func(tf, dl float64) float64 { return tf * (p.K1 + 1) / (tf + p.K1*(1-p.B+p.B*dl/avg)) }
	want0 := idf(1)*sat(2, 3) + idf(2)*sat(1, 3)
	want1 := idf(2) * sat(1, 2)
	require.Len(t, hits, 2, "hits %+v", hits)
	require.Equal(t, 0, hits[0].Doc, "hits %+v", hits)
	require.Equal(t, 1, hits[1].Doc, "hits %+v", hits)
	require.InDelta(t, want0, hits[0].Score, 1e-5, "score of doc 0")
	require.InDelta(t, want1, hits[1].Score, 1e-5, "score of doc 1")
}

func TestParamsNormalised(t *testing.T) {
	got := Params{K1: math.NaN(), B: 3}.normalised()
	require.Equal(t, 1.2, got.K1, "%+v", got)
	require.Equal(t, 1.0, got.B, "%+v", got)
	got = Params{K1: 0, B: -1}.normalised()
	require.Equal(t, 0.0, got.K1, "%+v", got)
	require.Equal(t, 0.0, got.B, "%+v", got)
}

func TestConcurrentSearch(t *testing.T) {
	ix := New(synthetic(2000, 1), Params{})
	want := ix.Search("customer order amount", 10)
	done := make(chan bool)
	for g := 0; g < 8; g++ {
		go func() {
			defer func() { done <- true }()
			for i := 0; i < 200; i++ {
				if !assert.Equal(t, want, ix.Search("customer order amount", 10), "concurrent search differs") {
					return
				}
			}
		}()
	}
	for g := 0; g < 8; g++ {
		<-done
	}
}

var words = strings.Fields(`customer order amount product price invoice payment shipment warehouse employee
department salary manager region country city address phone email supplier category brand review rating
account balance transaction branch loan credit card student course enrollment grade teacher class school
flight airport airline passenger ticket seat hotel room booking guest movie actor director genre studio
song singer album artist concert stadium team player match season league coach game score tournament`)

// synthetic returns n documents that look like table descriptions.
func synthetic(n int, seed uint64) []string {
	r := rand.New(rand.NewPCG(seed, 1))
	docs := make([]string, n)
	for i := range docs {
		var b strings.Builder
		fmt.Fprintf(&b, "%s_%s_%d:", words[r.IntN(len(words))], words[r.IntN(len(words))], i)
		for j := 0; j < 20; j++ {
			fmt.Fprintf(&b, " %s_%s", words[r.IntN(len(words))], words[r.IntN(len(words))])
		}
		docs[i] = b.String()
	}
	return docs
}

func BenchmarkSearch20k(b *testing.B) {
	ix := New(synthetic(20000, 2), Params{})
	q := Tokenize("What is the total amount of orders per customer in each region?")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ix.SearchTerms(q, 50)
	}
}

func BenchmarkBuild20k(b *testing.B) {
	docs := synthetic(20000, 2)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		New(docs, Params{})
	}
}

func BenchmarkTokenize(b *testing.B) {
	s := "SELECT T1.singer_id, StudentName FROM singer_in_concert: How many singers do we have in 2014?"
	for i := 0; i < b.N; i++ {
		Tokenize(s)
	}
}

func FuzzTokenize(f *testing.F) {
	for _, s := range []string{"student_id", "HTTPServer", "a.b.c", "x2y", "ÀÉ_ü", "\xff\xfe", "__"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, tok := range Tokenize(s) {
			require.NotEmpty(t, tok, "empty token from %q", s)
		}
		ix := New([]string{s, "other"}, Params{})
		ix.Search(s, 3)
	})
}

func TestWordsAndIdentifiers(t *testing.T) {
	for _, s := range []string{"", "the of", "Singer_ID of singers", "HTTPServer address2 StudentID students_id", "Straße, ünïcode 名前 x_y_z"} {
		w, ids := WordsAndIdentifiers(s)
		require.Equal(t, Words(s), w, "%q: words", s)
		require.Equal(t, Identifiers(s), ids, "%q: identifiers", s)
		require.ElementsMatch(t, Tokenize(s), append(w, ids...), "%q: Tokenize's terms", s)
	}
}

func TestMarshalBinary(t *testing.T) {
	docs := []string{"singer concert stadium", "concert_singer singer_id", "stadium capacity highest", "pets owner"}
	ix := New(docs, DefaultParams())
	data, err := ix.MarshalBinary()
	require.NoError(t, err)
	back, err := UnmarshalBinary(data)
	require.NoError(t, err)
	assert.Equal(t, ix.Len(), back.Len())
	for _, q := range []string{"singer", "concert stadium", "highest capacity", "owner of pets", "nothing"} {
		assert.Equal(t, ix.Search(q, 10), back.Search(q, 10), q)
	}
	_, err = UnmarshalBinary(data[:len(data)/2])
	assert.Error(t, err)
}

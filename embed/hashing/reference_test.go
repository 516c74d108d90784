package hashing

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/text2sql-go/text2sql/internal/bm25"
)

// referenceEmbed is Embed as it was before the counting sort and the
// single tokenizer pass: every feature sorted at once. Embed must return
// its vectors bit for bit.
func referenceEmbed(dim int, text string) []float32 {
	const groupBits = 3
	fs := make([]uint64, 0, 8*len(text)+8)
	for _, t := range bm25.Tokenize(text) {
		fs = append(fs, hashString('w', t, "")&^groupBits)
	}
	words := bm25.Words(text)
	for i := 1; i < len(words); i++ {
		fs = append(fs, hashString('b', words[i-1], words[i])&^groupBits|1)
	}
	var offs []int
	for _, w := range words {
		s := "<" + w + ">"
		offs = offs[:0]
		for i := range s {
			offs = append(offs, i)
		}
		offs = append(offs, len(s))
		runes := len(offs) - 1
		for n := minCharN; n <= maxCharN; n++ {
			for i := 0; i+n <= runes; i++ {
				fs = append(fs, hashString('c', s[offs[i]:offs[i+n]], "")&^groupBits|2)
			}
		}
	}
	slices.Sort(fs)
	weights := [3]float64{unigramWeight, bigramWeight, charWeight}
	acc := make([]float64, dim)
	for i := 0; i < len(fs); {
		j := i + 1
		for j < len(fs) && fs[j] == fs[i] {
			j++
		}
		h := fs[i]
		x := weights[h&groupBits] * (1 + math.Log(float64(j-i)))
		if h&4 != 0 {
			x = -x
		}
		acc[(h>>3)%uint64(dim)] += x
		i = j
	}
	var norm float64
	for _, x := range acc {
		norm += x * x
	}
	v := make([]float32, dim)
	if norm == 0 {
		return v
	}
	inv := 1 / math.Sqrt(norm)
	for i, x := range acc {
		v[i] = float32(x * inv)
	}
	return v
}

// referenceTexts are texts of the kinds the retriever embeds (tables of
// many columns, identifiers in every case style, repeated words, accents,
// scripts without case, punctuation only) plus random ones.
func referenceTexts() []string {
	texts := []string{
		"", "?!", "the of and", "Singer_ID of singers", "Straße, ünïcode 名前", "HTTPServer address2 StudentID students_id",
		"How many singers do we have?", "singer: singer_id, name, country, song_name, age",
		"Table stadium. Columns: stadium_id, location, name, capacity, highest, lowest, average. Stores stadiums and their attendance.",
		strings.Repeat("order order_id orders ", 50),
	}
	words := strings.Fields("account address agent Airline airport_code album amount artistName asset audit balance bank batch bill booking Ünïcode 名前 café x y_z HTTP ID")
	r := rand.New(rand.NewPCG(1, 2))
	for n := range 300 {
		var b strings.Builder
		for range 1 + n%120 {
			b.WriteString(words[r.IntN(len(words))])
			b.WriteString([]string{" ", "_", ", ", ".", "", "\n"}[r.IntN(6)])
		}
		texts = append(texts, b.String())
	}
	return texts
}

func TestEmbedMatchesReference(t *testing.T) {
	for _, dim := range []int{1, 7, 64, 512, 1000} {
		e := mustNew(t, dim)
		for _, text := range referenceTexts() {
			require.Equal(t, referenceEmbed(dim, text), e.Embed(text), "dimension %d, %q", dim, text)
		}
	}
}

// TestEmbedDocumentsParallel: split over goroutines or not, every vector
// is Embed's and in the texts' order (run with -race too).
func TestEmbedDocumentsParallel(t *testing.T) {
	e := mustNew(t, 512)
	texts := referenceTexts()
	for _, n := range []int{0, 1, parallelTexts - 1, parallelTexts, parallelTexts + 1, len(texts)} {
		vs, err := e.EmbedDocuments(context.Background(), texts[:n])
		require.NoError(t, err)
		require.Len(t, vs, n)
		for i, v := range vs {
			require.Equal(t, e.Embed(texts[i]), v, fmt.Sprintf("%d texts: text %d", n, i))
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := e.EmbedDocuments(ctx, texts)
	require.ErrorIs(t, err, context.Canceled)
}

func FuzzEmbedMatchesReference(f *testing.F) {
	for _, s := range referenceTexts()[:10] {
		f.Add(s)
	}
	e := mustNew(f, 64)
	f.Fuzz(func(t *testing.T, s string) {
		require.Equal(t, referenceEmbed(64, s), e.Embed(s), "%q", s)
	})
}

package hashing

import (
	"context"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/text2sql-go/text2sql/internal/bm25"
	"github.com/text2sql-go/text2sql/internal/vectors"
)

// referenceEmbed is Embed written the plain way, sharing none of its
// feature code: the tokenizer's terms and words taken in two passes, the
// character n-grams cut by decoding runes from each start, each feature's
// count kept in a map, and each coordinate's sum taken over its features
// in ascending order of their hashes (Embed's order, so the floats are the
// same). Embed must return its vectors bit for bit. Only the hash and the
// final scaling to unit length are shared; TestGolden and
// TestDeterministicAndNormalised pin those.
func referenceEmbed(dim int, text string) []float32 {
	counts := map[uint64]int{}
	for _, t := range bm25.Tokenize(text) {
		counts[hashString('w', t, "")&^3]++ // group 0: unigrams
	}
	words := bm25.Words(text)
	for i := 1; i < len(words); i++ {
		counts[hashString('b', words[i-1], words[i])&^3|1]++
	}
	for _, w := range words {
		s := "<" + w + ">"
		for start := 0; start < len(s); start += runeLen(s[start:]) {
			end := start
			for n := 1; n <= maxCharN && end < len(s); n++ {
				end += runeLen(s[end:])
				if n >= minCharN {
					counts[hashString('c', s[start:end], "")&^3|2]++
				}
			}
		}
	}
	weights := [3]float64{unigramWeight, bigramWeight, charWeight}
	acc := make([]float64, dim)
	for _, h := range slices.Sorted(maps.Keys(counts)) {
		x := weights[h&3] * (1 + math.Log(float64(counts[h])))
		if h&4 != 0 {
			x = -x
		}
		acc[(h>>3)%uint64(dim)] += x
	}
	return vectors.Unit(acc)
}

// runeLen is the length in bytes of the first rune of s: 1 for a byte
// that starts no valid UTF-8 sequence, as ranging over a string counts it.
func runeLen(s string) int {
	_, n := utf8.DecodeRuneInString(s)
	return n
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

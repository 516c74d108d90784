package valueindex

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/text2sql-go/text2sql/internal/sqltext"
)

// fold maps the accented Latin letters of Latin-1 and Latin Extended-A to
// their base letters, so "Zürich", "Zurich" and "ZURICH" normalise alike
// (the standard library has no Unicode decomposition; these blocks cover
// the letters of the Western European languages of Spider's and BIRD's
// data).
var fold = func() map[rune]rune {
	m := map[rune]rune{}
	for base, letters := range map[rune]string{
		'a': "àáâãäåāăą", 'c': "çćĉċč", 'd': "ďđ", 'e': "èéêëēĕėęě", 'g': "ĝğġģ", 'h': "ĥħ",
		'i': "ìíîïĩīĭįı", 'j': "ĵ", 'k': "ķ", 'l': "ĺļľŀł", 'n': "ñńņňŉ", 'o': "òóôõöøōŏő",
		'r': "ŕŗř", 's': "śŝşšß", 't': "ţťŧ", 'u': "ùúûüũūŭůűų", 'w': "ŵ", 'y': "ýÿŷ", 'z': "źżž",
	} {
		for _, r := range letters {
			m[r] = base
		}
	}
	return m
}()

// normalize returns the words of s (runs of letters and digits, lower
// case, accents folded) joined by single spaces: "O'Brien, Jr." →
// "o brien jr". Values and questions are compared in this form.
func normalize(s string) string {
	return strings.Join(words(s), " ")
}

// words returns the normalised words of s, as normalize joins them.
func words(s string) []string {
	var (
		out []string
		b   strings.Builder
	)
	flush := func() {
		if b.Len() > 0 {
			out = append(out, b.String())
			b.Reset()
		}
	}
	for _, r := range s {
		if !isWordRune(r) {
			flush()
			continue
		}
		r = unicode.ToLower(r)
		if f, ok := fold[r]; ok {
			r = f
		}
		b.WriteRune(r)
	}
	flush()
	return out
}

// A gram is a character trigram of a normalised string padded with one
// space on each side (" uk" and "uk " for "uk"), three runes of at most 21
// bits each packed in a uint64.
type gram uint64

// grams appends to dst the distinct trigrams of the normalised string s,
// padded, in order of first appearance (not already in dst).
func grams(dst []gram, s string) []gram {
	w0, w1 := gram(0), gram(' ') // the two runes before the next
	n := 1                       // runes so far, the padding included
	for i := 0; i <= len(s); {
		r := rune(' ') // the padding after s
		switch {
		case i == len(s):
			i++
		case s[i] < utf8.RuneSelf:
			r = rune(s[i])
			i++
		default:
			var size int
			r, size = utf8.DecodeRuneInString(s[i:])
			i += size
		}
		if n++; n >= 3 {
			if g := w0<<42 | w1<<21 | gram(r); !slices.Contains(dst, g) {
				dst = append(dst, g)
			}
		}
		w0, w1 = w1, gram(r)
	}
	return dst
}

// ratio is the Levenshtein similarity of a and b: 1 − distance / the
// longer length, in bytes (sqltext.EditDistance; normalised strings are
// mostly ASCII once accents are folded, and a changed letter of a 2- or
// 3-byte script costs its bytes over a length counted in the same
// bytes); 1 for equal strings (two empty ones included).
func ratio(a, b string) float64 {
	n := max(len(a), len(b))
	if n == 0 {
		return 1
	}
	return 1 - float64(sqltext.EditDistance(a, b))/float64(n)
}

// windowRatio is the best ratio of g (of n words) against a run of n
// adjacent words of the normalised value v, when v has more than n words;
// 0 otherwise.
func windowRatio(g string, n int, v string) float64 {
	vw := strings.Split(v, " ")
	if len(vw) <= n {
		return 0
	}
	best := 0.0
	for i := 0; i+n <= len(vw); i++ {
		w := strings.Join(vw[i:i+n], " ")
		if d := len(w) - len(g); d > 2 || d < -2 {
			continue
		}
		best = max(best, ratio(g, w))
	}
	return best
}

// isWordRune reports whether r is part of a word: a letter or a digit.
func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// digits reports whether s holds only digits and spaces.
func digits(s string) bool {
	for _, r := range s {
		if r != ' ' && !unicode.IsDigit(r) {
			return false
		}
	}
	return true
}

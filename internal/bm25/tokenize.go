package bm25

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Tokenize returns the index terms of s, in order, for BM25 and for the
// hashing embedder. It is identifier-aware:
//
//   - a word is a maximal run of letters, digits and underscores; dots,
//     spaces and all other characters separate words, so "orders.created_at"
//     is two words;
//   - each word is split into parts at underscores, at lower→upper case
//     changes (camelCase), before the last capital of a run of capitals
//     followed by a lower-case letter (PascalCase: "HTTPServer" → "http",
//     "server") and between letters and digits ("address2" → "address", "2");
//   - parts are lower-cased, stemmed with Stem, and dropped when they are
//     stop words (see IsStopWord);
//   - a word of two or more parts also yields its joined form: the stemmed,
//     lower-cased parts (stop words included) joined by "_", so
//     "student_id", "StudentID" and "students_id" all give
//     "student", "id", "student_id".
//
// Tokenize never fails; it returns nil when s has no terms. The hashing
// embedder's vectors are built from Tokenize and Words: a change to their
// output must come with a new hashing.Version.
func Tokenize(s string) []string {
	var out []string
	eachWord(s, func(parts []string) {
		out = appendStems(out, parts)
		if len(parts) > 1 {
			out = append(out, joined(parts))
		}
	})
	return out
}

// Words returns the stemmed, lower-cased parts of s in reading order, stop
// words removed, without the joined identifiers Tokenize adds. The hashing
// embedder builds word bigrams and character n-grams from it.
func Words(s string) []string {
	var out []string
	eachWord(s, func(parts []string) {
		out = appendStems(out, parts)
	})
	return out
}

// appendStems appends to out the stems of parts that are not stop words,
// in order, and returns the extended slice.
func appendStems(out, parts []string) []string {
	for _, p := range parts {
		if !IsStopWord(p) {
			out = append(out, Stem(p))
		}
	}
	return out
}

// Parts returns the stemmed, lower-cased parts of s in reading order,
// stop words included ("singers_in_concerts" → "singer", "in", "concert").
// Joining adjacent parts finds multi-word names in a question.
func Parts(s string) []string {
	var out []string
	eachWord(s, func(parts []string) {
		for _, p := range parts {
			out = append(out, Stem(p))
		}
	})
	return out
}

// Identifiers returns, for each word of s that splits into two or more
// parts, its joined form as Tokenize makes it ("StudentID" → "student_id").
func Identifiers(s string) []string {
	var out []string
	eachWord(s, func(parts []string) {
		if len(parts) > 1 {
			out = append(out, joined(parts))
		}
	})
	return out
}

// WordsAndIdentifiers returns Words(s) and Identifiers(s) from one pass
// over s: together they are Tokenize's terms (in another order).
func WordsAndIdentifiers(s string) (words, identifiers []string) {
	eachWord(s, func(parts []string) {
		words = appendStems(words, parts)
		if len(parts) > 1 {
			identifiers = append(identifiers, joined(parts))
		}
	})
	return words, identifiers
}

func joined(parts []string) string {
	var b strings.Builder
	for i, p := range parts {
		if i > 0 {
			b.WriteByte('_')
		}
		b.WriteString(Stem(p))
	}
	return b.String()
}

// eachWord calls f with the lower-cased parts of every word of s.
func eachWord(s string, f func(parts []string)) {
	var parts []string
	start := -1
	flush := func(end int) {
		if start < 0 {
			return
		}
		parts = splitWord(s[start:end], parts[:0])
		if len(parts) > 0 {
			f(parts)
		}
		start = -1
	}
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) {
			if start < 0 {
				start = i
			}
		} else {
			flush(i)
		}
		i += n
	}
	flush(len(s))
}

// class of a rune for splitting: 0 other, 1 lower (or uncased letter),
// 2 upper, 3 digit.
func class(r rune) int {
	switch {
	case unicode.IsDigit(r):
		return 3
	case unicode.IsUpper(r):
		return 2
	case unicode.IsLetter(r), unicode.Is(unicode.Mn, r):
		return 1
	}
	return 0
}

// splitWord splits one word (letters, digits, underscores) into lower-cased
// parts, appending to dst. An ASCII segment is split in place, its parts
// substrings of w (lower-cased copies only when they hold capitals).
func splitWord(w string, dst []string) []string {
	for w != "" {
		seg, rest, _ := strings.Cut(w, "_")
		w = rest
		if seg == "" {
			continue
		}
		if isASCII(seg) {
			dst = splitASCII(seg, dst)
		} else {
			dst = splitRunes(seg, dst)
		}
	}
	return dst
}

// splitRunes is splitWord's loop for a segment of any letters and digits:
// it splits the segment as runes, each part a new lower-cased string.
func splitRunes(seg string, dst []string) []string {
	rs := []rune(seg)
	begin := 0
	for i := 1; i <= len(rs); i++ {
		cut := i == len(rs)
		if !cut {
			cut = cutBetween(class(rs[i-1]), class(rs[i]), i+1 < len(rs) && class(rs[i+1]) == 1)
		}
		if cut {
			dst = append(dst, strings.ToLower(string(rs[begin:i])))
			begin = i
		}
	}
	return dst
}

// cutBetween reports whether a word splits between runes of classes prev
// and cur; nextLower is whether the rune after cur is lower case.
func cutBetween(prev, cur int, nextLower bool) bool {
	switch {
	case prev == 3 && cur != 3, prev != 3 && cur == 3:
		return true // letter↔digit
	case prev == 1 && cur == 2:
		return true // camelCase
	case prev == 2 && cur == 2 && nextLower:
		return true // HTTPServer: cut before the S
	}
	return false
}

// splitASCII is splitWord's loop for a segment of ASCII letters and digits.
func splitASCII(seg string, dst []string) []string {
	begin := 0
	for i := 1; i <= len(seg); i++ {
		if i == len(seg) || cutBetween(asciiClass(seg[i-1]), asciiClass(seg[i]), i+1 < len(seg) && asciiClass(seg[i+1]) == 1) {
			dst = append(dst, strings.ToLower(seg[begin:i]))
			begin = i
		}
	}
	return dst
}

// asciiClass is class for an ASCII byte.
func asciiClass(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return 3
	case 'A' <= c && c <= 'Z':
		return 2
	case 'a' <= c && c <= 'z':
		return 1
	}
	return 0
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// stopWords are function words and question scaffolding that carry no
// information about which table or column a question needs. Content words
// that are also common column names ("name", "id", "number", "count",
// "date", "type") are deliberately not stop words.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an the and or but if of to in on at by for from with without into
	onto over under about as than then so such this that these those there here it its it's they them their
	theirs he him his she her hers we us our ours you your yours i me my mine is are was were be been being am
	do does did doing done have has had having can could should would will shall may might must
	what which who whom whose when where why how
	some own just also very too
	please show list give find tell return get display me s t`) {
		m[w] = true
	}
	return m
}()

// IsStopWord reports whether the lower-case word w is on the stop-word list:
// English function words (articles, pronouns, auxiliaries, prepositions,
// conjunctions), question words, request verbs ("show", "list",
// "give", "find", "return", "display") and the "s" and "t" that
// apostrophes leave ("singer's", "don't"). The list is small and fixed.
// Words that change what a query means are kept: negations and
// quantifiers ("not", "no", "without", "all", "any", "each", "every",
// "only", "other", "same"), and words such as "many", "most", "name",
// "id", "count", "number".
func IsStopWord(w string) bool { return stopWords[w] }

// irregular plurals and words ending in s that are not plurals.
var irregular = map[string]string{
	"people": "person", "children": "child", "men": "man", "women": "woman",
	"feet": "foot", "teeth": "tooth", "mice": "mouse", "geese": "goose",
	"data": "data", "criteria": "criterion", "media": "media", "indices": "index",
	"matrices": "matrix", "vertices": "vertex", "analyses": "analysis",
	"series": "series", "species": "species", "news": "news", "status": "status",
	"statuses": "status", "bus": "bus", "buses": "bus", "gas": "gas", "gases": "gas",
	"yes": "yes", "this": "this", "has": "has", "was": "was", "its": "its",
	"does": "does", "less": "less", "plus": "plus", "always": "always",
	"movies": "movie", "cookies": "cookie", "ties": "tie", "pies": "pie", "lies": "lie",
	"shoes": "shoe", "toes": "toe", "canoes": "canoe", "heroes": "hero", "potatoes": "potato",
	"tomatoes": "tomato", "echoes": "echo", "vetoes": "veto",
	"lives": "life", "wives": "wife", "knives": "knife", "leaves": "leaf", "halves": "half",
	"shelves": "shelf", "wolves": "wolf", "thieves": "thief", "loaves": "loaf",
	"whose": "whose", "those": "those", "these": "these",
}

// Stem maps an English plural to its singular with a few deterministic
// suffix rules; it leaves other words unchanged. It expects a lower-case
// word and returns it unchanged when it is shorter than four bytes or
// contains a digit. In order:
//
//  1. a fixed table of irregular forms and non-plurals ("people" →
//     "person", "children" → "child", "series", "status", "leaves" → "leaf");
//  2. "'s" possessive: "singer's" → "singer";
//  3. "ies" → "y" when more than two letters precede it
//     ("categories" → "category", but "ties" stays via the table);
//  4. "sses", "shes", "ches", "xes", "zzes" → drop "es"
//     ("classes" → "class", "matches" → "match", "boxes" → "box");
//  5. words ending in "ss", "us", "is", "ous", "ics" are kept ("class",
//     "campus", "analysis", "famous", "statistics");
//  6. a final "s" after a letter other than "s" is dropped ("singers" →
//     "singer", "courses" → "course").
//
// It does no other stemming: "running" and "ran" stay as they are.
func Stem(w string) string {
	if v, ok := irregular[w]; ok {
		return v
	}
	w = strings.TrimSuffix(w, "'s")
	n := len(w)
	if n < 4 {
		return w
	}
	for i := 0; i < n; i++ {
		if w[i] >= '0' && w[i] <= '9' {
			return w
		}
		if w[i] >= utf8.RuneSelf {
			return w // leave non-ASCII words alone
		}
	}
	switch {
	case strings.HasSuffix(w, "ies") && n > 5:
		return w[:n-3] + "y"
	case strings.HasSuffix(w, "sses"), strings.HasSuffix(w, "shes"), strings.HasSuffix(w, "ches"),
		strings.HasSuffix(w, "xes"), strings.HasSuffix(w, "zzes"):
		return w[:n-2]
	case strings.HasSuffix(w, "ss"), strings.HasSuffix(w, "us"), strings.HasSuffix(w, "is"),
		strings.HasSuffix(w, "ous"), strings.HasSuffix(w, "ics"):
		return w
	case w[n-1] == 's':
		return w[:n-1]
	}
	return w
}

package bm25

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// referenceSplitWord is splitWord without its ASCII path: every segment
// split as runes (splitRunes), so the tests below hold the ASCII path to
// the general one.
func referenceSplitWord(w string, dst []string) []string {
	for _, seg := range strings.Split(w, "_") {
		if seg != "" {
			dst = splitRunes(seg, dst)
		}
	}
	return dst
}

var splitCases = []string{
	"", "_", "__a__", "a", "A", "ab", "AB", "aB", "Ab", "HTTPServer", "HTTPServerID", "getHTTP2Response", "address2",
	"2address", "x1y2z3", "Singer_ID", "singers_in_concert", "ÜberCool", "straßeName", "名前ID", "Ĳssel_ǅemalX",
	"a_B_c_DE_fG", "ABCdefGHI", "DéjàVu_2024x",
}

func TestSplitWordMatchesReference(t *testing.T) {
	for _, w := range splitCases {
		require.Equal(t, referenceSplitWord(w, nil), splitWord(w, nil), "%q", w)
	}
}

// FuzzSplitWord compares the two on any string: eachWord passes words of
// letters, digits, marks and underscores, but both are defined on all.
func FuzzSplitWord(f *testing.F) {
	for _, w := range splitCases {
		f.Add(w)
	}
	f.Fuzz(func(t *testing.T, w string) {
		require.Equal(t, referenceSplitWord(w, nil), splitWord(w, nil), "%q", w)
	})
}

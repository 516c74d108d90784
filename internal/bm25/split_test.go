package bm25

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// referenceSplitWord is splitWord as it was before its ASCII path: every
// segment split as runes, every part a new string.
func referenceSplitWord(w string, dst []string) []string {
	for _, seg := range strings.Split(w, "_") {
		if seg == "" {
			continue
		}
		rs := []rune(seg)
		begin := 0
		for i := 1; i <= len(rs); i++ {
			cut := i == len(rs)
			if !cut {
				prev, cur := class(rs[i-1]), class(rs[i])
				switch {
				case prev == 3 && cur != 3, prev != 3 && cur == 3:
					cut = true
				case prev == 1 && cur == 2:
					cut = true
				case prev == 2 && cur == 2 && i+1 < len(rs) && class(rs[i+1]) == 1:
					cut = true
				}
			}
			if cut {
				dst = append(dst, strings.ToLower(string(rs[begin:i])))
				begin = i
			}
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

package sqltext

import (
	"sort"
	"strings"
)

// Closest returns the candidate nearest to name by case-insensitive
// Levenshtein distance, or "" when none is within max(1, len(name)/3)
// edits (at most 3) or name itself is a candidate. Ties go to the first in
// sorted order, so the answer is deterministic. A candidate differing from
// name only in case is returned: quoted names are case-sensitive.
func Closest(name string, cands []string) string {
	limit := min(max(len(name)/3, 1), 3)
	sorted := append([]string(nil), cands...)
	sort.Strings(sorted)
	best, bestD := "", limit+1
	for _, c := range sorted {
		if c == name {
			return ""
		}
		if d := EditDistance(strings.ToLower(name), strings.ToLower(c)); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// EditDistance is the Levenshtein distance of a and b, in bytes. Strings
// longer than 256 bytes are not compared: the distance is then reported as
// the longer length.
func EditDistance(a, b string) int {
	if len(a) > 256 || len(b) > 256 {
		return max(len(a), len(b))
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

package knowledge

import (
	"strings"
	"unicode"
)

// NormalizeQuestion is the form in which two questions count as the same
// question asked as written: lower-cased, only letters and digits, one
// space between words ("How many students?" and "how many  students" are
// both "how many students"). Verified examples are reused on it.
func NormalizeQuestion(question string) string {
	var b strings.Builder
	space := false
	for _, r := range question {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			b.WriteRune(unicode.ToLower(r))
		} else {
			space = true
		}
	}
	return b.String()
}

package extract

import "strings"

// Fence is a fenced code block of Markdown text.
type Fence struct {
	Lang    string // the info string's first word, lower-cased; "" when untagged
	Content string // the text between the opening and the closing fence
	Start   int    // byte offset of the opening fence
	End     int    // byte offset just after the closing fence (or the end of the text)
	Closed  bool   // false when the text ended inside the block
}

// Fences returns the fenced code blocks of text, in order. A fence is a run
// of three or more backticks or tildes; it is closed by a run of at least
// as many of the same character. Models do not always follow Markdown, so
// a fence may open anywhere on a line and a block may sit on one line
// ("```sql SELECT 1```"); an unclosed block runs to the end of the text.
func Fences(text string) []Fence {
	var out []Fence
	pos := 0
	for pos < len(text) {
		start, n, c := nextFence(text, pos)
		if start < 0 {
			break
		}
		f := Fence{Start: start}
		body := start + n // just after the opening run
		eol := strings.IndexByte(text[body:], '\n')
		line := text[body:]
		if eol >= 0 {
			line = text[body : body+eol]
		}
		contentStart := body
		if cs, cn := runOf(line, c, n); cs >= 0 {
			// One-line block: ```sql SELECT 1```.
			inner := line[:cs]
			word, rest := firstWord(inner)
			if isLangTag(word) && strings.TrimSpace(rest) != "" && !StartsStatement(inner) {
				f.Lang, inner = strings.ToLower(word), rest
			}
			f.Content, f.End, f.Closed = inner, body+cs+cn, true
			out = append(out, f)
			pos = f.End
			continue
		}
		if word, rest := firstWord(line); isLangTag(word) && strings.TrimSpace(rest) == "" {
			f.Lang = strings.ToLower(word)
			contentStart = body + len(line)
		} else if strings.TrimSpace(line) == "" {
			contentStart = body + len(line)
		}
		if contentStart < len(text) && text[contentStart] == '\n' {
			contentStart++
		}
		cs, cn := runOf(text[contentStart:], c, n)
		if cs < 0 {
			f.Content, f.End = text[contentStart:], len(text)
		} else {
			f.Content, f.End, f.Closed = text[contentStart:contentStart+cs], contentStart+cs+cn, true
		}
		out = append(out, f)
		pos = f.End
	}
	return out
}

// minFence is the shortest run of backticks or tildes that opens a
// fenced code block (Markdown's rule).
const minFence = 3

// maxLangTag is the longest language tag of a code block; a longer first
// word is the block's content (objective-c, the longest common tag, has
// 11 letters).
const maxLangTag = 20

// nextFence finds the next run of at least three backticks or tildes at or
// after pos: its offset, length and character; start is -1 when none.
func nextFence(text string, pos int) (start, n int, c byte) {
	for i := pos; i < len(text); i++ {
		if text[i] != '`' && text[i] != '~' {
			continue
		}
		j := i
		for j < len(text) && text[j] == text[i] {
			j++
		}
		if j-i >= minFence {
			return i, j - i, text[i]
		}
		i = j - 1
	}
	return -1, 0, 0
}

// runOf finds the first run of at least n characters c in s: its offset
// and length, or -1.
func runOf(s string, c byte, n int) (int, int) {
	for i := 0; i < len(s); i++ {
		if s[i] != c {
			continue
		}
		j := i
		for j < len(s) && s[j] == c {
			j++
		}
		if j-i >= n {
			return i, j - i
		}
		i = j - 1
	}
	return -1, 0
}

// firstWord splits s into its first white-space-delimited word and the rest.
func firstWord(s string) (word, rest string) {
	s = strings.TrimLeft(s, " \t\r")
	i := strings.IndexAny(s, " \t\r\n")
	if i < 0 {
		return s, ""
	}
	return s[:i], s[i:]
}

// isLangTag reports whether w looks like a code block's language tag.
func isLangTag(w string) bool {
	if w == "" || len(w) > maxLangTag {
		return false
	}
	for i := 0; i < len(w); i++ {
		c := w[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '+' || c == '.' || c == '#') {
			return false
		}
	}
	return true
}

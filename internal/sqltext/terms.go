package sqltext

// SplitTop splits ts at commas outside parentheses.
func SplitTop(ts []Token) [][]Token {
	var out [][]Token
	depth, start := 0, 0
	for i, t := range ts {
		if t.Kind != Punct {
			continue
		}
		switch t.Text {
		case "(":
			depth++
		case ")":
			depth--
		case ",":
			if depth == 0 {
				out = append(out, ts[start:i])
				start = i + 1
			}
		}
	}
	return append(out, ts[start:])
}

// TrimOrderTerm drops ASC/DESC, NULLS FIRST/LAST and COLLATE name from
// the end of an ORDER BY term.
func TrimOrderTerm(ts []Token) []Token {
	for {
		n := len(ts)
		switch {
		case n >= 1 && (ts[n-1].Is("asc") || ts[n-1].Is("desc")):
			ts = ts[:n-1]
		case n >= 2 && ts[n-2].Is("nulls") && (ts[n-1].Is("first") || ts[n-1].Is("last")):
			ts = ts[:n-2]
		case n >= 2 && ts[n-2].Is("collate"):
			ts = ts[:n-2]
		default:
			return ts
		}
	}
}

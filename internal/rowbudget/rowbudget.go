// Package rowbudget renders a query result as text for a model prompt
// (a judge, an answer step) within a token budget: as many whole rows as
// fit, then an explicit "showing N of M rows" marker, so a large result
// never overflows a model's context and the model knows it sees a part.
package rowbudget

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// DefaultMaxCell is the default longest cell, in runes; longer text is cut
// and ends with "…".
const DefaultMaxCell = 80

// EstimateTokens estimates the tokens of s as generator.EstimateTokens
// does: one token per 4 runes, rounded up.
func EstimateTokens(s string) int { return (utf8.RuneCountInString(s) + 3) / 4 }

// Options configure Fit.
type Options struct {
	// MaxCell bounds each cell in runes (default DefaultMaxCell).
	MaxCell int
	// Total is the number of rows the result really has, when rows holds
	// fewer (a row cap cut it); 0 means len(rows).
	Total int
}

// Fitted is a result rendered within a budget.
type Fitted struct {
	Text  string // header, rows, marker
	Shown int    // rows shown
	Total int    // rows in the result
	// Tokens is EstimateTokens(Text), at most the budget unless even the
	// header and marker alone exceed it (then Shown is 0).
	Tokens int
}

// Marker is the line Fit appends when it leaves rows out:
// "(showing N of M rows)".
func Marker(shown, total int) string {
	return fmt.Sprintf("(showing %d of %d rows)", shown, total)
}

// Fit renders columns and rows as a pipe-separated table (a header line,
// one line per row, NULL for nil, cells cut to Options.MaxCell runes,
// line breaks in cells shown as spaces) holding as many leading rows as fit
// in budget tokens. When rows are left out — by the budget or because
// Options.Total says the result had more — the text ends with
// Marker(shown, total). A budget of 0 or less shows no rows. Fit never
// fails.
func Fit(columns []string, rows [][]any, budget int, opts Options) Fitted {
	maxCell := opts.MaxCell
	if maxCell <= 0 {
		maxCell = DefaultMaxCell
	}
	total := opts.Total
	if total < len(rows) {
		total = len(rows)
	}
	header := line(columns, maxCell)
	// Reserve the marker's worst case, so adding it never breaks the
	// budget.
	reserve := EstimateTokens("\n" + Marker(total, total))
	var b strings.Builder
	b.WriteString(header)
	shown := 0
	chars := utf8.RuneCountInString(header) // runes written so far
	for _, r := range rows {
		l := line(cells(r), maxCell)
		n := utf8.RuneCountInString(l) + 1
		if (chars+n+3)/4+reserve > budget {
			break
		}
		b.WriteByte('\n')
		b.WriteString(l)
		chars += n
		shown++
	}
	if shown < total {
		b.WriteString("\n" + Marker(shown, total))
	}
	text := b.String()
	return Fitted{Text: text, Shown: shown, Total: total, Tokens: EstimateTokens(text)}
}

func cells(r []any) []string {
	out := make([]string, len(r))
	for i, v := range r {
		switch x := v.(type) {
		case nil:
			out[i] = "NULL"
		case []byte:
			out[i] = fmt.Sprintf("<%d bytes>", len(x))
		default:
			out[i] = fmt.Sprint(x)
		}
	}
	return out
}

func line(cells []string, maxCell int) string {
	parts := make([]string, len(cells))
	for i, c := range cells {
		c = strings.Map(func(r rune) rune {
			if r == '\n' || r == '\r' || r == '\t' {
				return ' '
			}
			return r
		}, c)
		c = strings.ReplaceAll(c, "|", "¦")
		if utf8.RuneCountInString(c) > maxCell {
			c = string([]rune(c)[:maxCell-1]) + "…"
		}
		parts[i] = c
	}
	return strings.Join(parts, " | ")
}

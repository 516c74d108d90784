package judge

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/stagekit"
)

// DefaultResultBudget is the token budget of a result sample when
// Options.ResultBudget is zero.
const DefaultResultBudget = 2000

// Cell width bounds of a sample, in runes.
const (
	maxCell = 80
	minCell = 8
)

// Sample renders the first rows of res as text within budget tokens (a
// token per four characters, as every stage estimates them), for a model
// to read. Its first line always says how much is shown:
//
//	showing 12 of 5,000 rows (cut to fit a budget of 2,000 tokens)
//	columns: name | age
//	'Alice' | 31
//	NULL | 28
//
// M is res.RowCount (len(res.Rows) when RowCount is unset); a truncated
// result says "of 1,000+ rows" and that execution stopped at the row cap.
// Strings are single-quoted (so '10' reads differently from 10), NULL is
// NULL, blobs are "<blob N bytes>", newlines in values are escaped; each
// cell is cut to fit, at most 80 characters. Rows are added while the
// whole text fits the budget; the column line and the marker are always
// there, so a tiny budget gives "showing 0 of M rows". A budget <= 0 means
// DefaultResultBudget. A nil result renders as "no result". A result with
// an error renders the error. Sample never fails.
func Sample(res *text2sql.Result, budget int) string {
	if budget <= 0 {
		budget = DefaultResultBudget
	}
	if res == nil {
		return "no result"
	}
	if res.Error != nil {
		return "the query failed: " + res.Error.Error()
	}
	total := res.RowCount
	if total < len(res.Rows) {
		total = len(res.Rows)
	}
	of := formatInt(total)
	if res.Truncated {
		of += "+"
	}
	cols := len(res.Columns)
	for _, r := range res.Rows {
		cols = max(cols, len(r))
	}
	// Cells narrow enough for a few rows to fit.
	cell := maxCell
	if cols > 0 {
		cell = min(max(budget*4/(cols*4), minCell), maxCell)
	}
	header := "columns: " + strings.Join(cutAll(res.Columns, cell), " | ")
	var rows []string
	size := stagekit.EstimateTokens(header) + 24 // the marker line
	for _, r := range res.Rows {
		line := make([]string, len(r))
		for i, v := range r {
			line[i] = value(v, cell)
		}
		s := strings.Join(line, " | ")
		t := stagekit.EstimateTokens(s + "\n")
		if size+t > budget {
			break
		}
		size += t
		rows = append(rows, s)
	}
	marker := fmt.Sprintf("showing %s of %s rows", formatInt(len(rows)), of)
	switch {
	case len(rows) < len(res.Rows):
		marker += fmt.Sprintf(" (cut to fit a budget of %s tokens)", formatInt(budget))
	case len(rows) < total:
		marker += " (the result holds more rows than were read)"
	}
	if res.Truncated {
		marker += "; execution stopped at the row cap, so the query returns more rows"
	}
	var b strings.Builder
	b.WriteString(marker + "\n" + header)
	for _, r := range rows {
		b.WriteString("\n" + r)
	}
	return b.String()
}

// value renders one cell.
func value(v any, n int) string {
	var s string
	switch x := v.(type) {
	case nil:
		return "NULL"
	case string:
		s = "'" + strings.ReplaceAll(escape(x), "'", "''") + "'"
	case []byte:
		return "<blob " + strconv.Itoa(len(x)) + " bytes>"
	case time.Time:
		s = x.Format(time.RFC3339Nano)
	case float64:
		s = strconv.FormatFloat(x, 'g', -1, 64)
	case float32:
		s = strconv.FormatFloat(float64(x), 'g', -1, 32)
	default:
		s = escape(fmt.Sprint(v))
	}
	return cut(s, n)
}

// escape makes a value one line.
func escape(s string) string {
	return strings.NewReplacer("\r", `\r`, "\n", `\n`, "\t", `\t`).Replace(s)
}

func cutAll(ss []string, n int) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = cut(escape(s), n)
	}
	return out
}

// cut returns s cut to at most n runes, "…" included.
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:max(n-1, 0)]) + "…"
}

// formatInt writes n with thousands separators: 5,000.
func formatInt(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

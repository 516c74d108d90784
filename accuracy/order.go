package accuracy

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/sqltext"
)

// Warning kinds about a gold query's ordering, found by OrderCheck.
const (
	// WarnOrderNulls: an ORDER BY key is NULL in some rows. SQLite sorts
	// NULLs first in ascending order and last in descending order; other
	// engines differ, and a question rarely means "the NULL one".
	WarnOrderNulls = "order_by_nulls"
	// WarnOrderNumericText: an ORDER BY key holds numbers stored as text,
	// which sort as text ('10' < '9').
	WarnOrderNumericText = "order_by_numeric_text"
	// WarnOrderUnchecked: the ordering could not be checked (the probe
	// query failed or the clause is not understood).
	WarnOrderUnchecked = "order_unchecked"
)

// tieWindow is how many rows past the LIMIT the probe reads to see a tie
// group that straddles it.
const tieWindow = 64

// OrderReport is what OrderCheck found about a query's ORDER BY and LIMIT.
type OrderReport struct {
	// Nondeterministic is set when the query's LIMIT (or OFFSET) cuts
	// through rows that tie on every ORDER BY key (or, without ORDER BY,
	// through rows in an unspecified order) and differ in what the query
	// returns: another engine or plan may return other rows.
	Nondeterministic bool `json:"nondeterministic"`
	// Detail describes the tie: the cut position and the tied rows.
	Detail string `json:"detail,omitempty"`
	// Warnings are "kind: message" lines, kinds WarnOrderNulls,
	// WarnOrderNumericText and WarnOrderUnchecked.
	Warnings []string `json:"warnings,omitempty"`
}

// OrderCheck examines the top-level ORDER BY and LIMIT of sql, a query
// whose own result is res, by running a probe through exec: the query with
// its ORDER BY keys added to the select list and without its LIMIT, read
// up to tieWindow rows past the limit. It returns nil when sql has neither
// ORDER BY nor LIMIT at its top level. A probe that fails gives a
// WarnOrderUnchecked warning, not an error; the error return is the
// executor's (it cannot work, or ctx ended).
//
// Compound queries (UNION, …) are probed when their ORDER BY keys are
// result columns (by position or name); queries with SELECT DISTINCT when
// every key is a result column.
func OrderCheck(ctx context.Context, exec text2sql.Executor, sql string, res *text2sql.Result) (*OrderReport, error) {
	t := parseTop(sql)
	if t.orderBy < 0 && t.limit < 0 {
		return nil, nil
	}
	rep := &OrderReport{}
	unchecked := func(why string) (*OrderReport, error) {
		rep.Warnings = append(rep.Warnings, WarnOrderUnchecked+": "+why)
		return rep, nil
	}
	if t.selStart < 0 || t.selEnd <= t.selStart || res == nil {
		return unchecked("no select list found at the top level")
	}
	ncols := len(res.Columns)
	if ncols == 0 && len(res.Rows) > 0 {
		ncols = len(res.Rows[0])
	}

	// LIMIT n [OFFSET m] or LIMIT m, n.
	lo, hi := 0, -1
	if t.limit >= 0 {
		lt := t.toks[t.limit+1 : t.limitEnd]
		ints := func(ts ...sqltext.Token) ([]int, bool) {
			var out []int
			for _, x := range ts {
				n, err := strconv.Atoi(x.Text)
				if x.Kind != sqltext.Number || err != nil || n < 0 {
					return nil, false
				}
				out = append(out, n)
			}
			return out, true
		}
		switch {
		case len(lt) == 1:
			if v, ok := ints(lt[0]); ok {
				hi = v[0]
			}
		case len(lt) == 3 && lt[1].Is("offset"):
			if v, ok := ints(lt[0], lt[2]); ok {
				lo, hi = v[1], v[1]+v[0]
			}
		case len(lt) == 3 && lt[1].Text == ",":
			if v, ok := ints(lt[0], lt[2]); ok {
				lo, hi = v[0], v[0]+v[1]
			}
		}
		if hi < 0 {
			return unchecked("LIMIT is not a literal count")
		}
	}

	// ORDER BY keys: a result column index, or an expression to append.
	var keyCols []int
	var appended []string
	if t.orderBy >= 0 {
		end := len(t.toks)
		if t.limit > t.orderBy {
			end = t.limit
		}
		aliases := selectAliases(t)
		for _, term := range sqltext.SplitTop(t.toks[t.orderBy+2 : end]) {
			term = sqltext.TrimOrderTerm(term)
			if len(term) == 0 {
				return unchecked("empty ORDER BY term")
			}
			if len(term) == 1 {
				tok := term[0]
				if tok.Kind == sqltext.Number {
					k, err := strconv.Atoi(tok.Text)
					if err != nil || k < 1 || k > ncols {
						return unchecked("ORDER BY position " + tok.Text + " is out of range")
					}
					keyCols = append(keyCols, k-1)
					continue
				}
				if name, ok := tok.Ident(); ok {
					if i, ok := aliases[strings.ToLower(name)]; ok && i < ncols {
						keyCols = append(keyCols, i)
						continue
					}
					if t.compound || t.distinct {
						if i := columnIndex(res.Columns, name); i >= 0 {
							keyCols = append(keyCols, i)
							continue
						}
					}
				}
			}
			if t.compound || t.distinct {
				return unchecked("ORDER BY term of a compound or DISTINCT query is not a result column")
			}
			keyCols = append(keyCols, ncols+len(appended))
			appended = append(appended, span(sql, term))
		}
	}

	// The probe: keys appended to the select list, LIMIT removed.
	insert := t.toks[t.selEnd-1].Pos + len(t.toks[t.selEnd-1].Text)
	var b strings.Builder
	b.WriteString(sql[:insert])
	for i, e := range appended {
		fmt.Fprintf(&b, ", %s AS __t2s_k%d", e, i+1)
	}
	if t.limit >= 0 {
		b.WriteString(sql[insert:t.toks[t.limit].Pos])
		last := t.toks[t.limitEnd-1]
		b.WriteString(sql[last.Pos+len(last.Text):])
	} else {
		b.WriteString(sql[insert:])
	}
	maxRows := 1000
	if hi >= 0 {
		maxRows = hi + tieWindow
	}
	pr, err := exec.Execute(ctx, text2sql.ExecuteRequest{SQL: b.String(), MaxRows: maxRows})
	if err != nil {
		return nil, err
	}
	if pr.Error != nil {
		return unchecked("probe failed: " + pr.Error.Error())
	}
	rows := pr.Rows
	enc := &encoder{}
	keyOf := func(r []any) string {
		var s strings.Builder
		for _, c := range keyCols {
			if c < len(r) {
				s.WriteString(enc.cell(r[c]))
			}
		}
		return s.String()
	}
	visible := func(r []any) string {
		var s strings.Builder
		for c := 0; c < ncols && c < len(r); c++ {
			s.WriteString(enc.cell(r[c]))
		}
		return s.String()
	}

	// Ties across the cut(s).
	if hi >= 0 {
		var cuts []int
		if lo > 0 && lo < len(rows) {
			cuts = append(cuts, lo)
		}
		if hi > 0 && hi < len(rows) {
			cuts = append(cuts, hi)
		}
		for _, cut := range cuts {
			k := keyOf(rows[cut])
			if keyOf(rows[cut-1]) != k {
				continue
			}
			i, j := cut-1, cut
			for i > 0 && keyOf(rows[i-1]) == k {
				i--
			}
			for j+1 < len(rows) && keyOf(rows[j+1]) == k {
				j++
			}
			distinct := map[string]bool{}
			for r := i; r <= j; r++ {
				distinct[visible(rows[r])] = true
			}
			if len(distinct) > 1 {
				rep.Nondeterministic = true
				what := "tie on every ORDER BY key"
				if len(keyCols) == 0 {
					what = "come in no defined order (no ORDER BY)"
				}
				more := ""
				if j+1 == len(rows) && len(rows) == maxRows {
					more = " or more"
				}
				rep.Detail = fmt.Sprintf("the LIMIT cuts after row %d, but rows %d to %d%s %s and differ in the selected columns",
					cut, i+1, j+1, more, what)
				break
			}
		}
	}

	// Warnings on the key values the result depends on.
	if len(keyCols) > 0 {
		n := len(rows)
		if hi >= 0 && hi+1 < n {
			n = hi + 1
		}
		var nulls, numText bool
		var example string
		for _, r := range rows[:n] {
			for _, c := range keyCols {
				if c >= len(r) {
					continue
				}
				switch v := r[c].(type) {
				case nil:
					nulls = true
				case string:
					if looksNumeric(v) {
						if !numText {
							example = v
						}
						numText = true
					}
				}
			}
		}
		if nulls {
			rep.Warnings = append(rep.Warnings, WarnOrderNulls+": an ORDER BY key is NULL in some rows; SQLite sorts NULLs first in ascending order (last in descending)")
		}
		if numText {
			rep.Warnings = append(rep.Warnings, WarnOrderNumericText+": an ORDER BY key holds numbers stored as text (e.g. "+strconv.Quote(example)+"), which sort as text: '10' < '9'")
		}
	}
	return rep, nil
}

func looksNumeric(s string) bool {
	s = strings.TrimSpace(s)
	if s == "" {
		return false
	}
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}

func columnIndex(cols []string, name string) int {
	for i, c := range cols {
		if strings.EqualFold(c, name) {
			return i
		}
	}
	return -1
}

// span is the source text from the first to the last token of ts.
func span(sql string, ts []sqltext.Token) string {
	last := ts[len(ts)-1]
	return sql[ts[0].Pos : last.Pos+len(last.Text)]
}

// selectAliases maps the lower-cased alias of each top-level select item
// (AS alias, or a trailing bare name after an expression) to its position.
func selectAliases(t top) map[string]int {
	out := map[string]int{}
	for i, item := range sqltext.SplitTop(t.toks[t.selStart:t.selEnd]) {
		n := len(item)
		if n < 2 {
			continue
		}
		name, ok := item[n-1].Ident()
		if !ok {
			continue
		}
		prev := item[n-2]
		implicit := prev.Kind != sqltext.Punct || prev.Text == ")"
		if prev.Is("as") || implicit && !prev.Is("distinct") {
			out[strings.ToLower(name)] = i
		}
	}
	return out
}

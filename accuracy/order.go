package accuracy

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/sqlparse"
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
	q, sel := parseTop(sql)
	if q == nil {
		return nil, nil
	}
	// Only LIMIT count [OFFSET off] and LIMIT off, count cut the rows.
	lim := q.Limit
	if lim != nil && (lim.Count == nil || lim.Fetch) {
		lim = nil
	}
	if len(q.OrderBy) == 0 && lim == nil {
		return nil, nil
	}
	rep := &OrderReport{}
	unchecked := func(why string) (*OrderReport, error) {
		rep.Warnings = append(rep.Warnings, WarnOrderUnchecked+": "+why)
		return rep, nil
	}
	if sel == nil || sel.Items[0].From == sel.Items[len(sel.Items)-1].To || res == nil {
		return unchecked("no select list found at the top level")
	}
	_, compound := q.Body.(*sqlparse.SetOp)
	ncols := len(res.Columns)
	if ncols == 0 && len(res.Rows) > 0 {
		ncols = len(res.Rows[0])
	}

	// The rows kept: [lo, hi), hi -1 without LIMIT.
	lo, hi := 0, -1
	if lim != nil {
		count, ok := literalCount(lim.Count)
		off := 0
		if lim.Offset != nil {
			var okOff bool
			off, okOff = literalCount(lim.Offset)
			ok = ok && okOff
		}
		if !ok {
			return unchecked("LIMIT is not a literal count")
		}
		lo, hi = off, off+count
	}

	// ORDER BY keys: a result column index, or an expression to append.
	var keyCols []int
	var appended []string
	aliases := map[string]int{}
	for i, it := range sel.Items {
		if it.Alias != nil {
			aliases[strings.ToLower(it.Alias.Name)] = i
		}
	}
	for _, term := range q.OrderBy {
		e := term.Expr
		for c, ok := e.(*sqlparse.Collate); ok; c, ok = e.(*sqlparse.Collate) {
			e = c.X
		}
		if e.Extent().From == e.Extent().To {
			return unchecked("empty ORDER BY term")
		}
		switch v := e.(type) {
		case *sqlparse.Literal:
			if v.Kind == sqlparse.Number {
				k, err := strconv.Atoi(v.Text())
				if err != nil || k < 1 || k > ncols {
					return unchecked("ORDER BY position " + v.Text() + " is out of range")
				}
				keyCols = append(keyCols, k-1)
				continue
			}
		case *sqlparse.Ident:
			if i, ok := aliases[strings.ToLower(v.Name)]; ok && i < ncols {
				keyCols = append(keyCols, i)
				continue
			}
			if compound || sel.Distinct {
				if i := columnIndex(res.Columns, v.Name); i >= 0 {
					keyCols = append(keyCols, i)
					continue
				}
			}
		}
		if compound || sel.Distinct {
			return unchecked("ORDER BY term of a compound or DISTINCT query is not a result column")
		}
		keyCols = append(keyCols, ncols+len(appended))
		appended = append(appended, e.Text())
	}

	// The probe: keys appended to the select list, LIMIT removed.
	insert := sel.Items[len(sel.Items)-1].End
	var b strings.Builder
	b.WriteString(sql[:insert])
	for i, e := range appended {
		fmt.Fprintf(&b, ", %s AS __t2s_k%d", e, i+1)
	}
	if lim != nil {
		b.WriteString(sql[insert:lim.Pos])
		b.WriteString(sql[lim.End:])
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

// literalCount returns the value of a LIMIT or OFFSET that is a
// non-negative integer literal.
func literalCount(e sqlparse.Expr) (int, bool) {
	l, ok := e.(*sqlparse.Literal)
	if !ok || l.Kind != sqlparse.Number {
		return 0, false
	}
	n, err := strconv.Atoi(l.Text())
	return n, err == nil && n >= 0
}

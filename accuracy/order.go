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
	lim := cuttingLimit(q.Limit)
	if len(q.OrderBy) == 0 && lim == nil {
		return nil, nil
	}
	unchecked := func(why string) (*OrderReport, error) {
		return &OrderReport{Warnings: []string{WarnOrderUnchecked + ": " + why}}, nil
	}
	if sel == nil || sel.Items[0].From == sel.Items[len(sel.Items)-1].To || res == nil {
		return unchecked("no select list found at the top level")
	}
	lo, hi, ok := keptRows(lim)
	if !ok {
		return unchecked("LIMIT is not a literal count")
	}
	keys, why := orderKeysOf(q, sel, res)
	if why != "" {
		return unchecked(why)
	}
	maxRows := 1000
	if hi >= 0 {
		maxRows = hi + tieWindow
	}
	pr, err := exec.Execute(ctx, text2sql.ExecuteRequest{SQL: probeSQL(sql, sel, lim, keys.appended), MaxRows: maxRows})
	if err != nil {
		return nil, err
	}
	if pr.Error != nil {
		return unchecked("probe failed: " + pr.Error.Error())
	}
	rep := &OrderReport{}
	if hi >= 0 {
		rep.Detail = keys.tieAtCut(pr.Rows, []int{lo, hi}, maxRows)
		rep.Nondeterministic = rep.Detail != ""
	}
	rep.Warnings = keys.warnings(pr.Rows, hi)
	return rep, nil
}

// cuttingLimit returns lim when it cuts the rows (LIMIT count [OFFSET
// off] or LIMIT off, count), nil otherwise.
func cuttingLimit(lim *sqlparse.Limit) *sqlparse.Limit {
	if lim != nil && (lim.Count == nil || lim.Fetch) {
		return nil
	}
	return lim
}

// keptRows returns the rows lim keeps, [lo, hi), hi -1 without a limit;
// ok is false when its count or offset is not a literal.
func keptRows(lim *sqlparse.Limit) (lo, hi int, ok bool) {
	if lim == nil {
		return 0, -1, true
	}
	count, ok := literalCount(lim.Count)
	off := 0
	if lim.Offset != nil {
		var okOff bool
		off, okOff = literalCount(lim.Offset)
		ok = ok && okOff
	}
	return off, off + count, ok
}

// orderKeys are a query's ORDER BY keys as probe columns.
type orderKeys struct {
	// cols is each key's column in the probe's rows: a result column, or
	// one appended after the ncols result columns.
	cols []int
	// appended is the text of each key expression appended to the select
	// list.
	appended []string
	ncols    int
	enc      encoder
}

// orderKeysOf resolves q's ORDER BY terms to probe columns: a position
// or alias names a result column; any other term is appended, except in
// a compound or DISTINCT query, where a term must name a result column.
// why says what could not be resolved ("" when all were).
func orderKeysOf(q *sqlparse.Query, sel *sqlparse.Select, res *text2sql.Result) (keys *orderKeys, why string) {
	_, compound := q.Body.(*sqlparse.SetOp)
	keys = &orderKeys{ncols: len(res.Columns)}
	if keys.ncols == 0 && len(res.Rows) > 0 {
		keys.ncols = len(res.Rows[0])
	}
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
			return nil, "empty ORDER BY term"
		}
		col, why := keys.resultColumn(e, aliases, res.Columns, compound || sel.Distinct)
		switch {
		case why != "":
			return nil, why
		case col >= 0:
			keys.cols = append(keys.cols, col)
		case compound || sel.Distinct:
			return nil, "ORDER BY term of a compound or DISTINCT query is not a result column"
		default:
			keys.cols = append(keys.cols, keys.ncols+len(keys.appended))
			keys.appended = append(keys.appended, e.Text())
		}
	}
	return keys, ""
}

// resultColumn returns the result column ORDER BY term e names, -1 when
// it names none: a position, an alias (aliases: select-list index by
// lower-cased alias) or, when byName (a compound or DISTINCT query), a
// result column's name. why is set for a position out of range.
func (k *orderKeys) resultColumn(e sqlparse.Expr, aliases map[string]int, columns []string, byName bool) (col int, why string) {
	switch v := e.(type) {
	case *sqlparse.Literal:
		if v.Kind == sqlparse.Number {
			n, err := strconv.Atoi(v.Text())
			if err != nil || n < 1 || n > k.ncols {
				return -1, "ORDER BY position " + v.Text() + " is out of range"
			}
			return n - 1, ""
		}
	case *sqlparse.Ident:
		if i, ok := aliases[strings.ToLower(v.Name)]; ok && i < k.ncols {
			return i, ""
		}
		if byName {
			return columnIndex(columns, v.Name), ""
		}
	}
	return -1, ""
}

// probeSQL returns sql with the appended keys added to its select list
// (sel) as __t2s_k1, __t2s_k2, … and its LIMIT (lim, if any) removed.
func probeSQL(sql string, sel *sqlparse.Select, lim *sqlparse.Limit, appended []string) string {
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
	return b.String()
}

// key encodes probe row r's ORDER BY key values.
func (k *orderKeys) key(r []any) string {
	var s strings.Builder
	for _, c := range k.cols {
		if c < len(r) {
			s.WriteString(k.enc.cell(r[c]))
		}
	}
	return s.String()
}

// visible encodes probe row r's result columns.
func (k *orderKeys) visible(r []any) string {
	var s strings.Builder
	for c := 0; c < k.ncols && c < len(r); c++ {
		s.WriteString(k.enc.cell(r[c]))
	}
	return s.String()
}

// tieAtCut describes the first of cuts (the offset, then the end of the
// kept rows) that falls inside a group of probe rows tying on every key
// and differing in the result columns; "" when none does. maxRows is the
// probe's row cap: a group reaching it may go on.
func (k *orderKeys) tieAtCut(rows [][]any, cuts []int, maxRows int) string {
	for _, cut := range cuts {
		if cut <= 0 || cut >= len(rows) {
			continue
		}
		key := k.key(rows[cut])
		if k.key(rows[cut-1]) != key {
			continue
		}
		i, j := cut-1, cut
		for i > 0 && k.key(rows[i-1]) == key {
			i--
		}
		for j+1 < len(rows) && k.key(rows[j+1]) == key {
			j++
		}
		distinct := map[string]bool{}
		for r := i; r <= j; r++ {
			distinct[k.visible(rows[r])] = true
		}
		if len(distinct) < 2 {
			continue
		}
		what := "tie on every ORDER BY key"
		if len(k.cols) == 0 {
			what = "come in no defined order (no ORDER BY)"
		}
		more := ""
		if j+1 == len(rows) && len(rows) == maxRows {
			more = " or more"
		}
		return fmt.Sprintf("the LIMIT cuts after row %d, but rows %d to %d%s %s and differ in the selected columns",
			cut, i+1, j+1, more, what)
	}
	return ""
}

// warnings returns the warnings on the key values the result depends on:
// those of the probe rows up to one past the kept rows' end (hi, -1 for
// all).
func (k *orderKeys) warnings(rows [][]any, hi int) []string {
	if len(k.cols) == 0 {
		return nil
	}
	n := len(rows)
	if hi >= 0 && hi+1 < n {
		n = hi + 1
	}
	var nulls, numText bool
	var example string
	for _, r := range rows[:n] {
		for _, c := range k.cols {
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
	var out []string
	if nulls {
		out = append(out, WarnOrderNulls+": an ORDER BY key is NULL in some rows; SQLite sorts NULLs first in ascending order (last in descending)")
	}
	if numText {
		out = append(out, WarnOrderNumericText+": an ORDER BY key holds numbers stored as text (e.g. "+strconv.Quote(example)+"), which sort as text: '10' < '9'")
	}
	return out
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

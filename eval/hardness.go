package eval

import (
	"encoding/json"
	"errors"
)

// The Spider hardness levels, and Unknown for a question without one.
const (
	HardnessEasy   = "easy"
	HardnessMedium = "medium"
	HardnessHard   = "hard"
	HardnessExtra  = "extra"
	Unknown        = "unknown"
)

// Spider's operator indexes (test-suite-sql-eval process_sql WHERE_OPS).
const spiderOpLike = 9

// SpiderHardness classifies a Spider gold query as easy, medium, hard or
// extra from its parsed form, the "sql" object of a Spider dev.json or
// train.json item (the structure test-suite-sql-eval's process_sql.get_sql
// builds). It counts, as the evaluator's eval_hardness does:
//
//   - component 1: WHERE, GROUP BY, ORDER BY and LIMIT present, one per
//     table unit of FROM past the first (joins), one per OR in the FROM,
//     WHERE and HAVING conditions, one per LIKE among them;
//   - component 2: nested queries, i.e. subqueries in those conditions
//     and INTERSECT, UNION and EXCEPT;
//   - others: more than one aggregate (counting select items, WHERE
//     conditions under NOT, GROUP BY and ORDER BY columns with an
//     aggregate, and — an artefact of the evaluator kept for fidelity —
//     every NOT condition and AND/OR connective of HAVING), more than one
//     select item, more than one WHERE condition, more than one GROUP BY
//     column;
//
// then easy: c1 ≤ 1, others 0, c2 0; medium: (others ≤ 2, c1 ≤ 1, c2 0)
// or (c1 ≤ 2, others < 2, c2 0); hard: (others > 2, c1 ≤ 2, c2 0) or
// (2 < c1 ≤ 3, others ≤ 2, c2 0) or (c1 ≤ 1, others 0, c2 ≤ 1); else
// extra. On the 1,034 Spider dev questions this gives the published
// split: 248 easy, 446 medium, 174 hard, 166 extra.
//
// This is an independent implementation of those rules over the JSON; it
// returns an error for JSON that is not such an object.
func SpiderHardness(parsed json.RawMessage) (string, error) {
	var v any
	if err := json.Unmarshal(parsed, &v); err != nil {
		return "", err
	}
	return spiderHardness(v)
}

// spiderHardness is SpiderHardness of the decoded JSON.
func spiderHardness(v any) (string, error) {
	sql, ok := v.(map[string]any)
	if !ok {
		return "", errors.New("eval: Spider sql is not an object")
	}
	return hardness(component1(sql), len(nestedSQL(sql)), countOthers(sql)), nil
}

// hardness is the evaluator's eval_hardness of its three counts: c1
// (count_component1), c2 (count_component2) and others (count_others).
func hardness(c1, c2, others int) string {
	switch {
	case c1 <= 1 && others == 0 && c2 == 0:
		return HardnessEasy
	case (others <= 2 && c1 <= 1 && c2 == 0) || (c1 <= 2 && others < 2 && c2 == 0):
		return HardnessMedium
	case (others > 2 && c1 <= 2 && c2 == 0) || (2 < c1 && c1 <= 3 && others <= 2 && c2 == 0) || (c1 <= 1 && others == 0 && c2 <= 1):
		return HardnessHard
	}
	return HardnessExtra
}

func list(v any) []any {
	l, _ := v.([]any)
	return l
}

// units returns the cond units (even positions) and the connectives (odd
// positions) of a condition list.
func units(cond any) (cus, conj []any) {
	for i, x := range list(cond) {
		if i%2 == 0 {
			cus = append(cus, x)
		} else {
			conj = append(conj, x)
		}
	}
	return cus, conj
}

func fromOf(sql map[string]any) map[string]any {
	f, _ := sql["from"].(map[string]any)
	return f
}

// conditions returns the cond units and connectives of FROM … ON, WHERE
// and HAVING together.
func conditions(sql map[string]any) (cus, conj []any) {
	for _, c := range []any{fromOf(sql)["conds"], sql["where"], sql["having"]} {
		u, j := units(c)
		cus, conj = append(cus, u...), append(conj, j...)
	}
	return cus, conj
}

func component1(sql map[string]any) int {
	n := 0
	for _, k := range []string{"where", "groupBy", "orderBy"} {
		if len(list(sql[k])) > 0 {
			n++
		}
	}
	if sql["limit"] != nil {
		n++
	}
	if tu := len(list(fromOf(sql)["table_units"])); tu > 0 {
		n += tu - 1
	}
	cus, conj := conditions(sql)
	for _, c := range conj {
		if c == "or" {
			n++
		}
	}
	for _, cu := range cus {
		if op, ok := index(cu, 1).(float64); ok && int(op) == spiderOpLike {
			n++
		}
	}
	return n
}

func index(v any, i int) any {
	l := list(v)
	if i < len(l) {
		return l[i]
	}
	return nil
}

func nestedSQL(sql map[string]any) []any {
	var out []any
	cus, _ := conditions(sql)
	for _, cu := range cus {
		for _, i := range []int{3, 4} {
			if m, ok := index(cu, i).(map[string]any); ok {
				out = append(out, m)
			}
		}
	}
	for _, k := range []string{"intersect", "except", "union"} {
		if sql[k] != nil {
			out = append(out, sql[k])
		}
	}
	return out
}

// hasAgg is the evaluator's has_agg: unit[0] != 0 in Python, for a unit
// that is a list (agg id, or the NOT flag of a cond unit) or a string
// (a connective, whose first character is never 0).
func hasAgg(u any) bool {
	switch x := u.(type) {
	case string:
		return x != ""
	case []any:
		if len(x) == 0 {
			return false
		}
		switch h := x[0].(type) {
		case bool:
			return h
		case float64:
			return h != 0
		case nil:
			return false
		}
		return true
	}
	return false
}

func countAgg(us []any) int {
	n := 0
	for _, u := range us {
		if hasAgg(u) {
			n++
		}
	}
	return n
}

// beyondOne is the Spider evaluator's count_others over counts: how many
// of them exceed 1 (aggregates, select items, where units, group-by
// columns).
func beyondOne(counts ...int) int {
	n := 0
	for _, c := range counts {
		if c > 1 {
			n++
		}
	}
	return n
}

func countOthers(sql map[string]any) int {
	n := 0
	sel := list(index(sql["select"], 1))
	where := list(sql["where"])
	groupBy := list(sql["groupBy"])
	wcus, _ := units(sql["where"])
	agg := countAgg(sel) + countAgg(wcus) + countAgg(groupBy)
	if ob := list(sql["orderBy"]); len(ob) > 0 {
		var cols []any
		for _, vu := range list(index(ob, 1)) {
			if c := index(vu, 1); c != nil {
				cols = append(cols, c)
			}
		}
		for _, vu := range list(index(ob, 1)) {
			if c := index(vu, 2); c != nil {
				cols = append(cols, c)
			}
		}
		agg += countAgg(cols)
	}
	agg += countAgg(list(sql["having"]))
	return n + beyondOne(agg, len(sel), len(where), len(groupBy))
}

package accuracy

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/big"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	text2sql "github.com/text2sql-go/text2sql"
)

// Mode is how two query results are compared.
type Mode string

// The comparison modes.
const (
	// ModeSpider compares as the Spider test-suite evaluator does
	// (test-suite-sql-eval exec_eval.py, result_eq): both empty is a match
	// (whatever the column counts); otherwise the row counts and column
	// counts must be equal, and some one-to-one mapping of the predicted
	// columns onto the gold columns must make the rows equal as a multiset
	// (duplicates count) or, when Comparison.Ordered, in sequence. Column
	// names are ignored.
	ModeSpider Mode = "spider"
	// ModeBIRD compares as the BIRD evaluator does (bird-bench mini_dev
	// evaluation_ex.py): set(pred rows) == set(gold rows). Row order and
	// duplicates are ignored, column order matters, no permutation is
	// tried. Two empty results are equal.
	ModeBIRD Mode = "bird"
	// ModeStrict compares rows in sequence with the column order fixed;
	// duplicates count and the column counts must be equal (a result with
	// neither column names nor rows has no known width). Two results
	// without rows are equal when their column counts are.
	ModeStrict Mode = "strict"
)

// Modes lists the comparison modes.
var Modes = []Mode{ModeSpider, ModeBIRD, ModeStrict}

// ParseMode returns the Mode named s ("spider", "bird" or "strict",
// case-insensitive), or an error naming the valid modes.
func ParseMode(s string) (Mode, error) {
	m := Mode(strings.ToLower(strings.TrimSpace(s)))
	switch m {
	case ModeSpider, ModeBIRD, ModeStrict:
		return m, nil
	}
	return "", fmt.Errorf("accuracy: unknown comparison mode %q (want spider, bird or strict)", s)
}

// MaxPermutations bounds the column permutations ModeSpider tries on one
// pair of results. Candidates are first pruned to the mappings under which
// every value of a predicted column occurs in the gold column it maps to,
// so only results with many interchangeable columns come near it; beyond
// it the pair is reported as not matching with ReasonPermutationLimit.
const MaxPermutations = 100000

// MaxDiffRows is the number of missing and extra rows a Diff lists.
const MaxDiffRows = 5

// Comparison says how Compare compares two results.
type Comparison struct {
	Mode Mode `json:"mode"` // the comparison mode
	// Ordered compares rows in sequence in ModeSpider. ModeBIRD ignores it
	// (never ordered); ModeStrict is always ordered.
	Ordered bool `json:"ordered"`
	// Digits is the numeric tolerance: 0 (the default, as in both official
	// scorers) means numbers must be exactly equal (1 == 1.0 still holds);
	// n > 0 rounds every non-integral number to n significant decimal
	// digits before comparing, so 0.30000000000000004 equals 0.3 with
	// Digits 12 (a relative tolerance of about 5·10^-n, with the usual
	// rounding-boundary caveat).
	Digits int `json:"digits,omitempty"`
	// ValidUTF8 drops invalid UTF-8 bytes from text before comparing, as
	// the Spider evaluator's text_factory does. Score sets it in ModeSpider.
	ValidUTF8 bool `json:"-"`
}

// Reasons a Diff gives for a mismatch.
const (
	ReasonRowCount         = "row_count"         // the numbers of rows differ
	ReasonColumnCount      = "column_count"      // the numbers of columns differ
	ReasonValues           = "values"            // some rows differ
	ReasonOrder            = "order"             // the same rows in another order (ordered comparison)
	ReasonColumnOrder      = "column_order"      // the same rows with the columns in another order (bird, strict)
	ReasonPermutationLimit = "permutation_limit" // MaxPermutations reached
)

// Diff is the outcome of Compare: whether the results match and, when they
// do not, why, with a few of the missing and extra rows.
type Diff struct {
	Match  bool   `json:"match"`            // the results match
	Reason string `json:"reason,omitempty"` // one of the Reason constants; "" on a match
	// GoldRows and PredRows are the row counts; GoldColumns and
	// PredColumns the column counts (from Result.Columns, else the first
	// row).
	GoldRows    int `json:"gold_rows"`    // rows of the gold result
	PredRows    int `json:"pred_rows"`    // rows of the predicted result
	GoldColumns int `json:"gold_columns"` // columns of the gold result
	PredColumns int `json:"pred_columns"` // columns of the predicted result
	// Missing holds up to MaxDiffRows gold rows the prediction lacks and
	// Extra up to MaxDiffRows predicted rows the gold lacks, compared
	// under Permutation (or the identity). MissingCount and ExtraCount
	// count all of them (as a multiset in spider and strict modes, as a
	// set in bird mode). They are empty when the column counts differ.
	Missing      [][]any `json:"missing,omitempty"`
	Extra        [][]any `json:"extra,omitempty"`         // predicted rows the gold lacks (at most MaxDiffRows)
	MissingCount int     `json:"missing_count,omitempty"` // all missing rows
	ExtraCount   int     `json:"extra_count,omitempty"`   // all extra rows
	// Permutation, in ModeSpider, gives for each gold column the index of
	// the predicted column matched with it (on a match, or with
	// ReasonOrder: the same rows under it in another order), when that
	// mapping is not the identity.
	Permutation []int `json:"permutation,omitempty"`
}

// Summary is a one-line description of d: "match", or the reason with
// counts, e.g. "2 missing rows, 1 extra row (gold 3 rows, prediction 2)".
func (d *Diff) Summary() string {
	if d == nil {
		return "no comparison"
	}
	if d.Match {
		if len(d.Permutation) > 0 {
			return fmt.Sprintf("match (columns permuted: %v)", d.Permutation)
		}
		return "match"
	}
	size := fmt.Sprintf("gold %s × %s, prediction %s × %s", plural(d.GoldRows, "row"), plural(d.GoldColumns, "column"),
		plural(d.PredRows, "row"), plural(d.PredColumns, "column"))
	switch d.Reason {
	case ReasonColumnCount:
		return fmt.Sprintf("column mismatch: gold has %s, prediction %s", plural(d.GoldColumns, "column"), plural(d.PredColumns, "column"))
	case ReasonOrder:
		return "same rows in a different order (the gold is ordered); " + size
	case ReasonColumnOrder:
		return "same values with the columns in another order (column order is fixed in this mode); " + size
	case ReasonPermutationLimit:
		return fmt.Sprintf("no decision: more than %d column permutations; %s", MaxPermutations, size)
	}
	var parts []string
	if d.MissingCount > 0 {
		parts = append(parts, plural(d.MissingCount, "missing row"))
	}
	if d.ExtraCount > 0 {
		parts = append(parts, plural(d.ExtraCount, "extra row"))
	}
	if len(parts) == 0 {
		parts = append(parts, "rows differ")
	}
	return strings.Join(parts, ", ") + " (" + size + ")"
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

// Compare compares a predicted result with a gold result in c.Mode. It
// reads Columns and Rows only (a result's Error must be handled by the
// caller). A nil result counts as empty. Compare never fails: an unknown
// mode compares strictly.
func Compare(gold, pred *text2sql.Result, c Comparison) *Diff {
	g, p := rowsOf(gold), rowsOf(pred)
	d := &Diff{GoldRows: len(g), PredRows: len(p), GoldColumns: width(gold, g), PredColumns: width(pred, p)}
	enc := encoder{digits: c.Digits, validUTF8: c.ValidUTF8}
	switch c.Mode {
	case ModeSpider:
		compareSpider(d, g, p, c.Ordered, &enc)
	case ModeBIRD:
		compareBIRD(d, g, p, &enc)
	default:
		compareStrict(d, g, p, &enc)
	}
	return d
}

// SameResult reports whether two results are the same answer, for the
// self-consistency vote among candidates (text2sql.Config.SameResult):
// both are non-nil without an Error and Compare finds them equal in
// ModeSpider, unordered (rows as a multiset, any column permutation),
// numbers to AnswerKeyDigits significant digits: execution accuracy's
// notion of the same result.
func SameResult(a, b *text2sql.Result) bool {
	if a == nil || b == nil || a.Error != nil || b.Error != nil {
		return false
	}
	return Compare(a, b, Comparison{Mode: ModeSpider, Digits: AnswerKeyDigits}).Match
}

func rowsOf(r *text2sql.Result) [][]any {
	if r == nil {
		return nil
	}
	return r.Rows
}

func width(r *text2sql.Result, rows [][]any) int {
	if r != nil && len(r.Columns) > 0 {
		return len(r.Columns)
	}
	if len(rows) > 0 {
		return len(rows[0])
	}
	return 0
}

// table is a result with every cell encoded once.
type table struct {
	rows  [][]any
	cells [][]string // canonical encoding of each cell
}

func (e *encoder) table(rows [][]any) *table {
	t := &table{rows: rows, cells: make([][]string, len(rows))}
	for i, r := range rows {
		t.cells[i] = make([]string, len(r))
		for j, v := range r {
			t.cells[i][j] = e.cell(v)
		}
	}
	return t
}

// key is the encoding of row i with its columns taken in perm order (nil:
// as they are).
func (t *table) key(i int, perm []int, buf *strings.Builder) string {
	buf.Reset()
	r := t.cells[i]
	if perm == nil {
		for _, c := range r {
			buf.WriteString(c)
		}
	} else {
		for _, j := range perm {
			if j < len(r) {
				buf.WriteString(r[j])
			}
		}
	}
	return buf.String()
}

func (t *table) counts(perm []int) map[string]int {
	m := make(map[string]int, len(t.rows))
	var b strings.Builder
	for i := range t.rows {
		m[t.key(i, perm, &b)]++
	}
	return m
}

func compareSpider(d *Diff, g, p [][]any, ordered bool, enc *encoder) {
	if len(g) == 0 && len(p) == 0 {
		d.Match = true
		return
	}
	if len(g) != len(p) {
		d.Reason = ReasonRowCount
		rowDiff(d, enc.table(g), enc.table(p), nil, true)
		return
	}
	ncol := len(g[0])
	if len(p[0]) != ncol {
		d.Reason = ReasonColumnCount
		return
	}
	gt, pt := enc.table(g), enc.table(p)
	// The evaluator's quick rejection: sort the values inside each row by
	// Python's str(value)+str(type(value)), then compare the rows in
	// sequence (ordered) or as sets.
	if !quickAccept(gt, pt, ordered) {
		d.Reason = ReasonValues
		if ordered {
			// Would the rows match in another order?
			u := &Diff{GoldColumns: d.GoldColumns, PredColumns: d.PredColumns}
			compareSpider(u, g, p, false, enc)
			if u.Match {
				d.Reason, d.Permutation = ReasonOrder, u.Permutation
				return
			}
		}
		rowDiff(d, gt, pt, nil, true)
		return
	}
	s := newColumnSearch(gt, pt, ordered)
	if s.search(0) {
		d.Match = true
		if !identity(s.perm) {
			d.Permutation = append([]int(nil), s.perm...)
		}
		return
	}
	d.Reason = ReasonValues
	if s.tried >= MaxPermutations {
		d.Reason = ReasonPermutationLimit
	}
	first := s.first
	if first != nil && identity(first) {
		first = nil
	}
	if ordered && d.Reason == ReasonValues && sameBag(gt, pt, first) {
		d.Reason = ReasonOrder
	}
	rowDiff(d, gt, pt, first, true)
}

// columnSearch looks for an order of the predicted columns (perm:
// predicted column of each gold column) under which the predicted rows
// equal the gold rows, in sequence (ordered) or as bags, trying at most
// MaxPermutations.
type columnSearch struct {
	gt, pt  *table
	ordered bool
	cand    [][]int        // predicted columns that may stand for each gold column
	goldBag map[string]int // the gold rows' counts, unless ordered
	perm    []int
	used    []bool // predicted columns in perm
	tried   int    // permutations tested
	first   []int  // the first permutation tested
	b, gb   strings.Builder
}

func newColumnSearch(gt, pt *table, ordered bool) *columnSearch {
	ncol := len(gt.rows[0])
	s := &columnSearch{gt: gt, pt: pt, ordered: ordered, cand: candidateColumns(gt, pt, ncol),
		perm: make([]int, ncol), used: make([]bool, ncol)}
	if !ordered {
		s.goldBag = gt.counts(nil)
	}
	return s
}

// candidateColumns returns, for each of the ncol gold columns i, the
// predicted columns j that may stand for it: those every value of which
// occurs in i. This prunes no permutation that could match, so the
// outcome is the evaluator's (whose pruning samples 20 rows and is sound
// the same way).
func candidateColumns(gt, pt *table, ncol int) [][]int {
	goldCols := make([]map[string]bool, ncol)
	for i := range goldCols {
		goldCols[i] = make(map[string]bool)
		for r := range gt.cells {
			goldCols[i][gt.cells[r][i]] = true
		}
	}
	cand := make([][]int, ncol)
	for i := 0; i < ncol; i++ {
		for j := 0; j < ncol; j++ {
			ok := true
			for r := range pt.cells {
				if !goldCols[i][pt.cells[r][j]] {
					ok = false
					break
				}
			}
			if ok {
				cand[i] = append(cand[i], j)
			}
		}
	}
	return cand
}

// search completes perm from gold column i on, depth first over the
// candidate columns; it reports whether a permutation matched (left in
// perm).
func (s *columnSearch) search(i int) bool {
	if s.tried >= MaxPermutations {
		return false
	}
	if i == len(s.perm) {
		return s.test()
	}
	for _, j := range s.cand[i] {
		if s.used[j] {
			continue
		}
		s.used[j], s.perm[i] = true, j
		if s.search(i + 1) {
			return true
		}
		s.used[j] = false
	}
	return false
}

// test reports whether the rows match under perm.
func (s *columnSearch) test() bool {
	s.tried++
	if s.first == nil {
		s.first = append([]int(nil), s.perm...)
	}
	if s.ordered {
		for r := range s.gt.cells {
			if s.gt.key(r, nil, &s.gb) != s.pt.key(r, s.perm, &s.b) {
				return false
			}
		}
		return true
	}
	return s.pt.drains(maps.Clone(s.goldBag), s.perm, &s.b)
}

func identity(perm []int) bool {
	for i, j := range perm {
		if i != j {
			return false
		}
	}
	return true
}

// quickAccept is the Spider evaluator's necessary condition: the rows with
// their values sorted (by Python's str(v)+str(type(v))) are equal in
// sequence (ordered) or as sets.
func quickAccept(g, p *table, ordered bool) bool {
	if len(g.rows) > 0 && len(g.rows[0]) == 1 {
		// One value per row: nothing to sort, the rows are the keys.
		return oneColumnAccept(g, p, ordered)
	}
	sortedKeys := func(t *table) []string {
		out := make([]string, len(t.rows))
		idx := make([]int, 0, 8)
		pk := make([]string, 0, 8)
		var b strings.Builder
		for r, row := range t.rows {
			idx, pk = idx[:0], pk[:0]
			for c, v := range row {
				idx = append(idx, c)
				pk = append(pk, pyStr(v)+pyType(v))
			}
			// Stable insertion sort: rows are narrow.
			for i := 1; i < len(idx); i++ {
				for k := i; k > 0 && pk[idx[k]] < pk[idx[k-1]]; k-- {
					idx[k], idx[k-1] = idx[k-1], idx[k]
				}
			}
			b.Reset()
			for _, c := range idx {
				b.WriteString(t.cells[r][c])
			}
			out[r] = b.String()
		}
		return out
	}
	gs, ps := sortedKeys(g), sortedKeys(p)
	if ordered {
		for i := range gs {
			if gs[i] != ps[i] {
				return false
			}
		}
		return true
	}
	set := make(map[string]bool, len(gs))
	for _, k := range gs {
		set[k] = true
	}
	pset := make(map[string]bool, len(ps))
	for _, k := range ps {
		if !set[k] {
			return false
		}
		pset[k] = true
	}
	return len(pset) == len(set)
}

func oneColumnAccept(g, p *table, ordered bool) bool {
	cell := func(t *table, r int) string {
		if len(t.cells[r]) == 0 {
			return ""
		}
		return t.cells[r][0]
	}
	if ordered {
		for r := range g.cells {
			if cell(g, r) != cell(p, r) {
				return false
			}
		}
		return true
	}
	set := make(map[string]bool, len(g.cells))
	for r := range g.cells {
		set[cell(g, r)] = true
	}
	pset := make(map[string]bool, len(p.cells))
	for r := range p.cells {
		k := cell(p, r)
		if !set[k] {
			return false
		}
		pset[k] = true
	}
	return len(pset) == len(set)
}

// sameBag reports whether g and p (with p's columns in perm order) hold
// the same rows as multisets.
func sameBag(g, p *table, perm []int) bool {
	if len(g.rows) != len(p.rows) {
		return false
	}
	var b strings.Builder
	return p.drains(g.counts(nil), perm, &b)
}

// drains takes t's rows (columns in perm order) out of bag, a count per
// row key, and reports whether each was there; with as many rows as the
// bag holds, true means the two are the same multiset. bag is consumed.
func (t *table) drains(bag map[string]int, perm []int, b *strings.Builder) bool {
	for r := range t.cells {
		k := t.key(r, perm, b)
		if bag[k] == 0 {
			return false
		}
		bag[k]--
	}
	return true
}

// rowDiff fills d's missing and extra rows: as multisets when multi, else
// as sets. It leaves them empty when the column counts differ.
func rowDiff(d *Diff, g, p *table, perm []int, multi bool) {
	if d.GoldColumns != d.PredColumns && len(g.rows) > 0 && len(p.rows) > 0 {
		return
	}
	var b strings.Builder
	gk := make([]string, len(g.rows))
	for i := range g.rows {
		gk[i] = g.key(i, nil, &b)
	}
	pk := make([]string, len(p.rows))
	for i := range p.rows {
		pk[i] = p.key(i, perm, &b)
	}
	count := func(keys []string) map[string]int {
		m := make(map[string]int, len(keys))
		for _, k := range keys {
			if multi {
				m[k]++
			} else {
				m[k] = 1
			}
		}
		return m
	}
	gc, pc := count(gk), count(pk)
	// Rows of a absent from b (by count), in a's order.
	collect := func(rows [][]any, keys []string, have, other map[string]int, perm []int) (out [][]any, n int) {
		seen := map[string]int{}
		for i, k := range keys {
			seen[k]++
			if !multi && seen[k] > 1 {
				continue
			}
			if seen[k] > other[k] {
				n++
				if len(out) < MaxDiffRows {
					out = append(out, permuted(rows[i], perm))
				}
			}
		}
		return out, n
	}
	d.Missing, d.MissingCount = collect(g.rows, gk, gc, pc, nil)
	d.Extra, d.ExtraCount = collect(p.rows, pk, pc, gc, perm)
}

func permuted(row []any, perm []int) []any {
	if perm == nil {
		return row
	}
	out := make([]any, 0, len(perm))
	for _, j := range perm {
		if j < len(row) {
			out = append(out, row[j])
		}
	}
	return out
}

func compareBIRD(d *Diff, g, p [][]any, enc *encoder) {
	gt, pt := enc.table(g), enc.table(p)
	gs, ps := gt.counts(nil), pt.counts(nil)
	match := len(gs) == len(ps)
	if match {
		for k := range gs {
			if ps[k] == 0 {
				match = false
				break
			}
		}
	}
	if match {
		d.Match = true
		return
	}
	switch {
	case d.GoldColumns != d.PredColumns && len(g) > 0 && len(p) > 0:
		d.Reason = ReasonColumnCount
	default:
		d.Reason = ReasonValues
		if d.GoldColumns == d.PredColumns && len(g) == len(p) && permutedMatch(gt, pt) {
			d.Reason = ReasonColumnOrder
		}
		rowDiff(d, gt, pt, nil, false)
	}
}

func compareStrict(d *Diff, g, p [][]any, enc *encoder) {
	// A side with no column names and no rows (expected rows: []) has an
	// unknown width.
	if d.GoldColumns != d.PredColumns && d.GoldColumns > 0 && d.PredColumns > 0 {
		d.Reason = ReasonColumnCount
		return
	}
	gt, pt := enc.table(g), enc.table(p)
	if len(g) != len(p) {
		d.Reason = ReasonRowCount
		rowDiff(d, gt, pt, nil, true)
		return
	}
	var a, b strings.Builder
	for i := range g {
		if gt.key(i, nil, &a) != pt.key(i, nil, &b) {
			d.Reason = ReasonValues
			switch {
			case sameBag(gt, pt, nil):
				d.Reason = ReasonOrder
			case permutedMatch(gt, pt):
				d.Reason = ReasonColumnOrder
			}
			rowDiff(d, gt, pt, nil, true)
			return
		}
	}
	d.Match = true
}

// permutedMatch reports whether some column permutation other than the
// identity makes the results equal as multisets (for the explanation of a
// bird or strict mismatch).
func permutedMatch(g, p *table) bool {
	if len(g.rows) == 0 || len(g.rows) != len(p.rows) || len(g.rows[0]) != len(p.rows[0]) {
		return false
	}
	d := &Diff{}
	compareSpider(d, g.rows, p.rows, false, &encoder{})
	return d.Match && len(d.Permutation) > 0
}

// encoder turns values into canonical byte strings: equal strings exactly
// when Python's == holds between the values sqlite3 would return (after
// rounding to digits significant digits when digits > 0).
type encoder struct {
	digits    int
	validUTF8 bool
}

// The kinds of an encoded cell: its first byte.
const (
	encNull  = 'n'
	encInt   = 'i' // an integral number in int64 range: 8 bytes
	encFloat = 'f' // any other float64: 8 bytes
	encBig   = 'r' // a number float64 cannot hold exactly: its exact rational
	encText  = 's'
	encBytes = 'b'
	encOther = 'o'
)

func (e *encoder) cell(v any) string {
	switch x := v.(type) {
	case nil:
		return string(rune(encNull))
	case string:
		if e.validUTF8 && !utf8.ValidString(x) {
			x = strings.ToValidUTF8(x, "")
		}
		return lenPrefixed(encText, x)
	case []byte:
		return lenPrefixed(encBytes, string(x))
	case bool:
		if x {
			return encodeInt(1)
		}
		return encodeInt(0)
	case int64:
		return encodeInt(x)
	case float64:
		return e.float(x)
	}
	if n, ok := number(v); ok {
		return e.num(n)
	}
	return lenPrefixed(encOther, fmt.Sprintf("%T:%v", v, v))
}

func (e *encoder) float(f float64) string {
	if e.digits > 0 && !math.IsInf(f, 0) && !math.IsNaN(f) && f != math.Trunc(f) {
		if r, err := strconv.ParseFloat(strconv.FormatFloat(f, 'g', e.digits, 64), 64); err == nil {
			f = r
		}
	}
	if f == math.Trunc(f) && f >= -(1<<63) && f < (1<<63) {
		return encodeInt(int64(f))
	}
	var b [9]byte
	b[0] = encFloat
	binary.BigEndian.PutUint64(b[1:], math.Float64bits(f))
	return string(b[:])
}

// num encodes an exact rational: as an int or float when one holds it.
func (e *encoder) num(r *big.Rat) string {
	if r.IsInt() && r.Num().IsInt64() {
		return encodeInt(r.Num().Int64())
	}
	if f, exact := r.Float64(); exact || e.digits > 0 {
		return e.float(f)
	}
	return lenPrefixed(encBig, r.RatString())
}

func encodeInt(i int64) string {
	var b [9]byte
	b[0] = encInt
	binary.BigEndian.PutUint64(b[1:], uint64(i))
	return string(b[:])
}

func lenPrefixed(kind byte, s string) string {
	var b strings.Builder
	b.Grow(len(s) + 6)
	b.WriteByte(kind)
	var n [binary.MaxVarintLen64]byte
	b.Write(n[:binary.PutUvarint(n[:], uint64(len(s)))])
	b.WriteString(s)
	return b.String()
}

// number returns the exact value of a numeric v of a type other than
// int64 and float64: Go integer and float types, json.Number, *big.Int,
// *big.Rat and *big.Float (decimals). ok is false for other types.
func number(v any) (*big.Rat, bool) {
	r := new(big.Rat)
	switch x := v.(type) {
	case int, int8, int16, int32:
		return r.SetInt64(reflect.ValueOf(x).Int()), true
	case uint, uint8, uint16, uint32, uint64:
		return r.SetUint64(reflect.ValueOf(x).Uint()), true
	case float32:
		if math.IsInf(float64(x), 0) || math.IsNaN(float64(x)) {
			return nil, false
		}
		return r.SetFloat64(float64(x)), true
	case json.Number:
		if _, ok := r.SetString(string(x)); ok {
			return r, true
		}
	case *big.Int:
		if x != nil {
			return r.SetInt(x), true
		}
	case *big.Rat:
		if x != nil {
			return r.Set(x), true
		}
	case *big.Float:
		if x != nil && !x.IsInf() {
			x.Rat(r)
			return r, true
		}
	}
	return nil, false
}

// pyStr approximates Python's str(v) for the values sqlite3 returns (int,
// float, str, bytes, None); pyType is str(type(v)). Together they are the
// sort key of the Spider evaluator's quick rejection.
func pyStr(v any) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case string:
		return x
	case []byte:
		return pyBytes(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case bool:
		if x {
			return "True"
		}
		return "False"
	case float64:
		return pyFloat(x)
	case float32:
		return pyFloat(float64(x))
	}
	if r, ok := number(v); ok {
		if r.IsInt() {
			return r.Num().String()
		}
		f, _ := r.Float64()
		return pyFloat(f)
	}
	return fmt.Sprint(v)
}

func pyType(v any) string {
	switch x := v.(type) {
	case nil:
		return "<class 'NoneType'>"
	case string:
		return "<class 'str'>"
	case []byte:
		return "<class 'bytes'>"
	case bool:
		return "<class 'bool'>"
	case float64, float32:
		return "<class 'float'>"
	case int64:
		return "<class 'int'>"
	default:
		if r, ok := number(x); ok {
			if r.IsInt() {
				return "<class 'int'>"
			}
			return "<class 'float'>"
		}
	}
	return "<class 'object'>"
}

// pyFloat is Python's repr of a float: the shortest digits that round
// trip, in positional notation when the decimal exponent is in [-4, 16),
// else in scientific notation with a two-digit exponent at least.
func pyFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	s := strconv.FormatFloat(f, 'e', -1, 64) // d.ddde±XX
	mant, exps, _ := strings.Cut(s, "e")
	exp, _ := strconv.Atoi(exps)
	neg := strings.HasPrefix(mant, "-")
	mant = strings.TrimPrefix(mant, "-")
	digits := strings.Replace(mant, ".", "", 1)
	sign := ""
	if neg {
		sign = "-"
	}
	if exp < -4 || exp >= 16 {
		m := digits[:1]
		if len(digits) > 1 {
			m += "." + digits[1:]
		}
		es := "+"
		if exp < 0 {
			es, exp = "-", -exp
		}
		return fmt.Sprintf("%s%se%s%02d", sign, m, es, exp)
	}
	if exp < 0 {
		return sign + "0." + strings.Repeat("0", -exp-1) + digits
	}
	if len(digits) <= exp+1 {
		return sign + digits + strings.Repeat("0", exp+1-len(digits)) + ".0"
	}
	return sign + digits[:exp+1] + "." + digits[exp+1:]
}

func pyBytes(b []byte) string {
	var sb strings.Builder
	q := byte('\'')
	if strings.IndexByte(string(b), '\'') >= 0 && strings.IndexByte(string(b), '"') < 0 {
		q = '"'
	}
	sb.WriteString("b")
	sb.WriteByte(q)
	for _, c := range b {
		switch {
		case c == '\\' || c == q:
			sb.WriteByte('\\')
			sb.WriteByte(c)
		case c == '\t':
			sb.WriteString(`\t`)
		case c == '\n':
			sb.WriteString(`\n`)
		case c == '\r':
			sb.WriteString(`\r`)
		case c < 0x20 || c >= 0x7f:
			fmt.Fprintf(&sb, `\x%02x`, c)
		default:
			sb.WriteByte(c)
		}
	}
	sb.WriteByte(q)
	return sb.String()
}

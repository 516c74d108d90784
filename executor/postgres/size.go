package postgres

import (
	"math"
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	text2sql "github.com/text2sql-go/text2sql"
)

// PostgreSQL bounds no expression's memory (work_mem bounds sorts and
// hashes, not values): md5(repeat('a', 200000000)) three times in one row
// takes a backend to 745 MB before any row is sent, and a recursive WITH
// query that doubles a string reaches the 1 GB value limit in 30 steps.
// So the check bounds, before the statement runs, the bytes a statement
// can build beyond what it reads: the calls that make a value larger than
// their arguments (amplifiers) and the literals, times the number of
// places that can copy them (the statement's column references).

const (
	// amplifyLimit bounds a statement's estimated built bytes times its
	// column references plus one (see amplification), in bytes: the
	// largest row the executor reads (DefaultMaxRowBytes).
	amplifyLimit = DefaultMaxRowBytes
	// unknownSize is the estimate, in bytes, of a value the statement
	// does not write (a column's): nominal, since the data is bounded by
	// the database, not by the statement.
	unknownSize = 1 << 10
	// maxUTF8 is the most bytes a character takes in UTF-8, for the
	// estimate of a padding count given in characters.
	maxUTF8 = 4
)

// Aggregates that keep every input row's value until their group ends
// hold memory no setting bounds either (json_agg of a 10 kB value over
// 60,000 generated rows took a backend to 2.3 GB within 3.6 s). Rows read
// from tables are bounded by the data; what the statement makes is not.
const (
	// maxAccumulated bounds, in bytes, the value a statement builds (its
	// literals and amplifying calls, its columns counting nothing) for
	// one input row of an accumulating aggregate, separator included.
	maxAccumulated = 1 << 10
	// maxSeriesRows bounds the rows generate_series may make, by its
	// literal bounds, in a statement that accumulates: a million values
	// of a few dozen bytes.
	maxSeriesRows = 1_000_000
)

// accumulators are the aggregates that keep every input value (see
// maxAccumulated).
var accumulators = map[string]bool{"string_agg": true, "array_agg": true, "json_agg": true, "jsonb_agg": true,
	"json_agg_strict": true, "jsonb_agg_strict": true, "json_object_agg": true, "jsonb_object_agg": true,
	"json_object_agg_strict": true, "jsonb_object_agg_strict": true, "json_object_agg_unique": true,
	"jsonb_object_agg_unique": true, "xmlagg": true, "range_agg": true, "range_intersect_agg": true}

// amplifiers are the functions whose result may be much larger than their
// arguments, by the argument that sets how much (see built).
var amplifiers = map[string]bool{"repeat": true, "lpad": true, "rpad": true, "array_fill": true,
	"replace": true, "regexp_replace": true, "format": true, "concat_ws": true}

// growth is how many times the sum of its arguments a call's result may
// take: escaping (encode's escape format writes a byte as four, JSON a
// control character as six), splitting into arrays (each element carries
// a header), converting encodings and normalizing Unicode (NFKD writes
// some characters as 18). A call of neither this table, amplifiers nor
// preserving is taken to double.
var growth = map[string]int64{"encode": 4, "quote_literal": 2, "quote_ident": 2, "quote_nullable": 2,
	"to_json": 6, "to_jsonb": 6, "row_to_json": 6, "array_to_json": 6, "json_build_array": 6, "json_build_object": 6,
	"jsonb_build_array": 6, "jsonb_build_object": 6, "json_object": 6, "jsonb_object": 6,
	"string_to_array": 8, "regexp_split_to_array": 8, "regexp_matches": 8, "regexp_split_to_table": 8,
	"convert_to": 4, "convert_from": 4, "convert": 4, "normalize": 18}

// preserving are common calls whose result is at most the size of their
// arguments (or small): aggregates, arithmetic, the clock, case and trim,
// substrings, hashes, and concatenation (which adds).
var preserving = map[string]bool{
	"count": true, "sum": true, "avg": true, "min": true, "max": true, "stddev": true, "variance": true, "bool_and": true, "bool_or": true,
	"every": true, "percentile_cont": true, "percentile_disc": true, "mode": true, "rank": true, "dense_rank": true, "row_number": true,
	"ntile": true, "lag": true, "lead": true, "first_value": true, "last_value": true, "nth_value": true, "cume_dist": true, "percent_rank": true,
	"round": true, "trunc": true, "abs": true, "ceil": true, "ceiling": true, "floor": true, "mod": true, "power": true, "sqrt": true,
	"exp": true, "ln": true, "log": true, "sign": true, "random": true,
	"now": true, "date_trunc": true, "date_part": true, "extract": true, "age": true, "to_char": true,
	"to_date": true, "to_timestamp": true, "to_number": true, "make_date": true, "timezone": true,
	"lower": true, "upper": true, "initcap": true, "trim": true, "btrim": true, "ltrim": true, "rtrim": true, "substr": true,
	"substring": true, "left": true, "right": true, "length": true, "char_length": true, "octet_length": true, "strpos": true,
	"position": true, "split_part": true, "reverse": true, "md5": true, "translate": true, "concat": true,
	"array_append": true, "array_prepend": true, "array_cat": true, "array_length": true, "cardinality": true,
	"unnest": true, "generate_series": true, "jsonb_extract_path_text": true, "json_extract_path_text": true,
	"jsonb_extract_path": true, "json_extract_path": true, "array_agg": true, "overlay": true}

// amplification refuses (KindTooLarge) a statement whose built bytes (the
// estimated results of its amplifier calls and its literals) times its
// column references plus one, doubled for each concatenation of a column
// with itself, pass amplifyLimit, one whose amplifier call
// takes its count from anything but a literal, and a recursive WITH query
// whose recursive part grows a value by a factor (an amplifier, or a
// concatenation of the same column twice): each step would multiply it.
func amplification(top protoreflect.Message) *text2sql.SQLError {
	var built, refs int64
	copies := int64(1)
	var found *text2sql.SQLError
	accumulates, series := false, int64(0)
	walk(top, func(m proto.Message) bool {
		switch n := m.(type) {
		case *pg_query.SubLink:
			accumulates = accumulates || n.SubLinkType == pg_query.SubLinkType_ARRAY_SUBLINK
		case *pg_query.FuncCall:
			name := funcName(n)
			if accumulators[name] {
				accumulates = true
				if size, se := estimator(0).sumOf(n.Args); se == nil && size > maxAccumulated {
					found = accumulationError(name, size)
					return false
				}
			}
			if name == "generate_series" {
				series = max(series, seriesRows(n.Args))
			}
			if !preserving[name] {
				size, se := estimate(&pg_query.Node{Node: &pg_query.Node_FuncCall{FuncCall: n}})
				if se != nil {
					found = se
					return false
				}
				// Past the limit alone the statement is refused: stop
				// (each call's estimate walks its arguments again).
				if built = satAdd(built, size); built > amplifyLimit {
					return false
				}
			}
		case *pg_query.TypeCast:
			if padded(n.GetTypeName()) {
				size, se := estimate(&pg_query.Node{Node: &pg_query.Node_TypeCast{TypeCast: n}})
				built, found = satAdd(built, size), se
			}
		case *pg_query.A_Const:
			if s := n.GetSval(); s != nil {
				built = satAdd(built, int64(len(s.Sval)))
			}
		case *pg_query.ColumnRef:
			refs++
		case *pg_query.A_Expr:
			// s || s doubles s; through derived tables, each level
			// doubles the one below.
			if op := names(n.Name); len(op) == 1 && op[0] == "||" && repeatedRef(n) {
				copies = satMul(copies, 2)
			}
		case *pg_query.WithClause:
			if n.Recursive {
				found = recursiveGrowth(n)
			}
		}
		return found == nil
	})
	if found != nil {
		return found
	}
	if accumulates && series > maxSeriesRows {
		return &text2sql.SQLError{Kind: text2sql.KindTooLarge,
			Message: "the statement aggregates into one value (string_agg, array_agg, json_agg, ARRAY(…)) over generate_series of " + strconv.FormatInt(series, 10) +
				" rows; at most " + strconv.Itoa(maxSeriesRows) + " are allowed, since the server keeps every value in memory",
			Hint: "generate fewer rows, or count and sum instead of collecting"}
	}
	if satMul(satMul(built, refs+1), copies) > amplifyLimit {
		return &text2sql.SQLError{Kind: text2sql.KindTooLarge,
			Message: "the statement may build about " + strconv.FormatInt(built, 10) + " bytes of values (repeat, lpad, replace, literals…), copied by up to " +
				strconv.FormatInt(refs, 10) + " column references; the limit is " + strconv.Itoa(amplifyLimit) + " bytes",
			Hint: "build smaller values: PostgreSQL bounds no expression's memory"}
	}
	return nil
}

// recursiveGrowth refuses a recursive WITH query whose recursive part
// grows a value by a factor per step: a call that is not size-preserving
// applied to a column, or any call or concatenation of the same column
// twice.
func recursiveGrowth(wc *pg_query.WithClause) *text2sql.SQLError {
	var found *text2sql.SQLError
	for _, node := range wc.Ctes {
		cte := node.GetCommonTableExpr()
		walk(cte.GetCtequery().ProtoReflect(), func(m proto.Message) bool {
			switch n := m.(type) {
			case *pg_query.FuncCall:
				switch name := funcName(n); {
				case repeatedRef(n):
					found = growthError(cte.Ctename, name+"(x, …, x)")
				case !preserving[name] && hasRef(n):
					found = growthError(cte.Ctename, name+"(…)")
				}
			case *pg_query.A_Expr:
				if op := names(n.Name); len(op) == 1 && op[0] == "||" && repeatedRef(n) {
					found = growthError(cte.Ctename, "x || x")
				}
			}
			return found == nil
		})
		if found != nil {
			return found
		}
	}
	return nil
}

func accumulationError(name string, size int64) *text2sql.SQLError {
	return &text2sql.SQLError{Kind: text2sql.KindTooLarge,
		Message: name + " keeps each row's value until the group ends, and the statement builds about " + strconv.FormatInt(size, 10) +
			" bytes of it per row; at most " + strconv.Itoa(maxAccumulated) + " are allowed, since the server keeps them all in memory",
		Hint: "aggregate the columns themselves, with a short separator"}
}

// seriesRows returns the rows generate_series(start, stop[, step]) makes
// by its integer literal bounds (0 when they are not literals).
func seriesRows(args []*pg_query.Node) int64 {
	if len(args) < 2 {
		return 0
	}
	lo, ok1 := intLiteral(args[0])
	hi, ok2 := intLiteral(args[1])
	step := int64(1)
	if len(args) > 2 {
		var ok bool
		if step, ok = intLiteral(args[2]); !ok || step == 0 {
			return 0
		}
	}
	if !ok1 || !ok2 {
		return 0
	}
	if step < 0 {
		lo, hi, step = hi, lo, -step
	}
	if hi < lo {
		return 0
	}
	return (hi-lo)/step + 1
}

func growthError(cte, what string) *text2sql.SQLError {
	return &text2sql.SQLError{Kind: text2sql.KindTooLarge,
		Message: "recursive WITH query " + strconv.Quote(cte) + " grows a value with " + what + " at each step, which can build values of any size",
		Hint:    "build the value after the recursion (string_agg over its rows)"}
}

// hasRef reports whether a call reads a column.
func hasRef(n proto.Message) bool {
	found := false
	walk(n.ProtoReflect(), func(m proto.Message) bool {
		_, found = m.(*pg_query.ColumnRef)
		return !found
	})
	return found
}

// repeatedRef reports whether an expression holds the same column
// reference twice (x || x, overlay(x placing x …) double x).
func repeatedRef(n proto.Message) bool {
	seen := map[string]bool{}
	twice := false
	walk(n.ProtoReflect(), func(m proto.Message) bool {
		if c, ok := m.(*pg_query.ColumnRef); ok {
			k := strings.Join(names(c.Fields), ".")
			twice = twice || seen[k]
			seen[k] = true
		}
		return !twice
	})
	return twice
}

// funcName is a call's name without a pg_catalog qualifier ("" for
// another schema's).
func funcName(f *pg_query.FuncCall) string {
	parts := names(f.Funcname)
	switch {
	case len(parts) == 1:
		return parts[0]
	case len(parts) == 2 && parts[0] == "pg_catalog":
		return parts[1]
	}
	return ""
}

// estimate returns an upper estimate of the bytes of the value n
// computes: a literal's length, unknownSize for what the statement does
// not write, an amplifier's result by its count, the sum of the parts for
// anything else. An amplifier whose count is not a literal is refused.
func estimate(n *pg_query.Node) (int64, *text2sql.SQLError) { return estimator(unknownSize).of(n) }

// estimator estimates values, taking unseen bytes for a value the
// statement does not write.
type estimator int64

// of is estimate with e's unseen size.
func (e estimator) of(n *pg_query.Node) (int64, *text2sql.SQLError) {
	switch v := n.GetNode().(type) {
	case nil:
		return 0, nil
	case *pg_query.Node_AConst:
		if s := v.AConst.GetSval(); s != nil {
			return int64(len(s.Sval)), nil
		}
		return 16, nil
	case *pg_query.Node_ColumnRef, *pg_query.Node_ParamRef, *pg_query.Node_SubLink:
		return int64(e), nil
	case *pg_query.Node_TypeCast:
		size, se := e.of(v.TypeCast.Arg)
		// char(n) and bit(n) pad to n: a typmod sets a least size.
		for _, m := range paddedTypmods(v.TypeCast.GetTypeName()) {
			if n, ok := intLiteral(m); ok {
				size = max(size, satMul(n, maxUTF8))
			}
		}
		return size, se
	case *pg_query.Node_FuncCall:
		name := funcName(v.FuncCall)
		if amplifiers[name] {
			return e.built(name, v.FuncCall.Args)
		}
		sum, se := e.sumOf(v.FuncCall.Args)
		switch {
		case name == "jsonb_pretty": // indentation grows with depth: quadratic
			return satMul(sum, max(sum/2, 1)), se
		case (name == "array_to_string" || name == "string_agg") && len(v.FuncCall.Args) > 1:
			// The separator comes between every two elements.
			sep, _ := e.of(v.FuncCall.Args[1])
			return satMul(sum, max(sep, 1)), se
		case preserving[name]:
			return sum, se
		case growth[name] > 0:
			return satMul(sum, growth[name]), se
		}
		return satMul(sum, 2), se
	}
	var sum int64
	var found *text2sql.SQLError
	children(n.ProtoReflect(), func(m protoreflect.Message) {
		if found != nil {
			return
		}
		if child, ok := m.Interface().(*pg_query.Node); ok {
			size, se := e.of(child)
			sum, found = satAdd(sum, size), se
		} else {
			for _, part := range nodesIn(m) {
				size, se := e.of(part)
				sum, found = satAdd(sum, size), se
				if found != nil {
					return
				}
			}
		}
	})
	return sum, found
}

// padded reports whether a type name pads its values to its typmod:
// char(n) (bpchar) and bit(n); varchar(n) only bounds them.
func padded(t *pg_query.TypeName) bool {
	parts := names(t.GetNames())
	if len(parts) == 0 || len(t.GetTypmods()) == 0 {
		return false
	}
	last := parts[len(parts)-1]
	return last == "bpchar" || last == "bit" || last == "char"
}

// paddedTypmods returns the typmods of a padded type name (see padded).
func paddedTypmods(t *pg_query.TypeName) []*pg_query.Node {
	if !padded(t) {
		return nil
	}
	return t.GetTypmods()
}

// sumOf returns the sum of the estimates of nodes.
func (e estimator) sumOf(nodes []*pg_query.Node) (int64, *text2sql.SQLError) {
	var sum int64
	for _, n := range nodes {
		size, se := e.of(n)
		if se != nil {
			return 0, se
		}
		sum = satAdd(sum, size)
	}
	return sum, nil
}

// nodesIn returns the Nodes directly below a message that is not a Node.
func nodesIn(m protoreflect.Message) []*pg_query.Node {
	var out []*pg_query.Node
	children(m, func(c protoreflect.Message) {
		if n, ok := c.Interface().(*pg_query.Node); ok {
			out = append(out, n)
		} else {
			out = append(out, nodesIn(c)...)
		}
	})
	return out
}

// built estimates an amplifier call's result.
func (e estimator) built(name string, args []*pg_query.Node) (int64, *text2sql.SQLError) {
	sizes := make([]int64, len(args))
	for i, a := range args {
		s, se := e.of(a)
		if se != nil {
			return 0, se
		}
		sizes[i] = s
	}
	arg := func(i int) int64 {
		if i < len(sizes) {
			return sizes[i]
		}
		return 0
	}
	if len(args) == 0 {
		return 0, nil
	}
	switch name {
	case "repeat", "lpad", "rpad":
		if len(args) < 2 {
			return arg(0), nil
		}
		n, ok := intLiteral(args[1])
		if !ok {
			return 0, countError(name)
		}
		if name == "repeat" {
			return satMul(arg(0), n), nil
		}
		return max(arg(0), satMul(n, maxUTF8)), nil
	case "array_fill":
		count := int64(1)
		dims := args[min(1, len(args)-1)].GetAArrayExpr()
		if len(args) < 2 || dims == nil {
			return 0, countError(name)
		}
		for _, d := range dims.Elements {
			n, ok := intLiteral(d)
			if !ok {
				return 0, countError(name)
			}
			count = satMul(count, n)
		}
		return satMul(max(arg(0), 8), count), nil
	case "replace", "regexp_replace":
		return satMul(arg(0), max(arg(2), 1)), nil
	}
	var sum, most int64
	for _, s := range sizes {
		sum, most = satAdd(sum, s), max(most, s)
	}
	if name == "concat_ws" { // the separator between every two
		return satAdd(sum, satMul(arg(0), int64(len(args)))), nil
	}
	// format: every specifier may print any argument (%1$s), quoted
	// (%I, %L double quotes), padded to its width.
	f := args[0].GetAConst().GetSval()
	if f == nil {
		return 0, countError(name)
	}
	specs, width, ok := formatSpecs(f.Sval)
	if !ok {
		return 0, countError(name)
	}
	return satAdd(satAdd(arg(0), satMul(most, satMul(specs, 2))), satMul(width, maxUTF8)), nil
}

func countError(name string) *text2sql.SQLError {
	return &text2sql.SQLError{Kind: text2sql.KindTooLarge,
		Message: name + " takes the size of its result from an expression; only a literal count is allowed, so the statement's memory can be bounded before it runs",
		Hint:    "write the count as a number"}
}

// intLiteral reads an integer literal (possibly negative or cast).
func intLiteral(n *pg_query.Node) (int64, bool) {
	switch v := n.GetNode().(type) {
	case *pg_query.Node_AConst:
		if i := v.AConst.GetIval(); i != nil {
			return int64(i.Ival), true
		}
		if f := v.AConst.GetFval(); f != nil {
			x, err := strconv.ParseFloat(f.Fval, 64)
			return int64(min(x, math.MaxInt64/2)), err == nil
		}
	case *pg_query.Node_TypeCast:
		return intLiteral(v.TypeCast.Arg)
	case *pg_query.Node_AExpr:
		if e := v.AExpr; e.Lexpr == nil && len(names(e.Name)) == 1 && names(e.Name)[0] == "-" {
			x, ok := intLiteral(e.Rexpr)
			return -x, ok
		}
	}
	return 0, false
}

// formatSpecs counts the specifiers of a format() string and sums their
// widths; a width taken from an argument (*) is not a literal (false).
func formatSpecs(f string) (specs, width int64, ok bool) {
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			continue
		}
		j := i + 1
		for j < len(f) && strings.IndexByte("0123456789$-", f[j]) >= 0 {
			j++
		}
		if j < len(f) && f[j] == '*' {
			return 0, 0, false
		}
		spec := f[i+1 : j]
		if k := strings.IndexByte(spec, '$'); k >= 0 {
			spec = spec[k+1:]
		}
		if w, err := strconv.ParseInt(strings.TrimLeft(spec, "-"), 10, 64); err == nil {
			width = satAdd(width, w)
		}
		specs++
		i = j
	}
	return specs, width, true
}

func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

func satMul(a, b int64) int64 {
	if a <= 0 || b <= 0 {
		return 0
	}
	if a > math.MaxInt64/b {
		return math.MaxInt64
	}
	return a * b
}

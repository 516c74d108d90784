package mysql

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/sqltext"
	"github.com/text2sql-go/text2sql/schema"
)

// MariaDB and MySQL look for KILL, and so for max_statement_time, between
// rows: one call runs to its end however long it takes (a LOCATE of a
// 150,000-character needle in 300,000 characters ran 33 s past a 2 s
// limit and through KILL QUERY and KILL CONNECTION), and a row is built
// whole in the server's memory before it is sent, on the text protocol
// as on the binary one. No setting a login may change bounds either, so
// the Guard bounds, before the statement runs, the strings a statement
// writes or builds and the comparisons of its searches.
const (
	// maxBuilt bounds, in bytes, a string literal and a string a call
	// builds (REPEAT, SPACE, LPAD, RPAD, CONCAT, INSERT, REPLACE, …; see
	// growing and callSize), a value the walk cannot see counting as
	// the statement's longest literal or count: two such strings searched one in the other cost at most
	// maxBuilt² (6.7e7) comparisons, and a row of 4,096 of them (the
	// server's column limit) 32 MiB.
	maxBuilt = 8 << 10
	// maxWork bounds the character comparisons of a statement's searches
	// (LIKE, REGEXP, LOCATE, INSTR, POSITION, REPLACE, SUBSTRING_INDEX,
	// REGEXP_*, JSON_SEARCH), summed, a search costing the product of its
	// subject's and its pattern's lengths. Measured on MariaDB 10.11, LIKE
	// '%…%' compares 2e8 characters a second and LOCATE 8e8, so 1e8 stays
	// within the second of grace past the time limit.
	maxWork = 100_000_000
	// rowBuiltLength is the length assumed for a string built across rows
	// (GROUP_CONCAT, JSON_ARRAYAGG, JSON_OBJECTAGG in a subquery, or a
	// recursive WITH query that grows one): 16 MiB, MariaDB's default
	// max_allowed_packet, which bounds every string a call returns.
	rowBuiltLength = 16 << 20
	// maxLongValues bounds the values of long columns (longTypes) a
	// statement's select lists name: each can be max_allowed_packet long
	// (16 MiB by default), and the server builds a row whole, so 16 take
	// 256 MiB of its memory at most (200 copies of one 10 MB value took
	// it to 2 GB).
	maxLongValues = 16
	// maxRegexes bounds the regular-expression matches (REGEXP, RLIKE,
	// REGEXP_*) of one row: a pattern that backtracks runs each match up
	// to the regex library's match limit, about 0.15 s on this server, a
	// warning and not an error, and the server can be stopped only
	// between rows; 6 of them stay within the second of grace.
	maxRegexes = 6
)

// regexError refuses a statement with more than maxRegexes matches.
func regexError(n int) *text2sql.SQLError {
	return &text2sql.SQLError{Kind: text2sql.KindTooLarge,
		Message: fmt.Sprintf("the statement matches %d regular expressions in one row; at most %d are allowed, because each may run to the regex library's match limit before the server can be stopped", n, maxRegexes),
		Hint:    "use LIKE, or fewer REGEXP conditions"}
}

// isRegex reports whether a call or operator matches a regular
// expression.
func isRegex(name string) bool {
	return name == "regexp" || name == "rlike" || strings.HasPrefix(name, "regexp_")
}

// longTypes are the column types that hold more than a TEXT's 64 KiB.
var longTypes = []string{"mediumtext", "longtext", "mediumblob", "longblob", "json"}

// longColumns are the database's columns of a long type: the names, and
// how many each table or view has, in lower case.
type longColumns struct {
	names   map[string]bool
	byTable map[string]int
}

// aggregatedLength is the length a GROUP_CONCAT or JSON_ARRAYAGG may
// return: the server's group_concat_max_len (1 MiB by default on
// MariaDB), read at Open, and rowBuiltLength when it is not known.
func (c *Guard) aggregatedLength() int64 {
	if c.groupConcatMax > 0 {
		return min(c.groupConcatMax, rowBuiltLength)
	}
	return rowBuiltLength
}

// knowLongColumns makes c bound the long values of a statement's rows
// (maxLongValues) by sch's columns.
func (c *Guard) knowLongColumns(sch *schema.Database) {
	l := &longColumns{names: map[string]bool{}, byTable: map[string]int{}}
	for _, t := range sch.Tables {
		for _, col := range t.Columns {
			typ := strings.ToLower(col.Type)
			if slices.ContainsFunc(longTypes, func(p string) bool { return strings.HasPrefix(typ, p) }) {
				l.names[strings.ToLower(col.Name)] = true
				l.byTable[strings.ToLower(t.Name)]++
			}
		}
	}
	c.long = l
}

// countArg gives, for the calls whose result length a count argument
// decides, that argument's index: the server builds the string whole.
var countArg = map[string]int{"repeat": 1, "space": 0, "lpad": 1, "rpad": 1}

// searchArgs gives, for the calls whose work grows with the product of
// two arguments' lengths, those arguments' indexes.
var searchArgs = map[string][2]int{
	"locate": {0, 1}, "position": {0, 1}, "instr": {0, 1}, "replace": {0, 1}, "substring_index": {0, 1},
	"regexp_like": {0, 1}, "regexp_instr": {0, 1}, "regexp_substr": {0, 1}, "regexp_replace": {0, 1},
	"json_search": {0, 2},
}

// growing are the calls that return a string longer than their
// arguments; in a recursive WITH query each round can double it.
var growing = map[string]bool{"concat": true, "concat_ws": true, "repeat": true, "space": true,
	"lpad": true, "rpad": true, "insert_func": true, "replace": true, "regexp_replace": true,
	"export_set": true, "make_set": true, "hex": true, "quote": true, "to_base64": true,
	"date_format": true, "time_format": true, "sformat": true, "uncompress": true, "weight_string": true,
	"json_quote": true, "json_detailed": true, "json_pretty": true}

// rowBuilders are the aggregates that build one string from many rows.
var rowBuilders = map[string]bool{"group_concat": true, "json_arrayagg": true, "json_objectagg": true}

// work walks a parsed statement and collects what bounds needs.
type work struct {
	// longest is the length of the longest string literal or count; a
	// column of a derived table or WITH query may hold that much, so it
	// is the length assumed for a value the walk cannot see.
	longest int64
	// depth is how many SELECTs hold the node being walked; rowBuilt
	// tells a string built across rows in a subquery, recurse a
	// recursive WITH query, grows a call in growing.
	depth    int
	rowBuilt bool
	recurse  bool
	grows    bool
	// builds are the literals, casts and growing calls, whose size
	// maxBuilt bounds; searches the operands of each search.
	builds   []ast.ExprNode
	searches [][2]ast.ExprNode
	regexes  int
	err      *text2sql.SQLError
	// aggregated is the length a GROUP_CONCAT or JSON_ARRAYAGG may
	// return (see Guard.aggregatedLength).
	aggregated int64
	// long are the database's long columns (nil: unknown); longFields
	// counts the select fields that name one, stars the fields that are
	// a *, and tables how many times the statement names each table.
	long       *longColumns
	longFields int
	stars      int
	tables     map[string]int
}

// bounds refuses stmt when a string it writes or builds passes maxBuilt
// or its searches pass maxWork (KindTooLarge), or when a count that
// decides a string's length is not a literal (KindForbiddenFunction).
func (c *Guard) bounds(stmt ast.StmtNode) *text2sql.SQLError {
	w := &work{long: c.long, tables: map[string]int{}, aggregated: c.aggregatedLength()}
	stmt.Accept(w)
	if w.err != nil {
		return w.err
	}
	if w.regexes > maxRegexes {
		return regexError(w.regexes)
	}
	if n := w.longValues(); n > maxLongValues {
		return &text2sql.SQLError{Kind: text2sql.KindTooLarge,
			Message: fmt.Sprintf("a row may hold %d values of long columns (MEDIUMTEXT, LONGTEXT, MEDIUMBLOB, LONGBLOB, JSON); at most %d are allowed, because the server builds a row whole in its memory", n, maxLongValues),
			Hint:    "select the long columns once, and fewer of them"}
	}
	longest := max(w.longest, 1)
	for _, b := range w.builds {
		if n := w.size(b, longest); n > maxBuilt {
			return tooLong(n)
		}
	}
	unseen := longest
	switch {
	case w.recurse && w.grows:
		unseen = rowBuiltLength
	case w.rowBuilt:
		unseen = w.aggregated
	}
	var total float64
	for _, s := range w.searches {
		total += float64(w.size(s[0], unseen)) * float64(w.size(s[1], unseen))
	}
	if total > maxWork {
		return &text2sql.SQLError{Kind: text2sql.KindTooLarge,
			Message: fmt.Sprintf("the statement's searches (LIKE, LOCATE, REPLACE, …) may compare %.3g characters in one row, more than the %.0e the server can be stopped after; search in shorter strings", total, float64(maxWork)),
			Hint:    "search with short literal patterns, not built strings"}
	}
	return nil
}

func tooLong(n int64) *text2sql.SQLError {
	return &text2sql.SQLError{Kind: text2sql.KindTooLarge,
		Message: fmt.Sprintf("the statement writes or builds a string of %d bytes; at most %d are allowed, because the server computes a value whole before the time limit can stop it", n, maxBuilt),
		Hint:    "use shorter literals and smaller counts"}
}

func (w *work) Enter(n ast.Node) (ast.Node, bool) {
	switch x := n.(type) {
	case *ast.SelectStmt:
		w.depth++
	case *ast.WithClause:
		w.recurse = w.recurse || x.IsRecursive
	case *ast.CommonTableExpression:
		// Its Accept does not walk the query.
		if x.Query != nil {
			x.Query.Accept(w)
		}
	case ast.ValueExpr:
		// Strings, and hexadecimal and bit literals, which are strings too.
		w.longest = max(w.longest, int64(len(x.GetDatumString())))
		w.builds = append(w.builds, x)
	case *ast.AggregateFuncExpr:
		if rowBuilders[strings.ToLower(x.F)] && w.depth > 1 {
			w.rowBuilt = true
		}
	case *ast.PatternLikeOrIlikeExpr:
		w.searches = append(w.searches, [2]ast.ExprNode{x.Expr, x.Pattern})
	case *ast.PatternRegexpExpr:
		w.searches = append(w.searches, [2]ast.ExprNode{x.Expr, x.Pattern})
		w.regexes++
	case *ast.FuncCallExpr:
		w.call(x)
	case *ast.FuncCastExpr:
		w.builds = append(w.builds, x)
	case *ast.TableName:
		w.tables[x.Name.L]++
	case *ast.SelectField:
		switch {
		case x.WildCard != nil:
			w.stars++
		case w.long != nil && w.namesLong(x.Expr):
			w.longFields++
		}
	}
	return n, w.err != nil
}

// longValues is how many values of long columns a row of the statement
// may hold: one per select field naming one, and for each *, those of
// every table the statement names, each time it names it (a * may stand
// for any of them).
func (w *work) longValues() int {
	if w.long == nil {
		return 0
	}
	n := w.longFields
	for t, times := range w.tables {
		n += w.stars * times * w.long.byTable[t]
	}
	return n
}

// namesLong reports whether e names a long column.
func (w *work) namesLong(e ast.ExprNode) bool {
	f := &columnFinder{names: w.long.names}
	e.Accept(f)
	return f.found
}

// columnFinder looks for a column whose name is in names.
type columnFinder struct {
	names map[string]bool
	found bool
}

func (f *columnFinder) Enter(n ast.Node) (ast.Node, bool) {
	if c, ok := n.(*ast.ColumnNameExpr); ok && f.names[c.Name.Name.L] {
		f.found = true
	}
	return n, f.found
}

func (f *columnFinder) Leave(n ast.Node) (ast.Node, bool) { return n, !f.found }

func (w *work) Leave(n ast.Node) (ast.Node, bool) {
	if _, ok := n.(*ast.SelectStmt); ok {
		w.depth--
	}
	return n, w.err == nil
}

// call notes a call's count, the string it builds and its search.
func (w *work) call(f *ast.FuncCallExpr) {
	name := f.FnName.L
	w.grows = w.grows || growing[name]
	if isRegex(name) {
		w.regexes++
	}
	if i, ok := countArg[name]; ok && i < len(f.Args) {
		c, ok := literalCount(f.Args[i])
		if !ok {
			w.err = &text2sql.SQLError{Kind: text2sql.KindForbiddenFunction,
				Message: "the length " + strings.ToUpper(name) + " builds must be an integer written in the statement: the server builds the string whole, where the time limit cannot stop it",
				Hint:    "write the count as a literal of at most " + strconv.Itoa(maxBuilt)}
			return
		}
		w.longest = max(w.longest, c)
	}
	if growing[name] {
		w.builds = append(w.builds, f)
	}
	if ix, ok := searchArgs[name]; ok && ix[1] < len(f.Args) {
		w.searches = append(w.searches, [2]ast.ExprNode{f.Args[ix[0]], f.Args[ix[1]]})
	}
}

// literalCount is the value of a count written as an integer literal
// (negative counts build nothing).
func literalCount(e ast.ExprNode) (int64, bool) {
	v, ok := e.(ast.ValueExpr)
	if !ok {
		return 0, false
	}
	switch x := v.GetValue().(type) {
	case int64:
		return max(x, 0), true
	case uint64:
		return int64(min(x, 1<<62)), true
	}
	return 0, false
}

// size is the most bytes e can be, a value the walk cannot see (a
// column, a subquery) counting as unseen bytes.
func (w *work) size(e ast.ExprNode, unseen int64) int64 {
	switch x := e.(type) {
	case ast.ValueExpr:
		return int64(len(x.GetDatumString()))
	case *ast.ColumnNameExpr, *ast.SubqueryExpr, *ast.VariableExpr, *ast.DefaultExpr:
		return unseen
	case *ast.AggregateFuncExpr:
		if rowBuilders[strings.ToLower(x.F)] {
			return w.aggregated
		}
	case *ast.FuncCastExpr:
		// CAST(… AS BINARY(n)) pads to n bytes.
		if x.Tp != nil && x.Tp.GetCharset() == "binary" {
			return max(w.size(x.Expr, unseen), int64(x.Tp.GetFlen()))
		}
		return w.size(x.Expr, unseen)
	case *ast.FuncCallExpr:
		if n, ok := w.callSize(x, unseen); ok {
			return n
		}
	}
	// Any other expression is at most its operands together, or a
	// printed number or date.
	c := &operands{w: w, root: e, unseen: unseen}
	e.Accept(c)
	return max(c.sum, printed)
}

// printed bounds the bytes of a number or a date a call prints (a
// DOUBLE takes at most 23, a DECIMAL 67).
const printed = 96

// operands sums the sizes of an expression's operands.
type operands struct {
	w      *work
	root   ast.Node
	unseen int64
	sum    int64
}

func (o *operands) Enter(n ast.Node) (ast.Node, bool) {
	e, ok := n.(ast.ExprNode)
	if n == o.root || !ok {
		return n, false // look inside (WHEN clauses, ORDER BY items, …)
	}
	o.sum = satAdd(o.sum, o.w.size(e, o.unseen))
	return n, true
}

func (o *operands) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// unbounded is the size of a call whose result the Guard cannot bound:
// UNCOMPRESS inflates up to a thousand times, WEIGHT_STRING follows a
// collation's expansions (one character weighed 48 bytes) and pads to
// AS CHAR(n), SFORMAT pads to a width its format may compute.
const unbounded = rowBuiltLength

// dateSpecifier is how much longer DATE_FORMAT makes its format: a
// two-character specifier prints at most nine ('%W': Wednesday).
const dateSpecifier = 5

// callSize is the size of the calls that build longer strings than
// their operands; ok is false for the others.
func (w *work) callSize(f *ast.FuncCallExpr, unseen int64) (n int64, ok bool) {
	arg := func(i int) int64 {
		if i >= len(f.Args) {
			return 0
		}
		return w.size(f.Args[i], unseen)
	}
	switch f.FnName.L {
	case "repeat", "lpad", "rpad", "space":
		i := countArg[f.FnName.L]
		if i >= len(f.Args) {
			return 0, true // the server refuses the call
		}
		c, _ := literalCount(f.Args[i])
		if f.FnName.L == "repeat" {
			return sat(arg(0), c), true
		}
		return c, true
	case "replace", "regexp_replace":
		return sat(arg(0), max(arg(2), 1)), true
	case "export_set":
		// 64 bits, each printed as on or off, and a separator (",").
		return sat(64, max(arg(1), arg(2))+max(arg(3), 1)), true
	case "hex", "quote", "to_base64", "json_quote":
		return sat(arg(0), 2) + printed, true
	case "json_detailed", "json_pretty":
		// Indentation grows with depth: a nested document's square.
		return sat(arg(0), max(arg(0)/2, 1)) + printed, true
	case "date_format", "time_format":
		return sat(arg(1), dateSpecifier) + printed, true
	case "sformat":
		return w.sformatSize(f, unseen), true
	case "uncompress", "weight_string":
		return unbounded, true
	}
	return 0, false
}

// sformatSize is the size of SFORMAT(format, …): its operands and the
// widths its format writes; a format not written in the statement is
// unbounded.
func (w *work) sformatSize(f *ast.FuncCallExpr, unseen int64) int64 {
	if len(f.Args) == 0 {
		return 0
	}
	v, ok := f.Args[0].(ast.ValueExpr)
	if !ok {
		return unbounded
	}
	format, ok := v.GetValue().(string)
	if !ok {
		return unbounded
	}
	var n int64
	for _, a := range f.Args {
		n = satAdd(n, w.size(a, unseen))
	}
	for _, digits := range strings.FieldsFunc(format, func(r rune) bool { return r < '0' || r > '9' }) {
		width, err := strconv.ParseInt(digits, 10, 64)
		if err != nil {
			return unbounded
		}
		n = satAdd(n, width)
	}
	return n
}

// satAdd is a+b, held at 1<<62.
func satAdd(a, b int64) int64 {
	return min(a+b, 1<<62)
}

// sat is a×b, held at 1<<62 so that it cannot overflow.
func sat(a, b int64) int64 {
	if a != 0 && b > (1<<62)/a {
		return 1 << 62
	}
	return a * b
}

// lexicalBounds bounds a text the parser did not read (see lexicalPlan)
// on its tokens, more strictly: counts must be literals, and every
// string is assumed as long as the statement's longest literal and its
// built strings together, each grown by the calls around it (HEX
// doubles, DATE_FORMAT quintuples); every name of a long column or * of
// a table with long columns counts as values of them.
func (c *Guard) lexicalBounds(toks []sqltext.Token) *text2sql.SQLError {
	l := &lexicalWork{growth: []int64{1}, pending: 1, tables: map[string]int{}}
	for i := range toks {
		if se := l.token(c, toks, i); se != nil {
			return se
		}
	}
	n := satAdd(l.built, l.longest)
	if n > maxBuilt {
		return tooLong(n)
	}
	if l.regexes > maxRegexes {
		return regexError(l.regexes)
	}
	if n = max(n, 1); float64(l.searches)*float64(n)*float64(n) > maxWork {
		return &text2sql.SQLError{Kind: text2sql.KindTooLarge,
			Message: "the statement's searches (LIKE, LOCATE, REPLACE, …) may compare more characters in one row than the server can be stopped after; search in shorter strings"}
	}
	if c.long == nil {
		return nil
	}
	values := l.longNames
	for t, times := range l.tables {
		values += l.stars * times * c.long.byTable[t]
	}
	if values > maxLongValues {
		return &text2sql.SQLError{Kind: text2sql.KindTooLarge,
			Message: fmt.Sprintf("a row may hold %d values of long columns (MEDIUMTEXT, LONGTEXT, MEDIUMBLOB, LONGBLOB, JSON); at most %d are allowed, because the server builds a row whole in its memory", values, maxLongValues)}
	}
	return nil
}

// tokenGrowth is how much longer than its operands a call makes a
// string, for the calls that multiply it (see callSize).
var tokenGrowth = map[string]int64{"hex": 2, "quote": 2, "to_base64": 2, "json_quote": 2,
	"date_format": dateSpecifier, "time_format": dateSpecifier, "export_set": 64}

// lexicalWork is what lexicalBounds counts; growth holds, for each open
// parenthesis, how much the calls around it grow a string, and pending
// the growth of the call whose parenthesis comes next.
type lexicalWork struct {
	growth                    []int64
	pending                   int64
	built, longest, searches  int64
	longNames, stars, regexes int
	tables                    map[string]int
}

func (l *lexicalWork) token(c *Guard, toks []sqltext.Token, i int) *text2sql.SQLError {
	t := toks[i]
	grow := l.growth[len(l.growth)-1]
	switch {
	case t.Kind == sqltext.String:
		l.longest = max(l.longest, sat(int64(len(t.Text)), grow))
		return nil
	case t.Kind == sqltext.Punct && t.Text == "(":
		l.growth = append(l.growth, sat(grow, l.pending))
		l.pending = 1
		return nil
	case t.Kind == sqltext.Punct && t.Text == ")" && len(l.growth) > 1:
		l.growth = l.growth[:len(l.growth)-1]
		return nil
	case t.Kind == sqltext.Punct && t.Text == "*":
		l.stars++
		return nil
	}
	name, ok := t.Ident()
	if !ok {
		return nil
	}
	name = strings.ToLower(name)
	if c.long != nil {
		if c.long.names[name] {
			l.longNames++
		}
		if c.long.byTable[name] > 0 {
			l.tables[name]++
		}
	}
	if name == "like" || name == "regexp" || name == "rlike" {
		l.searches++
	}
	if isRegex(name) {
		l.regexes++
	}
	if i+1 >= len(toks) || toks[i+1].Text != "(" {
		return nil
	}
	if _, ok := searchArgs[name]; ok {
		l.searches++
	}
	l.pending = max(tokenGrowth[name], 1)
	n, se := tokenCallSize(name, toks, i)
	l.built = satAdd(l.built, sat(n, grow))
	return se
}

// tokenCallSize is the size of the string the call at toks[i] builds
// beyond its operands.
func tokenCallSize(name string, toks []sqltext.Token, i int) (int64, *text2sql.SQLError) {
	args := callArgs(toks[i+2:])
	switch name {
	case "uncompress", "weight_string":
		return 0, tooLong(unbounded)
	case "sformat":
		if len(args[0]) != 1 || args[0][0].Kind != sqltext.String {
			return 0, tooLong(unbounded)
		}
		var n int64
		for _, digits := range strings.FieldsFunc(args[0][0].Text, func(r rune) bool { return r < '0' || r > '9' }) {
			width, err := strconv.ParseInt(digits, 10, 64)
			if err != nil {
				return 0, tooLong(unbounded)
			}
			n = satAdd(n, width)
		}
		return n, nil
	case "binary":
		// CAST(… AS BINARY(n)) pads to n bytes.
		if i > 0 && toks[i-1].Is("as") && len(args[0]) == 1 && args[0][0].Kind == sqltext.Number {
			n, err := strconv.ParseInt(args[0][0].Text, 10, 64)
			if err != nil {
				return 0, tooLong(unbounded)
			}
			return n, nil
		}
		return 0, nil
	}
	ci, ok := countArg[name]
	if !ok {
		return 0, nil
	}
	var c int64
	var err error
	if ci >= len(args) || len(args[ci]) != 1 || args[ci][0].Kind != sqltext.Number {
		err = strconv.ErrSyntax
	} else {
		c, err = strconv.ParseInt(args[ci][0].Text, 10, 64)
	}
	if err != nil {
		return 0, &text2sql.SQLError{Kind: text2sql.KindForbiddenFunction,
			Message: "the length " + strings.ToUpper(name) + " builds must be an integer written in the statement: the server builds the string whole, where the time limit cannot stop it"}
	}
	if c > maxBuilt {
		return 0, tooLong(c)
	}
	unit := int64(maxBuilt)
	if name != "repeat" {
		unit = 1
	} else if len(args[0]) == 1 && args[0][0].Kind == sqltext.String {
		unit = int64(len(args[0][0].Text))
	}
	return sat(c, unit), nil
}

// callArgs splits the tokens after a call's "(" into its arguments, up
// to the matching ")".
func callArgs(toks []sqltext.Token) [][]sqltext.Token {
	var args [][]sqltext.Token
	var cur []sqltext.Token
	depth := 0
	for _, t := range toks {
		switch {
		case t.Kind == sqltext.Punct && t.Text == "(":
			depth++
		case t.Kind == sqltext.Punct && t.Text == ")":
			if depth == 0 {
				return append(args, cur)
			}
			depth--
		case t.Kind == sqltext.Punct && t.Text == "," && depth == 0:
			args = append(args, cur)
			cur = nil
			continue
		}
		cur = append(cur, t)
	}
	return append(args, cur)
}

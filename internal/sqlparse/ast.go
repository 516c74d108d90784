// Package sqlparse is one tolerant SQL front end for analysis: it splits a
// text into tokens by the dialect's lexical rules (the lexers of
// internal/sqltext) and builds one syntax tree with spans — statements,
// CTEs, set operations, select items, FROM items with aliases, joins,
// clauses, subqueries and expressions — so that checks can name things
// without each walking token indexes on its own.
//
// It never fails and never panics: a construct it does not know becomes an
// *Error node with the span of the tokens it skipped (and is listed in
// Script.Errors), a statement that is not a query becomes an *Other, and
// text after a statement (prose a model wrote) becomes an *Error
// statement. Nesting is bounded (MaxDepth) and the work is linear in the
// number of tokens, so hostile input costs no more than its length.
//
// The engines' own parsers stay the security authority; this tree is for
// analysis and hints: package lint (whose name resolution still reads the
// tokens inside the tree's spans by index), guard's DeepScan, accuracy,
// eval, and internal/extract, which finds SQL in a model's answer.
package sqlparse

import (
	"github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/sqltext"
)

// Span locates a node in the source: tokens [From, To) of Script.Tokens
// (significant tokens only) and bytes [Pos, End) of the source text. An
// empty span (From == To) marks something missing at Pos.
type Span struct {
	From, To int // token indexes into Script.Tokens
	Pos, End int // byte offsets into the source
	src      string
}

// Extent returns the span itself; every node has one.
func (s Span) Extent() Span { return s }

// Text returns the source text the span covers, exactly as written.
func (s Span) Text() string {
	if s.Pos < 0 || s.End > len(s.src) || s.Pos > s.End {
		return ""
	}
	return s.src[s.Pos:s.End]
}

// Node is any node of the tree.
type Node interface {
	Extent() Span
	Text() string
}

// Stmt is a statement: *Query, *Other or *Error.
type Stmt interface {
	Node
	stmtNode()
}

// QueryBody is the body of a query: *Select, *SetOp, *ParenQuery, *Values
// or *Error.
type QueryBody interface {
	Node
	bodyNode()
}

// TableExpr is a FROM item: *TableName, *DerivedTable, *TableFunc, *Join,
// *ParenTable or *Error.
type TableExpr interface {
	Node
	tableNode()
}

// Expr is an expression.
type Expr interface {
	Node
	exprNode()
}

// Script is a parsed text: its significant tokens and its statements.
type Script struct {
	Span
	Tokens []sqltext.Token // significant tokens (no white space or comments)
	Stmts  []Stmt
	Errors []*Error // every error node, in source order of creation
	// dialect is the dialect the script was parsed in, for QueryAt.
	dialect text2sql.Dialect
}

// Error is a construct the parser did not understand or a missing part
// (an empty span at the place it was expected). It stands for a
// statement, query body, FROM item or expression.
type Error struct {
	Span
	Reason string
}

// ReasonMissingParen is the Reason of the Error the parser records where
// a ")" is missing: the text may have ended inside the parenthesis, so a
// reader that judges truncated text (internal/extract) leaves it out.
const ReasonMissingParen = "missing )"

// Other is a statement that is not a query (INSERT, CREATE, PRAGMA…): its
// tokens are kept, not parsed.
type Other struct {
	Span
	Verb string // first word, upper case
}

// Query is a query statement or subquery: [WITH …] body [ORDER BY …]
// [LIMIT …] [FOR UPDATE / LOCK IN SHARE MODE].
type Query struct {
	Span
	With    *With // nil without WITH
	Body    QueryBody
	OrderBy []*OrderTerm
	Limit   *Limit // nil without LIMIT/OFFSET/FETCH
	Lock    *Lock  // nil without a locking clause
}

// With is a WITH clause.
type With struct {
	Span
	Recursive bool
	CTEs      []*CTE
}

// CTE is one common table expression: name [(columns)] AS [[NOT]
// MATERIALIZED] (query) [SEARCH … SET col] [CYCLE … SET col USING col].
type CTE struct {
	Span
	Name    *Ident
	Columns []*Ident
	Query   *Query
	// Generated are the columns PostgreSQL's SEARCH and CYCLE clauses add
	// to the CTE's output: the sequence column, the cycle mark, the path.
	Generated []*Ident
}

// SetOp is left UNION|INTERSECT|EXCEPT [ALL|DISTINCT] right. INTERSECT
// binds tighter than UNION and EXCEPT; chains are left-deep.
type SetOp struct {
	Span
	Op          string // "UNION", "INTERSECT" or "EXCEPT"
	All         bool
	Left, Right QueryBody
}

// ParenQuery is a parenthesised query used as a set operand.
type ParenQuery struct {
	Span
	Query *Query
}

// Values is VALUES (…), (…).
type Values struct {
	Span
	Rows []*Tuple
}

// Select is one SELECT block.
type Select struct {
	Span
	Distinct   bool
	DistinctOn []Expr // PostgreSQL DISTINCT ON (…)
	Top        Expr   // TOP n (SQL Server; a dialect error for the targets, parsed to flag it)
	Items      []*SelectItem
	From       []TableExpr // comma-separated items; joins nest inside
	Where      Expr
	GroupBy    []Expr
	Having     Expr
	Windows    []*WindowDef
	Into       *Into    // SELECT … INTO target; nil without
	Errors     []*Error // tokens skipped between clauses
}

// Into is the INTO clause of a SELECT (PostgreSQL and MySQL: it writes
// the result to a table or variables, so it is no read): INTO and its
// targets.
type Into struct{ Span }

// SelectItem is expr [[AS] alias]; the expression may be a *Star.
type SelectItem struct {
	Span
	Expr  Expr
	Alias *Ident // nil without alias
}

// TableName is a table named in FROM: [ONLY] [schema.]name [[AS] alias
// [(cols)]] with MySQL index hints, SQLite INDEXED BY / NOT INDEXED, or
// TABLESAMPLE method (args) [REPEATABLE (seed)].
type TableName struct {
	Span
	Parts   []*Ident // qualified name, last part is the table
	Alias   *Ident
	Columns []*Ident
	Hints   []*Hint
	Sample  *Call // TABLESAMPLE method(args); nil without
	Seed    Expr  // REPEATABLE (seed); nil without
}

// Hint is an index hint (USE|FORCE|IGNORE INDEX (…), INDEXED BY i, NOT
// INDEXED) or MySQL's partition selection (PARTITION (p0, p1)), kept as
// text.
type Hint struct{ Span }

// DerivedTable is [LATERAL] (query) [AS] alias [(cols)].
type DerivedTable struct {
	Span
	Lateral bool
	Query   *Query
	Alias   *Ident
	Columns []*Ident
}

// TableFunc is a table-valued function in FROM: json_each(x) [WITH
// ORDINALITY] [AS] alias [(cols)], or PostgreSQL's ROWS FROM (f(x) [AS
// (coldefs)], …) (Rows; Call is then nil). Columns holds the names of a
// column list or of column definitions (a int, b text), whose types are
// not kept.
type TableFunc struct {
	Span
	Call       *Call
	Rows       []*Call
	Ordinality bool
	Alias      *Ident
	Columns    []*Ident
}

// Join is left [NATURAL] kind JOIN right [ON cond | USING (cols) [AS
// alias]].
type Join struct {
	Span
	Kind        string // "", "INNER", "LEFT", "RIGHT", "FULL", "CROSS" or "STRAIGHT_JOIN"
	Natural     bool
	Left, Right TableExpr
	On          Expr
	Using       []*Ident
	// UsingAlias names the USING columns as a table (PostgreSQL 14: JOIN
	// … USING (a) AS j, then j.a); nil without.
	UsingAlias *Ident
}

// ParenTable is a parenthesised FROM item: (a JOIN b) [[AS] alias].
type ParenTable struct {
	Span
	Table TableExpr
	Alias *Ident // SQLite only; nil without
}

// OrderTerm is expr [ASC|DESC | USING op] [NULLS FIRST|LAST]; COLLATE is
// a *Collate expression; PostgreSQL's USING op is not kept.
type OrderTerm struct {
	Span
	Expr  Expr
	Desc  bool
	Asc   bool   // ASC written
	Nulls string // "", "FIRST" or "LAST"
}

// Limit is LIMIT count [OFFSET off], LIMIT off, count (Comma), or OFFSET
// off [ROWS] FETCH FIRST count ROWS ONLY|WITH TIES (Fetch); MariaDB's
// LIMIT may end with ROWS EXAMINED n (Examined).
type Limit struct {
	Span
	Count    Expr // nil for OFFSET alone and PostgreSQL's LIMIT ALL
	Offset   Expr // nil without offset
	Examined Expr // nil without ROWS EXAMINED
	Comma    bool
	Fetch    bool
	Ties     bool
}

// Lock is FOR UPDATE/SHARE … or LOCK IN SHARE MODE, kept as text.
type Lock struct{ Span }

// WindowDef is name AS (spec) in a WINDOW clause.
type WindowDef struct {
	Span
	Name *Ident
	Spec *WindowSpec
}

// WindowSpec is ([base] [PARTITION BY …] [ORDER BY …] [frame]).
type WindowSpec struct {
	Span
	Base        *Ident
	PartitionBy []Expr
	OrderBy     []*OrderTerm
	Frame       *Frame
}

// Frame is a window frame (ROWS|RANGE|GROUPS …), kept as text.
type Frame struct{ Span }

// Ident is an identifier: a bare word (keywords included where the
// grammar allows a name) or a quoted identifier.
type Ident struct {
	Span
	Name   string // without quotes
	Quoted bool
}

// ColumnRef is a qualified column name: t.c, s.t.c. A bare name in the
// place of an expression is an *Ident (ColumnRefs finds both).
type ColumnRef struct {
	Span
	Parts []*Ident
}

// Star is * or t.*.
type Star struct {
	Span
	Table []*Ident // qualifier; nil for a bare *
}

// LitKind classifies a literal.
type LitKind int

// The literal kinds.
const (
	Number LitKind = iota
	String
	Null
	Bool
	Typed // DATE '…', TIMESTAMP '…'
)

// Literal is a number, string, NULL, TRUE/FALSE or typed literal.
type Literal struct {
	Span
	Kind LitKind
	Type string // for Typed: the type word, upper case
}

// Param is a parameter: ?, ?1, $1, :name, @name.
type Param struct{ Span }

// Unary is op x: -, +, ~, NOT, BINARY (MySQL), PostgreSQL's prefix
// operators (|/, @, …).
type Unary struct {
	Span
	Op string
	X  Expr
}

// Binary is x op y for arithmetic, comparison, AND/OR, ||, JSON and bit
// operators, PostgreSQL's other operators (@>, ?|, <->, …) and x AT TIME
// ZONE y; Op is upper case for words (AND, OR, XOR, DIV, MOD, AT TIME
// ZONE).
type Binary struct {
	Span
	Op   string
	X, Y Expr
}

// Is is x IS [NOT] y, x IS [NOT] DISTINCT FROM y, and the postfix forms
// ISNULL, NOTNULL and NOT NULL (Y is then a NULL *Literal with an empty
// span).
type Is struct {
	Span
	Not      bool
	Distinct bool
	X, Y     Expr
}

// Between is x [NOT] BETWEEN lo AND hi.
type Between struct {
	Span
	Not       bool
	X, Lo, Hi Expr
}

// In is x [NOT] IN (list) or x [NOT] IN (query).
type In struct {
	Span
	Not   bool
	X     Expr
	List  []Expr
	Query *Query // nil for a list
}

// Like is x [NOT] LIKE|ILIKE|GLOB|REGEXP|RLIKE|SIMILAR TO|MATCH pattern
// [ESCAPE e], or MySQL's x SOUNDS LIKE y.
type Like struct {
	Span
	Not        bool
	Op         string // upper case, words joined by one space
	X, Pattern Expr
	Escape     Expr
}

// Cast is CAST(x AS type), CONVERT(x, type) is a *Call; x::type is a Cast
// with Op "::".
type Cast struct {
	Span
	Op   string // "CAST", "TRY_CAST" or "::"
	X    Expr
	Type *TypeName
}

// TypeName is a type: words, optional (args), optional [].
type TypeName struct {
	Span
	Name  string // words joined by one space, as written
	Args  []Expr
	Array bool
}

// Case is CASE [operand] WHEN … THEN … [ELSE …] END.
type Case struct {
	Span
	Operand Expr
	Whens   []*When
	Else    Expr
}

// When is WHEN cond THEN result.
type When struct {
	Span
	Cond, Result Expr
}

// Exists is EXISTS (query).
type Exists struct {
	Span
	Query *Query
}

// Subquery is a scalar subquery (query) in an expression.
type Subquery struct {
	Span
	Query *Query
}

// Call is a function call: name([DISTINCT|ALL] args | *) [AGAINST (…)] [WITHIN GROUP
// (ORDER BY …)] [FILTER (WHERE …)] [OVER (…) | OVER name]. Keyword
// argument separators (EXTRACT(YEAR FROM d), SUBSTRING(s FROM 1 FOR 2),
// POSITION(a IN b), TRIM(BOTH x FROM y), GROUP_CONCAT(x SEPARATOR ','),
// XMLTABLE(p PASSING x …)) are dropped: Args holds the expressions in
// order. GROUP BY GROUPING SETS (…) is a Call named "GROUPING SETS";
// MySQL's MATCH (cols) AGAINST (expr IN … MODE) is a Call named MATCH
// whose last argument is the search expression.
type Call struct {
	Span
	Name     []*Ident // qualified name; last part is the function
	Distinct bool
	Star     bool
	Args     []Expr
	OrderBy  []*OrderTerm // ORDER BY inside the call or WITHIN GROUP
	Filter   Expr
	Over     *WindowSpec
	OverName *Ident
	// Columns are the names JSON_TABLE's and XMLTABLE's COLUMNS clause
	// defines (nested ones included); their types and paths are not kept.
	Columns []*Ident
}

// Array is PostgreSQL's ARRAY[x, y, …]; an element may be a bare [ … ]
// (a nested Array of a multidimensional constructor).
type Array struct {
	Span
	Elems []Expr
}

// Field is PostgreSQL's field selection from a composite value:
// (x).name, (x).*, a[1].name.
type Field struct {
	Span
	X    Expr
	Name *Ident // nil for .*
	Star bool
}

// Subscript is PostgreSQL's x[i] or slice x[lo:hi] (either bound may be
// nil in a slice).
type Subscript struct {
	Span
	X, Index, Upper Expr
	Slice           bool
}

// Paren is (x).
type Paren struct {
	Span
	X Expr
}

// Tuple is (x, y, …) or ROW(x, y).
type Tuple struct {
	Span
	List []Expr
}

// Collate is x COLLATE name.
type Collate struct {
	Span
	X         Expr
	Collation *Ident
}

// Interval is INTERVAL value [unit [TO unit]].
type Interval struct {
	Span
	Value Expr
	Unit  *Ident // nil without unit
	To    *Ident // the second unit of YEAR TO MONTH; nil without
}

func (*Query) stmtNode() {}
func (*Other) stmtNode() {}
func (*Error) stmtNode() {}

func (*Select) bodyNode()     {}
func (*SetOp) bodyNode()      {}
func (*ParenQuery) bodyNode() {}
func (*Values) bodyNode()     {}
func (*Error) bodyNode()      {}

func (*TableName) tableNode()    {}
func (*DerivedTable) tableNode() {}
func (*TableFunc) tableNode()    {}
func (*Join) tableNode()         {}
func (*ParenTable) tableNode()   {}
func (*Error) tableNode()        {}

func (*Error) exprNode()     {}
func (*Ident) exprNode()     {}
func (*ColumnRef) exprNode() {}
func (*Star) exprNode()      {}
func (*Literal) exprNode()   {}
func (*Param) exprNode()     {}
func (*Unary) exprNode()     {}
func (*Binary) exprNode()    {}
func (*Is) exprNode()        {}
func (*Between) exprNode()   {}
func (*In) exprNode()        {}
func (*Like) exprNode()      {}
func (*Cast) exprNode()      {}
func (*Case) exprNode()      {}
func (*Exists) exprNode()    {}
func (*Subquery) exprNode()  {}
func (*Call) exprNode()      {}
func (*Paren) exprNode()     {}
func (*Tuple) exprNode()     {}
func (*Collate) exprNode()   {}
func (*Interval) exprNode()  {}
func (*Array) exprNode()     {}
func (*Subscript) exprNode() {}
func (*Field) exprNode()     {}

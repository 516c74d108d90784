package mysql

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
	tidbmysql "github.com/pingcap/tidb/pkg/parser/mysql"
	_ "github.com/pingcap/tidb/pkg/parser/test_driver" // the parser's value expressions

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/guard"
	"github.com/text2sql-go/text2sql/internal/sqltext"
)

// Guard is the statement check of the MySQL/MariaDB executor: a lexical
// pass by MySQL's own rules, then the parse tree of a maintained MySQL
// parser (github.com/pingcap/tidb/pkg/parser), walked with ast.Visitor and,
// as a backstop, by reflection over every field, so every node at any
// depth is decided. It needs no server. A Guard is immutable and safe
// for concurrent use; it implements text2sql.Guard, so a knowledge base
// can check examples offline with it.
//
// A statement passes when:
//
//   - it is valid UTF-8, holds no control character outside string
//     literals and quoted identifiers and, under ANSI_QUOTES, no backslash
//     in a "…" identifier, which the parser would read as an escape (else
//     KindSyntax);
//   - it has no comment that the server executes: /*! … */, /*!50000 … */,
//     /*M! … */, /*M!100000 … */, nor an optimizer hint /*+ … */ (which
//     can SET_VAR session variables): KindForbiddenStatement. Comments are
//     found by MySQL's rules under the session's sql_mode (sqltext.LexMySQL:
//     backslash escapes and "…" strings unless ANSI_QUOTES or
//     NO_BACKSLASH_ESCAPES, "#" comments, "-- " only before white space or
//     a control character). Every other comment is replaced by spaces
//     before the parse, and Prepare returns that text, so the server runs
//     exactly the text the parser read;
//   - the text holds exactly one statement (else KindEmpty or
//     KindMultipleStatements);
//   - it is a query: SELECT, TABLE, VALUES, WITH … SELECT or a set
//     operation (UNION, INTERSECT, EXCEPT) of these, and every WITH query
//     and subquery, at any depth, is one too. Writes and DDL (INSERT,
//     UPDATE, DELETE, REPLACE, CREATE, DROP, ALTER, TRUNCATE, RENAME, LOCK
//     TABLES, LOAD DATA, GRANT, …) are KindNotReadOnly; every other
//     statement (SET, DO, CALL, HANDLER, SHOW, EXPLAIN, PREPARE, EXECUTE,
//     transaction control, FLUSH, KILL, …) is KindForbiddenStatement;
//   - no SELECT anywhere in it has an INTO clause (OUTFILE, DUMPFILE or
//     @variables) or a locking clause (FOR UPDATE, FOR SHARE, LOCK IN
//     SHARE MODE, with or without NOWAIT or SKIP LOCKED), and nothing
//     assigns a variable (@v := …): KindNotReadOnly. Reading variables
//     (@v, @@sql_mode) is allowed;
//   - every function call — scalar, aggregate, window, or a syntax the
//     parser turns into a call (NEXT VALUE FOR s is nextval(s), a->'$.x'
//     is json_extract) — names a function on the allow-list
//     (DefaultFunctions plus the extra names of NewGuard), and
//     LAST_INSERT_ID has no argument. Everything else is
//     KindForbiddenFunction: LOAD_FILE, SLEEP, BENCHMARK, GET_LOCK,
//     RELEASE_LOCK, MASTER_POS_WAIT, NEXTVAL, SETVAL, stored functions
//     (db.f(…) or f(…)) and every name not on the list;
//   - every node of the tree is of a kind the check knows
//     (KindForbiddenStatement otherwise), and constructs of TiDB that
//     MySQL and MariaDB do not have (AS OF TIMESTAMP, TABLESAMPLE, ILIKE)
//     are KindDialect.
//
// DEFAULT(col) is KindForbiddenFunction: it runs the column's default
// expression, which may be NEXTVAL(seq).
//
// A text the parser does not read — MariaDB's own syntax, such as
// JSON_TABLE, CAST(x AS INT), VALUES (1), (2), SOUNDS LIKE, WITHIN GROUP,
// OFFSET … FETCH — is decided on its tokens by rules that hold whatever
// the grammar makes of them (see lexicalPlan), and the server's parser
// then reads it; a text that starts as no query does is KindSyntax with
// the parser's message, worded by its kind where the text shows one
// (INTO, a first keyword that does not start a query), and SELECT TOP n,
// "::" casts and [bracketed] identifiers are KindDialect with a hint.
//
// Some decisions need the server and are taken by the Executor right
// before a statement runs (Statement): that no stored or loadable
// function has the name of a call, and, for a text the parser did not
// read, that no qualifier is another database.
type Guard struct {
	// groupConcatMax is the server's group_concat_max_len (0: unknown).
	groupConcatMax int64
	allow          map[string]bool
	mode           sqltext.MySQLMode
	sqlMode        tidbmysql.SQLMode
	parsers        *sync.Pool
	// database, when set, is the only database whose tables may be
	// named with a qualifier (Confine); foldCase: its name is compared
	// without case (lower_case_table_names ≠ 0).
	database string
	foldCase bool
	// long, when set, are the database's long columns, whose values a
	// row may hold only so many of (see maxLongValues).
	long *longColumns
}

// Confine makes c refuse a table qualified with a database other than
// database (KindForbiddenTable): a statement through the executor reads
// the database it is connected to, never another one of the same server,
// whatever the login may read. foldCase compares the names without case,
// as a server with lower_case_table_names set to 1 or 2 does; 0 (Linux's
// default) tells SHOP from shop. It returns c.
func (c *Guard) Confine(database string, foldCase bool) *Guard {
	c.database, c.foldCase = database, foldCase
	return c
}

// NewGuard returns a Guard for a session whose sql_mode is sqlMode
// (as @@sql_mode reports it; "" is MariaDB's and MySQL's default, where
// "…" is a string and backslash escapes) whose allow-list is
// DefaultFunctions plus extra. Each extra entry names a function as it is
// called, case-insensitively: "my_func" allows my_func(…) (a stored
// function of the current database, or a loadable function), "util.my_func"
// allows util.my_func(…).
func NewGuard(sqlMode string, extra []string) *Guard {
	c := &Guard{allow: make(map[string]bool, len(DefaultFunctions)+len(extra)), mode: sqltext.ParseMySQLMode(sqlMode)}
	for _, f := range DefaultFunctions {
		c.allow[f] = true
	}
	for _, f := range extra {
		if f = strings.ToLower(strings.TrimSpace(f)); f != "" {
			c.allow[f] = true
		}
	}
	// The modes that change how the parser reads a text; the others
	// (ONLY_FULL_GROUP_BY, STRICT_…) change only what the server does.
	for _, f := range strings.Split(strings.ToUpper(sqlMode), ",") {
		switch strings.TrimSpace(f) {
		case "PIPES_AS_CONCAT":
			c.sqlMode |= tidbmysql.ModePipesAsConcat
		case "HIGH_NOT_PRECEDENCE":
			c.sqlMode |= tidbmysql.ModeHighNotPrecedence
		case "IGNORE_SPACE":
			c.sqlMode |= tidbmysql.ModeIgnoreSpace
		case "ANSI", "ORACLE", "DB2", "POSTGRESQL", "MSSQL", "MAXDB":
			c.sqlMode |= tidbmysql.ModePipesAsConcat | tidbmysql.ModeIgnoreSpace
		}
	}
	if c.mode.ANSIQuotes {
		c.sqlMode |= tidbmysql.ModeANSIQuotes
	}
	if c.mode.NoBackslashEscapes {
		c.sqlMode |= tidbmysql.ModeNoBackslashEscapes
	}
	c.parsers = &sync.Pool{New: func() any {
		p := parser.New()
		p.SetSQLMode(c.sqlMode)
		p.SetMariaDB(true)
		return p
	}}
	return c
}

// Check implements text2sql.Guard: it returns nil or the *text2sql.SQLError
// of CheckSQL. It never contacts a server; ctx is unused.
func (c *Guard) Check(_ context.Context, query string) error {
	if se := c.CheckSQL(query); se != nil {
		return se
	}
	return nil
}

// CheckSQL checks one statement and returns nil when it may run, or the
// refusal (see Guard).
func (c *Guard) CheckSQL(query string) *text2sql.SQLError {
	_, se := c.Prepare(query)
	return se
}

// Prepare checks query as CheckSQL does and returns the text to send to
// the server: query with its comments replaced by spaces and without
// trailing white space and semicolons, so the server reads exactly what
// the check parsed.
func (c *Guard) Prepare(query string) (string, *text2sql.SQLError) {
	st, se := c.Plan(query)
	return st.Text, se
}

// Statement is a query that passed the check.
type Statement struct {
	// Text is what the server is sent (see Prepare).
	Text string
	// Calls are the unqualified names the statement calls, in lower case
	// and sorted: functions, aggregates and window functions. Whether
	// the server reads one as its built-in or as a stored or loadable
	// function of that name can depend on how it is written and on what
	// exists when the statement runs (see Executor.Execute).
	Calls []string
	// Unparsed tells that the parser did not read the text, which was
	// decided on its tokens (MariaDB's grammar, see lexicalPlan); then
	// Qualifiers are the names written before a "." (x in x.y), which the
	// executor confirms are not other databases of the server.
	Unparsed   bool
	Qualifiers []string
}

// Plan checks query as Prepare does and returns the statement to run.
func (c *Guard) Plan(query string) (Statement, *text2sql.SQLError) {
	if !utf8.ValidString(query) {
		return Statement{}, &text2sql.SQLError{Kind: text2sql.KindSyntax, SQLState: "HY000",
			Message: "the statement is not valid UTF-8"}
	}
	toks := sqltext.LexMySQL(query, c.mode)
	if se := guard.BoundsError(sqltext.Bounds(toks)); se != nil {
		return Statement{}, se
	}
	blank := []byte(query)
	for _, t := range toks {
		if t.Kind != sqltext.String && t.Kind != sqltext.QuotedIdent {
			if r, ok := controlChar(t.Text); ok {
				return Statement{}, &text2sql.SQLError{Kind: text2sql.KindSyntax,
					Message: fmt.Sprintf("control character %U outside a string literal at byte %d", r, t.Pos)}
			}
		}
		if t.Kind == sqltext.QuotedIdent && t.Text[0] == '"' && strings.Contains(t.Text, `\`) {
			// Under ANSI_QUOTES the server reads a backslash in "…" as itself,
			// the parser as an escape: they would end the name apart.
			return Statement{}, &text2sql.SQLError{Kind: text2sql.KindSyntax,
				Message: fmt.Sprintf("backslash in the double-quoted identifier at byte %d; use a backquoted name", t.Pos)}
		}
		if open := sqltext.ExecutableComment(t); open != "" {
			what := "executable comment " + open + " … */"
			if open == "/*+" {
				what = "optimizer hint /*+ … */"
			}
			return Statement{}, &text2sql.SQLError{Kind: text2sql.KindForbiddenStatement,
				Message: what + ": the server runs its content as SQL; write the query without it",
				Hint:    "remove the comment; a read-only query never needs one"}
		}
		if t.Trivia() {
			for i := t.Pos; i < t.Pos+len(t.Text); i++ {
				if blank[i] != '\n' {
					blank[i] = ' '
				}
			}
		}
	}
	text := sqltext.StripTrailingMySQL(string(blank), c.mode)
	switch n := len(sqltext.StatementsMySQL(text, c.mode)); {
	case n == 0:
		return Statement{}, &text2sql.SQLError{Kind: text2sql.KindEmpty, Message: "no SQL statement"}
	case n > 1:
		return Statement{}, &text2sql.SQLError{Kind: text2sql.KindMultipleStatements,
			Message: strconv.Itoa(n) + " statements; exactly one query is allowed and none of them was run"}
	}
	stmts, err := c.parse(text)
	if err != nil {
		se := c.syntaxError(text, err)
		if se.Kind != text2sql.KindSyntax {
			return Statement{}, se
		}
		sig := sqltext.Significant(sqltext.LexMySQL(text, c.mode))
		st, lse, ok := c.lexicalPlan(text, sig)
		switch {
		case !ok:
			return Statement{}, se
		case lse != nil:
			return Statement{}, lse
		}
		if lse := c.lexicalBounds(sig); lse != nil {
			return Statement{}, lse
		}
		return st, nil
	}
	switch len(stmts) {
	case 0:
		return Statement{}, &text2sql.SQLError{Kind: text2sql.KindEmpty, Message: "no SQL statement"}
	case 1:
	default:
		return Statement{}, &text2sql.SQLError{Kind: text2sql.KindMultipleStatements,
			Message: strconv.Itoa(len(stmts)) + " statements; exactly one query is allowed and none of them was run"}
	}
	calls, se := c.checkTree(stmts[0])
	if se != nil {
		return Statement{}, se
	}
	if se := c.bounds(stmts[0]); se != nil {
		return Statement{}, se
	}
	return Statement{Text: text, Calls: calls}, nil
}

// controlChar returns the first control character of s other than the
// white space the lexers agree on (tab, line feed, vertical tab, form
// feed, carriage return). MySQL ends a "--" comment at one, the parser
// does not: no query needs them outside a literal.
func controlChar(s string) (rune, bool) {
	for i := 0; i < len(s); i++ {
		b := s[i]
		if (b < ' ' && strings.IndexByte("\t\n\v\f\r", b) < 0) || b == 0x7f {
			return rune(b), true
		}
	}
	return 0, false
}

// parse runs the parser, turning a panic into an error.
func (c *Guard) parse(text string) (stmts []ast.StmtNode, err error) {
	p := c.parsers.Get().(*parser.Parser)
	defer func() {
		if r := recover(); r != nil {
			// A parser that panicked may hold broken state: drop it.
			stmts, err = nil, fmt.Errorf("the parser failed on this text: %v", r)
			return
		}
		c.parsers.Put(p)
	}()
	stmts, _, err = p.ParseSQL(text)
	return stmts, err
}

// checkTree walks a parsed statement with ast.Visitor and then, by
// reflection, every node the visitor did not reach. It returns the
// unqualified names the statement calls.
func (c *Guard) checkTree(stmt ast.StmtNode) ([]string, *text2sql.SQLError) {
	switch stmt.(type) {
	case *ast.SelectStmt, *ast.SetOprStmt:
	default:
		return nil, statementError(stmt, "")
	}
	v := &visitor{c: c, seen: map[ast.Node]bool{}, calls: map[string]bool{}}
	stmt.Accept(v)
	if v.err != nil {
		return nil, v.err
	}
	c.reflectWalk(reflect.ValueOf(stmt), v, map[uintptr]bool{})
	if v.err != nil {
		return nil, v.err
	}
	return slices.Sorted(maps.Keys(v.calls)), nil
}

// visitor checks each node it enters and stops at the first refusal.
type visitor struct {
	c    *Guard
	seen map[ast.Node]bool
	// cte names the WITH query being walked, for the wording of a
	// statement inside it.
	cte string
	err *text2sql.SQLError
	// calls are the unqualified names the statement calls, as the
	// server reads them (see Statement.Calls).
	calls map[string]bool
}

func (v *visitor) Enter(n ast.Node) (ast.Node, bool) {
	if v.err != nil {
		return n, true
	}
	v.seen[n] = true
	v.err = v.c.checkNode(n, v.cte)
	v.record(n)
	if cte, ok := n.(*ast.CommonTableExpression); ok && v.err == nil {
		outer := v.cte
		v.cte = cte.Name.O
		if cte.Query != nil {
			cte.Query.Accept(v)
		}
		v.cte = outer
		return n, true
	}
	return n, v.err != nil
}

func (v *visitor) Leave(n ast.Node) (ast.Node, bool) { return n, v.err == nil }

// record notes the name of an unqualified call n makes. Every form
// counts, aggregates and window functions too: COUNT (x) with a space,
// or `count`(x), is read by the server as a call of a stored function
// or loadable function named count.
func (v *visitor) record(n ast.Node) {
	name := ""
	switch x := n.(type) {
	case *ast.FuncCallExpr:
		if x.Schema.L == "" {
			name = displayName(x.FnName.L)
		}
	case *ast.AggregateFuncExpr:
		name = strings.ToLower(x.F)
	case *ast.WindowFuncExpr:
		name = strings.ToLower(x.Name)
	}
	if sqlName(name) {
		v.calls[name] = true
	}
}

// sqlName reports whether name can be written as an unquoted SQL
// identifier; the parser's own names of literals ('tidb`.(dateliteral)
// cannot, and name no call.
func sqlName(name string) bool {
	if name == "" {
		return false
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '$') {
			return false
		}
	}
	return true
}

var nodeType = reflect.TypeFor[ast.Node]()

// reflectWalk finds every ast.Node reachable from val through exported
// and embedded fields, slices and pointers, and checks those the visitor
// did not see (an Accept method that skips a child cannot hide it).
func (c *Guard) reflectWalk(val reflect.Value, v *visitor, done map[uintptr]bool) {
	if v.err != nil {
		return
	}
	switch val.Kind() {
	case reflect.Interface:
		if !val.IsNil() {
			c.reflectWalk(val.Elem(), v, done)
		}
	case reflect.Pointer:
		if val.IsNil() || done[val.Pointer()] {
			return
		}
		done[val.Pointer()] = true
		if val.Type().Implements(nodeType) && val.CanInterface() {
			if n := val.Interface().(ast.Node); !v.seen[n] {
				v.seen[n] = true
				if v.err = c.checkNode(n, ""); v.err != nil {
					return
				}
				v.record(n)
			}
		}
		c.reflectWalk(val.Elem(), v, done)
	case reflect.Struct:
		for _, i := range fieldsToWalk(val.Type()) {
			c.reflectWalk(val.Field(i), v, done)
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < val.Len(); i++ {
			c.reflectWalk(val.Index(i), v, done)
		}
	}
}

// walkFields holds, by struct type, the fields reflectWalk follows
// (fieldsToWalk).
var walkFields sync.Map

// fieldsToWalk returns the indexes of the fields of struct type t that
// reflectWalk follows: the exported and embedded ones whose type can
// hold an ast.Node (holdsNode). The others, strings, numbers and
// structs of them, lead to no node, and walking them costs a third of
// the walk.
func fieldsToWalk(t reflect.Type) []int {
	if f, ok := walkFields.Load(t); ok {
		return f.([]int)
	}
	var fields []int
	for i := range t.NumField() {
		if f := t.Field(i); (f.IsExported() || f.Anonymous) && holdsNode(f.Type) {
			fields = append(fields, i)
		}
	}
	walkFields.Store(t, fields)
	return fields
}

// holdsNode reports whether a value of type t can lead reflectWalk to
// an ast.Node: an interface or a pointer can, a slice or array when its
// elements can, a struct when a field it follows can.
func holdsNode(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Interface, reflect.Pointer:
		return true
	case reflect.Slice, reflect.Array:
		return holdsNode(t.Elem())
	case reflect.Struct:
		// A struct holds another only by value, so this ends.
		for i := range t.NumField() {
			if f := t.Field(i); (f.IsExported() || f.Anonymous) && holdsNode(f.Type) {
				return true
			}
		}
	}
	return false
}

// knownNodes are the node kinds of a query that hold no call and change
// nothing by themselves; every other kind is decided in checkNode or
// refused.
var knownNodes = map[string]bool{}

func init() {
	for _, n := range []ast.Node{
		&ast.SetOprSelectList{}, &ast.WithClause{}, &ast.CommonTableExpression{}, &ast.SubqueryExpr{},
		&ast.FieldList{}, &ast.SelectField{}, &ast.TableRefsClause{}, &ast.Join{}, &ast.TableSource{},
		&ast.TableName{}, &ast.OnCondition{}, &ast.ColumnName{}, &ast.ColumnNameExpr{},
		&ast.BinaryOperationExpr{}, &ast.UnaryOperationExpr{}, &ast.BetweenExpr{}, &ast.CaseExpr{},
		&ast.WhenClause{}, &ast.CompareSubqueryExpr{}, &ast.ExistsSubqueryExpr{}, &ast.PatternInExpr{},
		&ast.IsNullExpr{}, &ast.IsTruthExpr{}, &ast.ParenthesesExpr{}, &ast.PositionExpr{},
		&ast.PatternRegexpExpr{}, &ast.RowExpr{}, &ast.ValuesExpr{},
		&ast.SetCollationExpr{}, &ast.MatchAgainst{}, &ast.FuncCastExpr{}, &ast.TrimDirectionExpr{},
		&ast.TimeUnitExpr{}, &ast.GetFormatSelectorExpr{}, &ast.GroupByClause{}, &ast.HavingClause{},
		&ast.ByItem{}, &ast.OrderByClause{}, &ast.Limit{}, &ast.WindowSpec{}, &ast.FrameClause{},
		&ast.FrameBound{}, &ast.PartitionByClause{}, &ast.MaxValueExpr{}, &ast.WildCardField{},
	} {
		knownNodes[reflect.TypeOf(n).Elem().Name()] = true
	}
	// The parser's literal values and ? markers (package test_driver).
	knownNodes["ValueExpr"] = true
	knownNodes["ParamMarkerExpr"] = true
}

// checkNode decides one node; cte names the WITH query holding it.
func (c *Guard) checkNode(n ast.Node, cte string) *text2sql.SQLError {
	switch x := n.(type) {
	case *ast.SelectStmt:
		if x.SelectIntoOpt != nil {
			return intoError(x.SelectIntoOpt)
		}
		if x.LockInfo != nil && x.LockInfo.LockType != ast.SelectLockNone {
			return &text2sql.SQLError{Kind: text2sql.KindNotReadOnly,
				Message: "locking clause (" + strings.ToUpper(x.LockInfo.LockType.String()) + ") takes row locks; only plain queries are allowed"}
		}
		if len(x.TableHints) > 0 {
			return hintError()
		}
		return nil
	case *ast.SetOprStmt:
		return nil
	case ast.StmtNode:
		return statementError(x, cte)
	case *ast.VariableExpr:
		if x.Value != nil {
			name := "@" + x.Name
			if x.IsSystem {
				name = "@@" + x.Name
			}
			return &text2sql.SQLError{Kind: text2sql.KindNotReadOnly,
				Message: "assignment to variable " + name + " (:=) changes the session; only plain queries are allowed"}
		}
		return nil
	case *ast.FuncCallExpr:
		return c.checkFunc(x)
	case *ast.DefaultExpr:
		// The column's default expression runs: it may be NEXTVAL(seq),
		// which moves a sequence.
		return &text2sql.SQLError{Kind: text2sql.KindForbiddenFunction,
			Message: "DEFAULT(column) evaluates the column's default expression, which may call a sequence; only plain queries are allowed"}
	case *ast.TableName:
		if systemSchemas[x.Schema.L] {
			return &text2sql.SQLError{Kind: text2sql.KindForbiddenTable,
				Message: "table " + x.Schema.O + "." + x.Name.O + " is part of the server's system schemas; only the database's own tables and views may be read",
				Hint:    "query the application's tables"}
		}
		if c.database != "" && x.Schema.O != "" && x.Schema.O != c.database && !(c.foldCase && strings.EqualFold(x.Schema.O, c.database)) {
			return &text2sql.SQLError{Kind: text2sql.KindForbiddenTable,
				Message: "table " + x.Schema.O + "." + x.Name.O + " is in another database of the server; only the tables of " + c.database + " may be read",
				Hint:    "name the table without a database, as the schema shows it"}
		}
	case *ast.AggregateFuncExpr:
		return c.checkName(x.F, "aggregate function")
	case *ast.WindowFuncExpr:
		return c.checkName(x.Name, "window function")
	case *ast.TableOptimizerHint:
		return hintError()
	case *ast.AsOfClause:
		return &text2sql.SQLError{Kind: text2sql.KindDialect,
			Message: "AS OF TIMESTAMP is TiDB syntax, not MySQL or MariaDB"}
	case *ast.TableSample:
		return &text2sql.SQLError{Kind: text2sql.KindDialect,
			Message: "TABLESAMPLE is not MySQL or MariaDB syntax", Hint: "use ORDER BY RAND() LIMIT n"}
	case *ast.PatternLikeOrIlikeExpr:
		if !x.IsLike {
			return &text2sql.SQLError{Kind: text2sql.KindDialect,
				Message: "ILIKE is PostgreSQL syntax", Hint: "use LIKE (case-insensitive under the usual collations) or LOWER(x) LIKE …"}
		}
		return nil
	}
	name := reflect.TypeOf(n).Elem().Name()
	if knownNodes[name] {
		return nil
	}
	return &text2sql.SQLError{Kind: text2sql.KindForbiddenStatement,
		Message: "construct " + name + " is not among those the statement check knows; only plain queries are allowed"}
}

func hintError() *text2sql.SQLError {
	return &text2sql.SQLError{Kind: text2sql.KindForbiddenStatement,
		Message: "optimizer hint /*+ … */: the server runs its content; write the query without it"}
}

func intoError(o *ast.SelectIntoOption) *text2sql.SQLError {
	what := "INTO OUTFILE writes a file on the server"
	switch o.Tp {
	case ast.SelectIntoDumpfile:
		what = "INTO DUMPFILE writes a file on the server"
	case ast.SelectIntoVars:
		what = "INTO @variable changes the session"
	}
	return &text2sql.SQLError{Kind: text2sql.KindNotReadOnly, Message: what + "; only plain queries are allowed"}
}

// systemSchemas hold the server's own tables and views: accounts and
// password hashes (mysql.user, mysql.global_priv), other sessions'
// statements (information_schema.processlist, performance_schema), the
// server's settings.
var systemSchemas = map[string]bool{"mysql": true, "information_schema": true, "performance_schema": true, "sys": true}

// checkFunc checks a function call against the allow-list.
func (c *Guard) checkFunc(f *ast.FuncCallExpr) *text2sql.SQLError {
	name := f.FnName.L
	if f.Schema.L != "" {
		full := f.Schema.L + "." + name
		if c.allow[full] {
			return nil
		}
		return &text2sql.SQLError{Kind: text2sql.KindForbiddenFunction,
			Message: "function " + full + " is a stored function, not on the allow-list of read-only functions"}
	}
	if name == tidbLastInsertID && len(f.Args) > 0 {
		return &text2sql.SQLError{Kind: text2sql.KindForbiddenFunction,
			Message: "LAST_INSERT_ID(expr) sets the session's last insert id; only LAST_INSERT_ID() without argument is allowed"}
	}
	return c.checkName(name, "function")
}

func (c *Guard) checkName(name, what string) *text2sql.SQLError {
	l := strings.ToLower(name)
	if c.allow[l] {
		return nil
	}
	if alt, ok := otherDialect[l]; ok {
		return &text2sql.SQLError{Kind: text2sql.KindDialect,
			Message: what + " " + l + " is not a MySQL/MariaDB function (it belongs to another SQL dialect)",
			Hint:    "in MySQL/MariaDB use " + alt}
	}
	return &text2sql.SQLError{Kind: text2sql.KindForbiddenFunction,
		Message: what + " " + displayName(l) + " is not on the allow-list of read-only functions"}
}

// displayName shows a function name the parser renamed as it is written.
func displayName(l string) string {
	switch l {
	case "char_func":
		return "char"
	case "insert_func":
		return "insert"
	}
	return l
}

// writeStatements are the parser's statement nodes that change data or
// schema, besides every Create…, Alter…, Drop… node.
var writeStatements = map[string]bool{
	"InsertStmt": true, "DeleteStmt": true, "UpdateStmt": true, "TruncateTableStmt": true,
	"RenameTableStmt": true, "LockTablesStmt": true, "UnlockTablesStmt": true, "LoadDataStmt": true,
	"ImportIntoStmt": true, "GrantStmt": true, "GrantRoleStmt": true, "GrantProxyStmt": true,
	"RevokeStmt": true, "RevokeRoleStmt": true, "RenameUserStmt": true, "RepairTableStmt": true,
	"OptimizeTableStmt": true, "AnalyzeTableStmt": true, "NonTransactionalDMLStmt": true,
	"FlashBackTableStmt": true, "FlashBackDatabaseStmt": true, "RecoverTableStmt": true,
	"SetPwdStmt": true, "CleanupTableLockStmt": true,
}

// statementError refuses a statement node that is not a query; cte names
// the WITH query holding it, if any.
func statementError(n ast.Node, cte string) *text2sql.SQLError {
	name := reflect.TypeOf(n).Elem().Name()
	write := writeStatements[name]
	for _, p := range []string{"Create", "Alter", "Drop"} {
		if strings.HasPrefix(name, p) {
			write = true
		}
	}
	words := statementWords(name)
	if cte != "" {
		if write {
			return &text2sql.SQLError{Kind: text2sql.KindNotReadOnly,
				Message: "data-modifying WITH query " + strconv.Quote(cte) + " (" + words + "); every WITH query must be a SELECT"}
		}
		return &text2sql.SQLError{Kind: text2sql.KindForbiddenStatement,
			Message: words + " is not allowed in WITH query " + strconv.Quote(cte) + "; every WITH query must be a SELECT"}
	}
	if write {
		return &text2sql.SQLError{Kind: text2sql.KindNotReadOnly,
			Message: words + " changes the database; only SELECT, WITH … SELECT, TABLE and VALUES are allowed"}
	}
	return &text2sql.SQLError{Kind: text2sql.KindForbiddenStatement,
		Message: words + " is not allowed; only SELECT, WITH … SELECT, TABLE and VALUES are allowed"}
}

// statementWords names a statement node in SQL words: DeleteStmt →
// "DELETE", LockTablesStmt → "LOCK TABLES".
func statementWords(name string) string {
	name = strings.TrimSuffix(name, "Stmt")
	var b strings.Builder
	for i, r := range name {
		if i > 0 && r >= 'A' && r <= 'Z' {
			b.WriteByte(' ')
		}
		b.WriteRune(r)
	}
	return strings.ToUpper(b.String())
}

// syntaxError words a parse error: by the refusal the text shows where it
// shows one (a statement that is not a query, INTO, a locking clause, an
// assignment), KindDialect for a construct of another dialect, else
// KindSyntax with the parser's message.
func (c *Guard) syntaxError(text string, err error) *text2sql.SQLError {
	msg := err.Error()
	toks := sqltext.Significant(sqltext.LexMySQL(text, c.mode))
	i := 0
	for i < len(toks) && toks[i].Text == "(" {
		i++
	}
	if i < len(toks) {
		first := strings.ToLower(toks[i].Text)
		switch {
		case first == "select", first == "with", first == "values", first == "table":
		case toks[i].Kind == sqltext.Word && writeWords[first]:
			return &text2sql.SQLError{Kind: text2sql.KindNotReadOnly,
				Message: strings.ToUpper(first) + " changes the database; only SELECT, WITH … SELECT, TABLE and VALUES are allowed"}
		case toks[i].Kind == sqltext.Word && !nearQueryKeyword(first):
			return &text2sql.SQLError{Kind: text2sql.KindForbiddenStatement,
				Message: strings.ToUpper(first) + " is not allowed; only SELECT, WITH … SELECT, TABLE and VALUES are allowed"}
		}
	}
	for j, t := range toks {
		next := ""
		if j+1 < len(toks) {
			next = strings.ToLower(toks[j+1].Text)
		}
		prev := ""
		if j > 0 {
			prev = strings.ToLower(toks[j-1].Text)
		}
		switch {
		case t.Kind == sqltext.Word && prev == ".":
		case t.Is("into"):
			return &text2sql.SQLError{Kind: text2sql.KindNotReadOnly,
				Message: "INTO writes the result to a file or variables; only plain queries are allowed (the parser says: " + msg + ")"}
		case t.Is("for") && (next == "update" || next == "share"), t.Is("lock") && next == "in":
			return &text2sql.SQLError{Kind: text2sql.KindNotReadOnly,
				Message: "locking clause takes row locks; only plain queries are allowed (the parser says: " + msg + ")"}
		case t.Text == ":" && next == "=":
			return &text2sql.SQLError{Kind: text2sql.KindNotReadOnly,
				Message: "assignment (:=) changes the session; only plain queries are allowed"}
		case t.Is("top") && (prev == "select" || prev == "distinct"):
			return &text2sql.SQLError{Kind: text2sql.KindDialect,
				Message: "SELECT TOP is SQL Server syntax", Hint: "use ORDER BY … LIMIT n in MySQL/MariaDB"}
		case t.Text == "::":
			return &text2sql.SQLError{Kind: text2sql.KindDialect,
				Message: "x::type is PostgreSQL syntax", Hint: "use CAST(x AS type) in MySQL/MariaDB"}
		case t.Text == "[":
			return &text2sql.SQLError{Kind: text2sql.KindDialect,
				Message: "[name] is SQL Server/SQLite quoting", Hint: "quote identifiers with backquotes in MySQL/MariaDB: `name`"}
		}
	}
	return &text2sql.SQLError{Kind: text2sql.KindSyntax, SQLState: "42000", Message: msg}
}

// writeWords start statements that change data or schema.
var writeWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`insert update delete replace create drop alter truncate rename grant
		revoke lock unlock load optimize repair analyze import flashback recover`) {
		writeWords[w] = true
	}
}

// nearQueryKeyword reports whether w is within two edits of SELECT, WITH,
// VALUES or TABLE: a typo rather than another statement.
func nearQueryKeyword(w string) bool {
	for _, k := range []string{"select", "with", "values", "table"} {
		if sqltext.EditDistance(w, k) <= 2 {
			return true
		}
	}
	return false
}

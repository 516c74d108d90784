package postgres

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	pgparser "github.com/pganalyze/pg_query_go/v6/parser"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/executor/internal/execkit"
	"github.com/text2sql-go/text2sql/guard"
	"github.com/text2sql-go/text2sql/internal/sqltext"
)

// Guard is the statement check of the PostgreSQL executor, on the parse
// tree PostgreSQL's own parser (libpg_query, through pg_query_go) builds.
// It needs no server. A Guard is immutable and safe for concurrent use;
// it implements text2sql.Guard, so a knowledge base can check examples
// offline with it.
//
// A statement passes when:
//
//   - the text holds exactly one statement (else KindEmpty or
//     KindMultipleStatements; nothing of a refused text is run);
//   - it is a query: SELECT, WITH … SELECT, VALUES, TABLE, or a set
//     operation of these. Writes and DDL (INSERT, UPDATE, DELETE, MERGE,
//     CREATE, DROP, ALTER, TRUNCATE, LOCK, GRANT, COMMENT, REFRESH, …)
//     are KindNotReadOnly; every other statement (COPY, DO, SET, RESET,
//     SHOW, CALL, EXPLAIN, transaction control, LISTEN, NOTIFY, PREPARE,
//     EXECUTE, DECLARE, VACUUM, …) is KindForbiddenStatement;
//   - no SELECT anywhere in it has an INTO clause or a locking clause
//     (FOR UPDATE, FOR NO KEY UPDATE, FOR SHARE, FOR KEY SHARE):
//     KindNotReadOnly;
//   - every WITH query (common table expression), at any depth, is a
//     query: a data-modifying one (WITH d AS (DELETE … RETURNING *)) is
//     KindNotReadOnly;
//   - every function call — scalar, aggregate, window, or in FROM
//     (including LATERAL and ROWS FROM), at any depth — names a function
//     on the allow-list: the pg_catalog functions the catalog's rule
//     allows (see Catalog) plus Options.AllowFunctions. A call qualified
//     with pg_catalog is checked by its bare name; one qualified with
//     another schema must be allowed with its schema. A function that
//     does not exist in PostgreSQL but does in another dialect
//     (strftime, ifnull, group_concat, …) is KindDialect with the
//     PostgreSQL equivalent as the hint; any other is
//     KindForbiddenFunction. The allow-list decides, not a block-list:
//     pg_sleep, pg_terminate_backend, lo_import, dblink, nextval,
//     set_config, pg_advisory_lock, pg_read_file and every other function
//     the rule does not allow are refused;
//   - the same holds for calls written in attribute notation, which
//     PostgreSQL reads as f(x) when f is not a column or field of x:
//     t.f and s.t.f (the last name of a qualified column reference) and
//     (expr).f (a field selection). Such a name is refused
//     (KindForbiddenFunction) when it names a function of the catalog,
//     in any schema, that is not on the allow-list; a name no function
//     has can only be a column or field, and the server resolves it (the
//     Executor has the server's catalog confirm that in the statement's
//     own transaction);
//   - an operator written OPERATOR(schema.op) — in an expression, ORDER
//     BY … USING or a subquery comparison — names a pg_catalog operator
//     (KindForbiddenFunction otherwise), and TABLESAMPLE uses the
//     built-in SYSTEM or BERNOULLI method;
//   - no relation of the system catalog is read (KindForbiddenTable; see
//     systemRelation), and no SQL/JSON construct newer than the server
//     is used (KindDialect: an older server reads JSON_SCALAR(x) as a
//     call of whatever function is named json_scalar).
//
// A statement whose bounds by PostgreSQL's scanner pass guard.MaxDepth
// or guard.MaxTokens (see sqltext.Bounds) is KindTooLarge, before it is
// parsed. Text that is not valid UTF-8 is KindSyntax (SQLSTATE 22021, as
// the server would say). Text that does not parse is KindSyntax with SQLSTATE
// 42601 and the parser's message and position; a few constructs of other
// dialects that PostgreSQL cannot parse (SELECT TOP n, backquoted
// identifiers, LIMIT offset, count) are KindDialect with a hint.
//
// A Guard keeps what it concluded of the last 512 statements it accepted
// (texts of at most 4 kB), so a statement run again is not parsed again:
// the decision depends only on the text and the Guard's catalog, and an
// Executor has the server confirm in every statement's transaction that
// the catalog is still the one the Guard was made of (else it reads the
// catalog again, into a new Guard).
type Guard struct {
	cat   *Catalog
	extra map[string]bool
	scope *scope // nil: see Scoped
	// badViews are the views whose definitions the check refuses (or
	// that read such a view), with the refusal: reading a view runs
	// its definition, its functions as the caller.
	badViews map[string]*text2sql.SQLError
	// passed keeps what the check gave the pipeline for the statements
	// it accepted (see prepare); each Guard has its own, so a Guard read
	// anew from a changed catalog starts empty.
	passed *execkit.Passed[checked]
}

// NewGuard returns a Guard whose allow-list is derived from cat (nil:
// BuiltinCatalog) plus extra. Each extra entry is a function name as
// PostgreSQL stores it (lower case unless it was created with a quoted
// name), optionally schema-qualified: "my_func" allows my_func(…) and
// pg_catalog.my_func(…); "util.my_func" allows util.my_func(…).
func NewGuard(cat *Catalog, extra []string) *Guard {
	if cat == nil {
		cat = BuiltinCatalog()
	}
	c := &Guard{cat: cat, extra: make(map[string]bool, len(extra)), passed: execkit.NewPassed[checked]()}
	for _, f := range extra {
		if f = strings.TrimSpace(f); f != "" {
			c.extra[f] = true
		}
	}
	c.badViews = c.checkViews()
	return c
}

// checkViews checks every view's definition as a statement (deparsed
// with every name qualified but pg_catalog's), and refuses too the views
// that read a refused one.
//
// Views may read settings (current_setting), which policies and views
// written for PostgREST and Supabase do to learn the caller
// (request.jwt.claims).
func (c *Guard) checkViews() map[string]*text2sql.SQLError {
	bad := map[string]*text2sql.SQLError{}
	reads := map[string][]string{}
	views := &Guard{cat: c.cat, extra: maps.Clone(c.extra)}
	views.extra["current_setting"] = true
	for name, def := range c.cat.trust.views {
		if se := views.CheckSQL(def); se != nil {
			bad[name] = se
		}
		if tree, err := pg_query.Parse(def); err == nil {
			walk(tree.ProtoReflect(), func(m proto.Message) bool {
				if rv, ok := m.(*pg_query.RangeVar); ok {
					reads[name] = append(reads[name], rv.Schemaname+"."+rv.Relname)
				}
				return true
			})
		}
	}
	for changed := true; changed; {
		changed = false
		for name, rels := range reads {
			for _, r := range rels {
				if se := bad[r]; se != nil && bad[name] == nil {
					bad[name], changed = se, true
				}
			}
		}
	}
	return bad
}

// allowed reports whether a call of the function named by parts (its
// schema-qualified name as written) is on the allow-list.
func (c *Guard) allowed(parts []string) bool {
	switch base := parts[len(parts)-1]; {
	case len(parts) == 1 || len(parts) == 2 && parts[0] == "pg_catalog":
		return c.extra[base] || c.cat.allowed[base]
	case len(parts) == 2 && slices.Contains(c.cat.extSchemas[base], parts[0]):
		return c.cat.allowed[base] || c.extra[strings.Join(parts, ".")]
	default:
		return c.extra[strings.Join(parts, ".")]
	}
}

// attribute records a name in attribute position the check let through:
// an allowed function's (x.f may call f(x)) or a presumed column's.
func (c *Guard) attribute(name string, res *resolution) *text2sql.SQLError {
	if !c.allowed([]string{name}) {
		res.column(name)
		return nil
	}
	res.call(name)
	return c.namesake(name)
}

// namesake refuses an allowed function called without a schema that may
// resolve to an untrusted function of the same name on the search path
// (which the server prefers when its arguments fit better).
func (c *Guard) namesake(name string) *text2sql.SQLError {
	if c.extra[name] {
		return nil
	}
	if sch := c.untrusted(c.cat.trust.funcs[name]); sch != "" {
		return &text2sql.SQLError{Kind: text2sql.KindForbiddenFunction,
			Message: "function " + name + " may resolve to " + sch + "." + name + ", a function of this database outside pg_catalog and the trusted extensions",
			Hint:    "qualify the built-in function with pg_catalog: pg_catalog." + name + "(…)"}
	}
	return nil
}

// operatorCheck refuses an operator written OPERATOR(schema.op) outside
// pg_catalog, and a symbol the server may resolve to an untrusted
// operator (see Guard), and records the symbol for the probe.
func (c *Guard) operatorCheck(op []string, res *resolution) *text2sql.SQLError {
	switch {
	case len(op) == 2 && slices.Contains(c.cat.trust.extOps[op[1]], op[0]) &&
		!slices.Contains(c.cat.trust.ops[op[1]], op[0]) && !slices.Contains(c.cat.trust.typedSyms[op[1]], op[0]):
		// A trusted extension's operator, and the schema has no other of
		// that symbol (a view's definition names citext's = as
		// OPERATOR(public.=)).
	case len(op) > 1 && !(len(op) == 2 && op[0] == "pg_catalog"):
		return operatorError(op)
	case len(op) == 1:
		res.operators = append(res.operators, op[0])
		if sch := c.untrusted(c.cat.trust.ops[op[0]]); sch != "" {
			return &text2sql.SQLError{Kind: text2sql.KindForbiddenFunction,
				Message: "operator " + op[0] + " may resolve to " + sch + "." + op[0] + ", an operator of this database outside pg_catalog and the trusted extensions; it runs code the statement check cannot see",
				Hint:    "use a built-in function instead of the operator"}
		}
	}
	return nil
}

// untrusted returns the first of schemas (those that hold an untrusted
// object of some name) on the search path, or "".
func (c *Guard) untrusted(schemas []string) string {
	for _, s := range schemas {
		if c.onPath(s) {
			return s
		}
	}
	return ""
}

// typeCheck refuses a type name that may resolve to a tainted type (see
// Guard), and records the name for the probe.
func (c *Guard) typeCheck(parts []string, res *resolution) *text2sql.SQLError {
	if len(parts) == 0 {
		return nil
	}
	ref := typeRef{name: parts[len(parts)-1]}
	if len(parts) > 1 {
		ref.schema = parts[len(parts)-2]
	}
	for _, t := range c.cat.trust.types[ref.name] {
		if ref.schema != "" && t.schema != ref.schema || ref.schema == "" && !c.onPath(t.schema) {
			continue
		}
		if t.tainted {
			return &text2sql.SQLError{Kind: text2sql.KindForbiddenFunction,
				Message: "type " + strings.Join(parts, ".") + " may resolve to " + t.schema + "." + ref.name + ", to which this database attaches its own code (a domain CHECK, a cast, an operator class or I/O function) that the statement check cannot see",
				Hint:    "use a built-in type"}
		}
		ref.seen = append(ref.seen, strconv.FormatInt(t.oid, 10)+"/"+t.state)
	}
	res.types = append(res.types, ref)
	return nil
}

// globalTaint refuses every statement when untrusted code is attached to
// a trusted type (see Guard).
func (c *Guard) globalTaint() *text2sql.SQLError {
	if len(c.cat.trust.global) == 0 {
		return nil
	}
	return &text2sql.SQLError{Kind: text2sql.KindForbiddenFunction,
		Message: "this database attaches its own code (a cast, an operator class or family member, an I/O function) to the built-in or extension types " +
			strings.Join(c.cat.trust.global, ", ") + ", which the server may run on any value of them; no statement is run"}
}

// operatorError refuses an operator written OPERATOR(schema.op) outside
// pg_catalog, wherever it is used (an expression, ORDER BY … USING, a
// subquery comparison).
func operatorError(op []string) *text2sql.SQLError {
	return &text2sql.SQLError{Kind: text2sql.KindForbiddenFunction,
		Message: "operator OPERATOR(" + strings.Join(op, ".") + ") is not a built-in operator; only pg_catalog operators are allowed"}
}

// attributeCall reports whether name, read in attribute notation (x.name
// or (expr).name), could call a function that is not on the allow-list.
func (c *Guard) attributeCall(name string) bool {
	return c.cat.known[name] && !c.allowed([]string{name})
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
	if _, ok := c.passed.Get(query); ok {
		return nil
	}
	return c.check(query, nil)
}

// checked is what the check of an accepted statement gives the pipeline:
// the text to send (resolution.text), the probe of the names it left to
// the server (nil without one) and the probe's parameters.
type checked struct {
	text      string
	probe     *probe
	probeStmt stmt
	bind      [][]byte
}

// prepare checks query and returns what the pipeline needs to run it,
// or the refusal. A statement accepted before by this Guard is not
// checked again: the check reads the text and the Guard's catalog alone,
// and what the catalog may have changed since it was read, the probe
// confirms on every run, in the statement's own transaction (an
// Executor then reads the catalog again, into a new Guard).
func (c *Guard) prepare(query string) (checked, *text2sql.SQLError) {
	if ch, ok := c.passed.Get(query); ok {
		return ch, nil
	}
	var res resolution
	if se := c.check(query, &res); se != nil {
		return checked{}, se
	}
	ch := checked{text: res.text(query), probe: c.probe(res)}
	if ch.probe != nil {
		ch.probeStmt, ch.bind = ch.probe.statement()
	}
	c.passed.Put(query, ch)
	return ch, nil
}

// scanBounds measures query with PostgreSQL's own scanner (libpg_query's,
// which does not recurse) as sqltext.Bounds does, and refuses it when its
// bounds pass guard.MaxDepth or guard.MaxTokens, before the parser
// builds a tree it could crash writing out. It returns the end of the
// statement's last token that is not a comment or a semicolon (len(query)
// when the text does not scan: the parser then reports the error).
func scanBounds(query string) (int, *text2sql.SQLError) {
	scan, err := pg_query.Scan(query)
	if err != nil {
		return len(query), nil
	}
	depth, tokens, end, prevString := 0, 0, 0, false
	for _, t := range scan.Tokens {
		switch t.Token {
		case pg_query.Token_SQL_COMMENT, pg_query.Token_C_COMMENT:
			continue
		case pg_query.Token_ASCII_59:
		default:
			end = int(t.End)
		}
		tokens++
		isString := t.Token == pg_query.Token_SCONST || t.Token == pg_query.Token_USCONST
		switch t.Token {
		case pg_query.Token_ICONST, pg_query.Token_FCONST, pg_query.Token_BCONST, pg_query.Token_XCONST,
			pg_query.Token_SCONST, pg_query.Token_USCONST, pg_query.Token_ASCII_44:
			if isString && prevString {
				depth++
			}
		default:
			depth++
		}
		prevString = isString
	}
	return end, guard.BoundsError(depth, tokens)
}

// resolution holds what the check learned of an accepted statement: the
// names it leaves for the server to resolve, which the executor has the
// server's catalog confirm in the statement's own transaction (see
// probe.go; the catalog read at Open may be older than the statement),
// and the relations it qualifies (see Scoped).
type resolution struct {
	// columns are names in attribute position (x.f, (expr).f) taken for
	// columns or fields because no function of the catalog has them and
	// the allow-list does not allow them.
	columns []string
	// calls are the names of allowed functions called without a schema
	// (f(x), and x.f read as f(x)), which must not resolve to an
	// untrusted function on the search path.
	calls []string
	// operators are the operator symbols the statement applies, written
	// (a < b) or implied (x IN (subquery) applies =).
	operators []string
	// types are the type names it writes.
	types []typeRef
	// relations are the relations it reads (scoped Guards only).
	relations []relationRef
	// fields are the names column references and USING lists hold;
	// wholeRow says a * or a NATURAL join reads every column.
	fields   map[string]bool
	wholeRow bool
	// end is where the statement's last token ends, by PostgreSQL's
	// scanner: what follows (comments, semicolons) is not sent.
	end int
}

// typeRef is a type name a statement writes (schema "" when unqualified)
// and the types it may resolve to, as "oid/state" (see relationState).
type typeRef struct {
	schema, name string
	seen         []string
}

func (r *resolution) column(name string) { r.columns = append(r.columns, name) }

func (r *resolution) call(name string) { r.calls = append(r.calls, name) }

func (r *resolution) field(name string) {
	if r.fields == nil {
		r.fields = map[string]bool{}
	}
	r.fields[name] = true
}

// check is CheckSQL; when res is not nil it also collects the names
// the server must resolve as the check assumed.
func (c *Guard) check(query string, res *resolution) *text2sql.SQLError {
	if res == nil {
		res = &resolution{}
	}
	if !utf8.ValidString(query) {
		return &text2sql.SQLError{Kind: text2sql.KindSyntax, SQLState: "22021",
			Message: "the statement is not valid UTF-8"}
	}
	// libpg_query reads a C string: what follows a NUL would pass
	// unread. PostgreSQL refuses NUL in a statement too (22021).
	if strings.IndexByte(query, 0) >= 0 {
		return &text2sql.SQLError{Kind: text2sql.KindSyntax, SQLState: "22021",
			Message: "the statement holds a NUL byte"}
	}
	end, se := scanBounds(query)
	if se != nil {
		return se
	}
	res.end = end
	buf, err := pgparser.ParseToProtobuf(query)
	if err != nil {
		return syntaxError(query, err)
	}
	return c.treeCheck(buf, res)
}

// treeCheck decodes the parse tree, checks it and words the refusal.
func (c *Guard) treeCheck(buf []byte, res *resolution) *text2sql.SQLError {
	tree := &pg_query.ParseResult{}
	if err := proto.Unmarshal(buf, tree); err != nil {
		return &text2sql.SQLError{Kind: text2sql.KindSyntax, Message: "cannot read the parse tree: " + err.Error()}
	}
	switch n := len(tree.Stmts); {
	case n == 0:
		return &text2sql.SQLError{Kind: text2sql.KindEmpty, Message: "no SQL statement"}
	case n > 1:
		return &text2sql.SQLError{Kind: text2sql.KindMultipleStatements,
			Message: strconv.Itoa(n) + " statements; exactly one query is allowed and none of them was run"}
	}
	stmt := tree.Stmts[0].GetStmt()
	if stmt == nil {
		return &text2sql.SQLError{Kind: text2sql.KindEmpty, Message: "no SQL statement"}
	}
	top := nodeMessage(stmt)
	if _, ok := top.(*pg_query.SelectStmt); !ok {
		return statementError(top, "")
	}
	if se := c.globalTaint(); se != nil {
		return se
	}
	var found *text2sql.SQLError
	walk(top.ProtoReflect(), func(m proto.Message) bool {
		found = c.checkNode(m, res)
		return found == nil
	})
	if found != nil {
		return found
	}
	if found = c.relations(top.ProtoReflect(), res); found != nil {
		return found
	}
	if found = c.taintedColumns(res); found != nil {
		return found
	}
	return amplification(top.ProtoReflect())
}

// nodeMessage returns the message a Node wraps.
func nodeMessage(n *pg_query.Node) proto.Message {
	m := n.ProtoReflect()
	od := m.Descriptor().Oneofs().ByName("node")
	if od == nil {
		return n
	}
	fd := m.WhichOneof(od)
	if fd == nil {
		return n
	}
	return m.Get(fd).Message().Interface()
}

// walk calls f on m and every message below it, depth first and in
// the fields' declaration order (Message.Range's order is undefined, and a statement
// with two faults must be refused for the same one every time), until f
// returns false. It reports whether the walk ran to the end.
func walk(m protoreflect.Message, f func(proto.Message) bool) bool {
	if !f(m.Interface()) {
		return false
	}
	ok := true
	children(m, func(c protoreflect.Message) {
		ok = ok && walk(c, f)
	})
	return ok
}

// checkNode checks one node of a query's tree: by its type's check in
// nodeChecks, else as otherNode.
func (c *Guard) checkNode(m proto.Message, res *resolution) *text2sql.SQLError {
	if check, ok := nodeChecks[reflect.TypeOf(m)]; ok {
		return check(c, m, res)
	}
	return c.otherNode(m)
}

// nodeCheck checks one node of a query's tree and records in res what
// the probe must confirm of it.
type nodeCheck func(c *Guard, m proto.Message, res *resolution) *text2sql.SQLError

// on makes the nodeCheck of node type T of f.
func on[T proto.Message](f func(*Guard, T, *resolution) *text2sql.SQLError) nodeCheck {
	return func(c *Guard, m proto.Message, res *resolution) *text2sql.SQLError { return f(c, m.(T), res) }
}

// nodeChecks are the checks of the node types that need one (see Guard).
var nodeChecks = map[reflect.Type]nodeCheck{
	reflect.TypeFor[*pg_query.SelectStmt]():       on(checkSelect),
	reflect.TypeFor[*pg_query.CommonTableExpr]():  on(checkWithQuery),
	reflect.TypeFor[*pg_query.FuncCall]():         on(checkCall),
	reflect.TypeFor[*pg_query.ColumnRef]():        on(checkColumnRef),
	reflect.TypeFor[*pg_query.A_Indirection]():    on(checkIndirection),
	reflect.TypeFor[*pg_query.SortBy]():           on(checkSortBy),
	reflect.TypeFor[*pg_query.SubLink]():          on(checkSubLink),
	reflect.TypeFor[*pg_query.CaseExpr]():         on(checkCase),
	reflect.TypeFor[*pg_query.JoinExpr]():         on(checkJoin),
	reflect.TypeFor[*pg_query.RangeTableSample](): on(checkTableSample),
	reflect.TypeFor[*pg_query.A_Expr]():           on(checkExpr),
	reflect.TypeFor[*pg_query.TypeName]():         on(checkTypeName),
	reflect.TypeFor[*pg_query.RangeVar]():         on(checkRangeVar),
	// The statement's wrapper, which otherNode would take for a
	// statement below the top.
	reflect.TypeFor[*pg_query.RawStmt](): func(*Guard, proto.Message, *resolution) *text2sql.SQLError { return nil },
}

// checkSelect refuses SELECT … INTO and locking clauses.
func checkSelect(_ *Guard, n *pg_query.SelectStmt, _ *resolution) *text2sql.SQLError {
	if n.IntoClause != nil {
		return &text2sql.SQLError{Kind: text2sql.KindNotReadOnly,
			Message: "SELECT … INTO creates a table; only plain queries are allowed"}
	}
	if len(n.LockingClause) > 0 {
		return &text2sql.SQLError{Kind: text2sql.KindNotReadOnly,
			Message: "locking clause (" + lockingName(n.LockingClause[0]) + ") takes row locks; only plain queries are allowed"}
	}
	return nil
}

// checkWithQuery refuses a WITH query that is not a SELECT.
func checkWithQuery(_ *Guard, n *pg_query.CommonTableExpr, _ *resolution) *text2sql.SQLError {
	if q := n.GetCtequery(); q != nil {
		if inner := nodeMessage(q); !isSelect(inner) {
			return statementError(inner, n.Ctename)
		}
	}
	return nil
}

// checkCall checks a function call against the allow-list and records
// a call without a schema.
func checkCall(c *Guard, n *pg_query.FuncCall, res *resolution) *text2sql.SQLError {
	if parts := names(n.Funcname); len(parts) == 1 {
		res.call(parts[0])
	}
	return c.checkFunc(n)
}

// checkColumnRef records a column reference's names and checks its last
// name, in attribute position (t.f may call f(t)).
func checkColumnRef(c *Guard, n *pg_query.ColumnRef, res *resolution) *text2sql.SQLError {
	for _, f := range n.Fields {
		if s := f.GetString_(); s != nil {
			res.field(s.Sval)
		} else if f.GetAStar() != nil {
			res.wholeRow = true
		}
	}
	if len(n.Fields) < 2 {
		return nil
	}
	last := n.Fields[len(n.Fields)-1].GetString_()
	if last == nil {
		return nil
	}
	if c.attributeCall(last.Sval) {
		return c.attributeError(strings.Join(names(n.Fields[:len(n.Fields)-1]), "."), last.Sval)
	}
	return c.attribute(last.Sval, res)
}

// checkIndirection checks the field names of (expr).f, which may call
// f(expr).
func checkIndirection(c *Guard, n *pg_query.A_Indirection, res *resolution) *text2sql.SQLError {
	for _, ind := range n.Indirection {
		f := ind.GetString_()
		if f == nil {
			continue
		}
		if c.attributeCall(f.Sval) {
			return c.attributeError("(expr)", f.Sval)
		}
		if se := c.attribute(f.Sval, res); se != nil {
			return se
		}
	}
	return nil
}

// checkSortBy checks the operator of ORDER BY … USING.
func checkSortBy(c *Guard, n *pg_query.SortBy, res *resolution) *text2sql.SQLError {
	return c.operatorCheck(names(n.UseOp), res)
}

// checkSubLink checks the operator of a subquery comparison.
func checkSubLink(c *Guard, n *pg_query.SubLink, res *resolution) *text2sql.SQLError {
	op := names(n.OperName)
	if len(op) == 0 && n.SubLinkType == pg_query.SubLinkType_ANY_SUBLINK {
		op = []string{"="} // x IN (subquery)
	}
	return c.operatorCheck(op, res)
}

// checkCase checks the = that CASE x WHEN v applies (x = v).
func checkCase(c *Guard, n *pg_query.CaseExpr, res *resolution) *text2sql.SQLError {
	if n.Arg == nil {
		return nil
	}
	return c.operatorCheck([]string{"="}, res)
}

// checkJoin records the columns of USING and NATURAL and checks the =
// they apply.
func checkJoin(c *Guard, n *pg_query.JoinExpr, res *resolution) *text2sql.SQLError {
	res.wholeRow = res.wholeRow || n.IsNatural
	for _, u := range names(n.UsingClause) {
		res.field(u)
	}
	if !n.IsNatural && len(n.UsingClause) == 0 {
		return nil
	}
	return c.operatorCheck([]string{"="}, res)
}

// checkTableSample allows the built-in TABLESAMPLE methods only.
func checkTableSample(_ *Guard, n *pg_query.RangeTableSample, _ *resolution) *text2sql.SQLError {
	switch name := strings.Join(names(n.Method), "."); name {
	case "system", "bernoulli", "pg_catalog.system", "pg_catalog.bernoulli":
		return nil
	default:
		return &text2sql.SQLError{Kind: text2sql.KindForbiddenFunction,
			Message: "TABLESAMPLE method " + name + " is not allowed; use SYSTEM or BERNOULLI"}
	}
}

// checkExpr checks the operators an expression applies.
func checkExpr(c *Guard, n *pg_query.A_Expr, res *resolution) *text2sql.SQLError {
	for _, op := range exprOperators(n) {
		if se := c.operatorCheck(op, res); se != nil {
			return se
		}
	}
	return nil
}

// checkTypeName checks a type name (see typeCheck).
func checkTypeName(c *Guard, n *pg_query.TypeName, res *resolution) *text2sql.SQLError {
	return c.typeCheck(names(n.Names), res)
}

// checkRangeVar refuses a relation of the system catalog.
func checkRangeVar(_ *Guard, n *pg_query.RangeVar, _ *resolution) *text2sql.SQLError {
	if !systemRelation(n) {
		return nil
	}
	return &text2sql.SQLError{Kind: text2sql.KindForbiddenTable,
		Message: "relation " + relationName(n) + " is part of the system catalog; only the database's own tables and views may be read",
		Hint:    "query the application's tables"}
}

// otherNode checks a node no check of nodeChecks takes: SQL/JSON newer
// than the server, and any statement below the top (none but WITH
// queries can hold one, but the check does not rely on the grammar).
func (c *Guard) otherNode(m proto.Message) *text2sql.SQLError {
	name := string(m.ProtoReflect().Descriptor().Name())
	if v, old := c.cat.tooNew(name); old {
		return &text2sql.SQLError{Kind: text2sql.KindDialect,
			Message: fmt.Sprintf("%s syntax needs PostgreSQL %d; this server is PostgreSQL %d", sqlJSONName(name), v, c.cat.major)}
	}
	if strings.HasSuffix(name, "Stmt") {
		return statementError(m, "")
	}
	return nil
}

// exprOperators returns the operators an expression applies: its own,
// or for BETWEEN and its variants (whose name is the keyword) the
// comparisons it stands for.
func exprOperators(n *pg_query.A_Expr) [][]string {
	switch n.Kind {
	case pg_query.A_Expr_Kind_AEXPR_BETWEEN, pg_query.A_Expr_Kind_AEXPR_NOT_BETWEEN,
		pg_query.A_Expr_Kind_AEXPR_BETWEEN_SYM, pg_query.A_Expr_Kind_AEXPR_NOT_BETWEEN_SYM:
		return [][]string{{"<"}, {">"}, {"<="}, {">="}}
	}
	return [][]string{names(n.Name)}
}

// systemRelation reports whether a relation reference reads the system
// catalog: a relation of pg_catalog, pg_toast or information_schema (whose
// views read the same catalog rows: user_mapping_options shows foreign
// servers' passwords), or an unqualified name starting with pg_ (every
// pg_catalog relation's name does, and pg_catalog comes first on every
// search path unless it is listed). The catalog's views show other
// sessions' queries, settings, configuration files and password hashes to
// a login allowed to read them.
func systemRelation(rv *pg_query.RangeVar) bool {
	switch rv.Schemaname {
	case "pg_catalog", "pg_toast", "information_schema":
		return true
	case "":
		return strings.HasPrefix(rv.Relname, "pg_")
	}
	return false
}

// relationName renders a relation reference as written, qualified.
func relationName(rv *pg_query.RangeVar) string {
	if rv.Schemaname != "" {
		return rv.Schemaname + "." + rv.Relname
	}
	return rv.Relname
}

// sqlJSONName names the SQL/JSON construct a parse node stands for.
func sqlJSONName(node string) string {
	switch node {
	case "JsonFuncExpr":
		return "JSON_EXISTS/JSON_QUERY/JSON_VALUE"
	case "MergeSupportFunc":
		return "MERGE_ACTION"
	case "JsonIsPredicate":
		return "IS JSON"
	}
	return "SQL/JSON (" + node + ")"
}

func isSelect(m proto.Message) bool {
	_, ok := m.(*pg_query.SelectStmt)
	return ok
}

// checkFunc checks a function call against the allow-list.
func (c *Guard) checkFunc(f *pg_query.FuncCall) *text2sql.SQLError {
	parts := names(f.Funcname)
	if len(parts) == 1 && c.allowed(parts) {
		return c.namesake(parts[0])
	}
	if len(parts) == 0 || c.allowed(parts) {
		return nil
	}
	base := parts[len(parts)-1]
	if len(parts) == 1 {
		if alt, ok := otherDialect[base]; ok {
			return &text2sql.SQLError{Kind: text2sql.KindDialect,
				Message: "function " + base + " is not a PostgreSQL function (it belongs to another SQL dialect)",
				Hint:    "in PostgreSQL use " + alt}
		}
	}
	return &text2sql.SQLError{Kind: text2sql.KindForbiddenFunction, Message: c.notAllowed(parts)}
}

// notAllowed words why the function named by parts is refused.
func (c *Guard) notAllowed(parts []string) string {
	full := strings.Join(parts, ".")
	base := parts[len(parts)-1]
	switch {
	case len(parts) > 2 || len(parts) == 2 && parts[0] != "pg_catalog" && !slices.Contains(c.cat.extSchemas[base], parts[0]):
		return "function " + full + " is not a built-in function; only pg_catalog functions, trusted extensions' and those the host allows (Options.AllowFunctions) may be called"
	case c.cat.why[base] != "":
		return "function " + full + " is not allowed: " + c.cat.why[base]
	}
	return "function " + full + " is not on the allow-list of read-only functions"
}

// attributeError refuses x.name or (expr).name read as the call name(x).
func (c *Guard) attributeError(x, name string) *text2sql.SQLError {
	return &text2sql.SQLError{Kind: text2sql.KindForbiddenFunction,
		Message: x + "." + name + " is attribute notation for the call " + name + "(" + x + "), and " + c.notAllowed([]string{name}),
		Hint:    "if " + name + " is meant as a column, check the table it belongs to"}
}

// names returns the strings of a name list (String nodes).
func names(list []*pg_query.Node) []string {
	out := make([]string, 0, len(list))
	for _, n := range list {
		if s := n.GetString_(); s != nil {
			out = append(out, s.Sval)
		} else if n.GetAStar() != nil {
			out = append(out, "*")
		}
	}
	return out
}

func lockingName(n *pg_query.Node) string {
	lc := n.GetLockingClause()
	if lc == nil {
		return "FOR UPDATE"
	}
	switch lc.Strength {
	case pg_query.LockClauseStrength_LCS_FORKEYSHARE:
		return "FOR KEY SHARE"
	case pg_query.LockClauseStrength_LCS_FORSHARE:
		return "FOR SHARE"
	case pg_query.LockClauseStrength_LCS_FORNOKEYUPDATE:
		return "FOR NO KEY UPDATE"
	}
	return "FOR UPDATE"
}

// writeStatements are the statement nodes that change data or schema,
// besides every Create…, Alter…, Drop… and Grant… node.
var writeStatements = map[string]bool{
	"InsertStmt": true, "UpdateStmt": true, "DeleteStmt": true, "MergeStmt": true, "TruncateStmt": true,
	"LockStmt": true, "RefreshMatViewStmt": true, "RenameStmt": true, "CommentStmt": true, "SecLabelStmt": true,
	"ReindexStmt": true, "ClusterStmt": true, "DefineStmt": true, "IndexStmt": true, "ViewStmt": true,
	"RuleStmt": true, "CompositeTypeStmt": true, "ImportForeignSchemaStmt": true, "ReassignOwnedStmt": true,
}

// statementError refuses a statement node that is not a query. cte names
// the WITH query holding it, if any.
func statementError(m proto.Message, cte string) *text2sql.SQLError {
	name := string(m.ProtoReflect().Descriptor().Name())
	words := statementWords(m, name)
	write := writeStatements[name]
	for _, p := range []string{"Create", "Alter", "Drop", "Grant"} {
		if strings.HasPrefix(name, p) {
			write = true
		}
	}
	if v, ok := m.(*pg_query.VacuumStmt); ok && !v.IsVacuumcmd {
		write = true // ANALYZE
	}
	if cte != "" {
		kind := text2sql.KindForbiddenStatement
		what := words + " is not allowed in WITH query " + strconv.Quote(cte)
		if write {
			kind = text2sql.KindNotReadOnly
			what = "data-modifying WITH query " + strconv.Quote(cte) + " (" + words + ")"
		}
		return &text2sql.SQLError{Kind: kind, Message: what + "; every WITH query must be a SELECT"}
	}
	if write {
		return &text2sql.SQLError{Kind: text2sql.KindNotReadOnly,
			Message: words + " changes the database; only SELECT, WITH … SELECT and VALUES are allowed"}
	}
	return &text2sql.SQLError{Kind: text2sql.KindForbiddenStatement,
		Message: words + " is not allowed; only SELECT, WITH … SELECT and VALUES are allowed"}
}

// statementWords names a statement node in SQL words: DeleteStmt →
// "DELETE", CreateTableAsStmt → "CREATE TABLE AS".
func statementWords(m proto.Message, name string) string {
	switch n := m.(type) {
	case *pg_query.VariableSetStmt:
		if n.Kind == pg_query.VariableSetKind_VAR_RESET || n.Kind == pg_query.VariableSetKind_VAR_RESET_ALL {
			return "RESET"
		}
		return "SET"
	case *pg_query.VariableShowStmt:
		return "SHOW"
	case *pg_query.TransactionStmt:
		return "transaction control (" + strings.TrimPrefix(n.Kind.String(), "TRANS_STMT_") + ")"
	case *pg_query.VacuumStmt:
		if !n.IsVacuumcmd {
			return "ANALYZE"
		}
		return "VACUUM"
	case *pg_query.CopyStmt:
		return "COPY"
	case *pg_query.DoStmt:
		return "DO"
	case *pg_query.ExplainStmt:
		return "EXPLAIN"
	case *pg_query.ExecuteStmt:
		return "EXECUTE"
	case *pg_query.DeclareCursorStmt:
		return "DECLARE CURSOR"
	}
	name = strings.TrimSuffix(name, "Stmt")
	var b strings.Builder
	for i, r := range name {
		if i > 0 && unicode.IsUpper(r) {
			b.WriteByte(' ')
		}
		b.WriteRune(unicode.ToUpper(r))
	}
	return b.String()
}

// syntaxError turns a parse error into a KindSyntax error, or KindDialect
// for a construct of another dialect.
func syntaxError(query string, err error) *text2sql.SQLError {
	msg := err.Error()
	var perr *pgparser.Error
	if errors.As(err, &perr) {
		msg = perr.Message
		if perr.Cursorpos > 0 {
			msg += fmt.Sprintf(" (at character %d)", perr.Cursorpos)
		}
	}
	if se := dialectConstruct(query); se != nil {
		se.Message += "; PostgreSQL says: " + msg
		return se
	}
	return &text2sql.SQLError{Kind: text2sql.KindSyntax, Message: msg, SQLState: "42601"}
}

// dialectConstruct looks for syntax of another dialect in a text that
// PostgreSQL could not parse.
func dialectConstruct(query string) *text2sql.SQLError {
	toks := sqltext.Significant(sqltext.Lex(query))
	for i, t := range toks {
		switch {
		case t.Kind == sqltext.QuotedIdent && strings.HasPrefix(t.Text, "`"):
			return &text2sql.SQLError{Kind: text2sql.KindDialect,
				Message: "backquoted identifier " + t.Text + " is MySQL syntax",
				Hint:    `quote identifiers with double quotes in PostgreSQL: "name"`}
		case t.Is("top") && i > 0 && (toks[i-1].Is("select") || toks[i-1].Is("distinct")):
			return &text2sql.SQLError{Kind: text2sql.KindDialect,
				Message: "SELECT TOP is SQL Server syntax",
				Hint:    "use ORDER BY … LIMIT n in PostgreSQL"}
		case t.Is("limit") && i+3 < len(toks) && toks[i+1].Kind == sqltext.Number && toks[i+2].Text == "," && toks[i+3].Kind == sqltext.Number:
			return &text2sql.SQLError{Kind: text2sql.KindDialect,
				Message: "LIMIT offset, count is MySQL/SQLite syntax",
				Hint:    "use LIMIT " + toks[i+3].Text + " OFFSET " + toks[i+1].Text + " in PostgreSQL"}
		}
	}
	return nil
}

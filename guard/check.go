package guard

import (
	"strconv"
	"strings"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/sqlparse"
	"github.com/text2sql-go/text2sql/internal/sqltext"
)

// writeWords start statements that change data or schema. As the first
// keyword of a statement (or of a CTE body) they make it not read-only.
var writeWords = set(`insert update delete replace merge upsert create drop alter truncate rename
	grant revoke comment reindex analyze analyse lock unlock optimize repair load handler refresh`)

// forbiddenWords start statements that are not queries and not plain writes:
// attaching files, changing settings, transaction control, maintenance,
// procedural code. They are refused as forbidden statements.
var forbiddenWords = set(`attach detach pragma vacuum copy set reset begin start commit end rollback
	savepoint release abort explain describe desc show use call exec execute do listen notify unlisten
	prepare deallocate declare fetch move close discard checkpoint cluster security import export flush
	kill shutdown install uninstall backup restore`)

// deepWriteWords are keywords that only occur in data-modifying SQL, found
// at any nesting depth: INSERT INTO, DELETE FROM, UPDATE … SET, SELECT … INTO,
// RETURNING, DDL. A word followed by "(" (a function call such as MySQL's
// INSERT()) or preceded by "." (a qualified column) is not a keyword.
var deepWriteWords = set(`insert update delete merge upsert truncate drop create alter into returning`)

func set(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// CheckText is the lexical statement check every guarded executor runs
// first. It accepts exactly one query — SELECT, WITH … SELECT, VALUES, or
// one of these in parentheses — and returns nil, or a *text2sql.SQLError
// whose Kind is one of:
//
//   - KindEmpty: no statement (only white space, comments and semicolons).
//   - KindMultipleStatements: more than one statement. Semicolons inside
//     literals, quoted identifiers and comments do not count, nor does a
//     trailing semicolon or comment. The text is split under every lexical
//     convention in sqltext.Conventions (standard, SQLite, MySQL) and must
//     hold one statement under each, so a comment or escape that one
//     engine reads differently cannot smuggle a second statement in.
//   - KindNotReadOnly: a write or DDL (INSERT, UPDATE, DELETE, REPLACE,
//     CREATE, DROP, ALTER, …), SELECT … INTO, a data-modifying CTE, a
//     RETURNING clause or a locking clause (FOR UPDATE, FOR SHARE,
//     LOCK IN SHARE MODE).
//   - KindForbiddenStatement: any other statement: ATTACH, DETACH, PRAGMA,
//     VACUUM, COPY, SET, transaction control, EXPLAIN, CALL, or a keyword
//     this check does not know.
//   - KindDialect: a nested block comment, which engines read differently.
//   - KindSyntax: text that does not start with a keyword, or starts with
//     a misspelt SELECT, WITH or VALUES ("SELEC").
//
// The check is lexical, not a parse: it is the first of several layers.
// Engine-level guards (an authorizer, a read-only transaction) back it.
// Functions are not checked here; executors check them against an
// allow-list where the engine allows it.
func CheckText(sql string) *text2sql.SQLError {
	if se := CheckShape(sql); se != nil {
		return se
	}
	// Every word, not the tree's reading: for an engine whose parse is
	// not at hand, a column named update is refused rather than guessed.
	return deepScan(sqltext.Significant(sqltext.Lex(sqltext.Statements(sql)[0])))
}

// CheckShape is the part of CheckText that an engine's own parser cannot
// replace: the statement count under every lexical convention, nested
// comments, the first keyword of the statement, of every CTE body and of
// the statement after a WITH clause. It returns nil or the refusal.
//
// An executor whose engine decides read-only-ness on its own parse (the
// SQLite executor: its authorizer and sqlite3_stmt_readonly) runs
// CheckShape before the engine and DeepScan only to word the refusal of a
// statement the engine could not prepare, so identifiers such as lock,
// merge or truncate are read as the engine reads them.
func CheckShape(sql string) *text2sql.SQLError {
	_, se := Shape(sql)
	return se
}

// Shape is CheckShape on one lexing pass of sql (sqltext.LexText). When
// the statement passes it also returns the text to send the engine: sql
// without the white space, comments and semicolons after its last token
// (sqltext.StripTrailing).
func Shape(sql string) (string, *text2sql.SQLError) {
	l := sqltext.LexText(sql)
	n := l.Count()
	most := n // the Standard convention's count
	if strings.IndexByte(sql, ';') >= 0 {
		// Without a semicolon no convention sees a second statement.
		for _, c := range sqltext.Conventions {
			if c == sqltext.Standard {
				continue
			}
			most = max(most, sqltext.CountStatements(sql, c))
		}
	}
	switch {
	case n == 0:
		return "", &text2sql.SQLError{Kind: text2sql.KindEmpty, Message: "no SQL statement"}
	case most > 1:
		return "", &text2sql.SQLError{Kind: text2sql.KindMultipleStatements,
			Message: strconv.Itoa(most) + " statements; exactly one query is allowed and none of them was run"}
	}
	toks := l.First()
	first := -1 // the first significant token
	for i, t := range toks {
		if t.Kind == sqltext.BlockComment && strings.Contains(t.Text[2:], "/*") {
			return "", &text2sql.SQLError{Kind: text2sql.KindDialect,
				Message: "nested block comment: engines disagree on where it ends"}
		}
		if first < 0 && !t.Trivia() {
			first = i
		}
	}
	// checkQuery accepts a statement that opens with SELECT or VALUES at
	// that token; only the others need their significant tokens collected.
	if first < 0 || !toks[first].Is("select") && !toks[first].Is("values") {
		if se := checkQuery(sqltext.Significant(toks)); se != nil {
			return "", se
		}
	}
	return l.StripTrailing(), nil
}

// DeepScan names, for a statement the engine could not parse (SQLite's
// syntax error on another engine's construct), the part of the first
// statement of sql that would write or lock if another engine ran it: a
// locking clause (FOR UPDATE/SHARE, LOCK IN SHARE MODE), SELECT … INTO, a
// data-modifying statement, and in the tokens the syntax tree
// (internal/sqlparse) could not place, a keyword of data-modifying SQL
// (INSERT, DELETE, … RETURNING, INTO). It returns nil or the refusal
// (KindNotReadOnly). It reads the tree, so a column named lock or
// update is no clause; it is no security decision (the engine made it).
func DeepScan(sql string) *text2sql.SQLError {
	tree := sqlparse.Parse(sql, text2sql.DialectSQLite)
	if len(tree.Stmts) == 0 {
		return nil
	}
	var found *text2sql.SQLError
	sqlparse.Inspect(tree.Stmts[0], func(n sqlparse.Node) bool {
		if found != nil {
			return false
		}
		switch v := n.(type) {
		case *sqlparse.Lock:
			found = &text2sql.SQLError{Kind: text2sql.KindNotReadOnly,
				Message: "locking clause (" + strings.Join(strings.Fields(strings.ToUpper(v.Text())), " ") + ") takes row locks; only plain queries are allowed"}
		case *sqlparse.Into:
			found = intoRefusal()
		case *sqlparse.Other:
			if deepWriteWords[strings.ToLower(v.Verb)] {
				found = writeRefusal(v.Verb)
			}
		}
		return true
	})
	if found != nil {
		return found
	}
	first := tree.Stmts[0].Extent()
	for _, e := range tree.Errors { // every error node, attached or not
		if e.From >= first.From && e.To <= first.To {
			if found = deepScan(tree.Tokens[e.From:e.To]); found != nil {
				return found
			}
		}
	}
	return nil
}

func intoRefusal() *text2sql.SQLError {
	return &text2sql.SQLError{Kind: text2sql.KindNotReadOnly,
		Message: "INTO writes its result; only plain queries are allowed"}
}

func writeRefusal(word string) *text2sql.SQLError {
	return &text2sql.SQLError{Kind: text2sql.KindNotReadOnly,
		Message: strings.ToUpper(word) + " inside the query changes the database; only queries are allowed"}
}

// checkQuery checks the first keywords of one statement's significant
// tokens.
func checkQuery(toks []sqltext.Token) *text2sql.SQLError {
	i := skipOpenParens(toks, 0)
	if i >= len(toks) {
		return refuseFirst(toks, 0)
	}
	switch {
	case toks[i].Is("select"), toks[i].Is("values"):
	case toks[i].Is("with"):
		if e := checkWith(toks, i+1); e != nil {
			return e
		}
	default:
		return refuseFirst(toks, i)
	}
	return nil
}

// checkWith checks the CTE list that starts at toks[i] (after WITH) and the
// statement that follows it: every CTE body and the main statement must be
// queries.
func checkWith(toks []sqltext.Token, i int) *text2sql.SQLError {
	if i < len(toks) && toks[i].Is("recursive") {
		i++
	}
	for i < len(toks) {
		if _, ok := toks[i].Ident(); !ok {
			return nil // malformed: the engine reports it
		}
		i++
		if i < len(toks) && toks[i].Text == "(" { // column list
			i = skipGroup(toks, i)
		}
		if i >= len(toks) || !toks[i].Is("as") {
			return nil
		}
		i++
		for i < len(toks) && (toks[i].Is("not") || toks[i].Is("materialized")) {
			i++
		}
		if i >= len(toks) || toks[i].Text != "(" {
			return nil
		}
		if b := skipOpenParens(toks, i); b < len(toks) {
			if e := bodyKeyword(toks[b], "common table expression"); e != nil {
				return e
			}
		}
		i = skipSearchCycle(toks, skipGroup(toks, i))
		if i < len(toks) && toks[i].Text == "," {
			i++
			continue
		}
		break
	}
	if i = skipOpenParens(toks, i); i < len(toks) {
		return bodyKeyword(toks[i], "statement after WITH")
	}
	return nil
}

// skipSearchCycle returns the index after PostgreSQL's SEARCH and CYCLE
// clauses of a CTE at toks[i], when they have exactly their shape:
// SEARCH DEPTH|BREADTH FIRST BY col, … SET col and CYCLE col, … SET col
// [TO value DEFAULT value] USING col. Anything else is left at i, for
// the caller to refuse as the statement after WITH.
func skipSearchCycle(toks []sqltext.Token, i int) int {
	is := func(k int, w string) bool { return k < len(toks) && toks[k].Is(w) }
	name := func(k int) bool {
		if k >= len(toks) {
			return false
		}
		_, ok := toks[k].Ident()
		return ok
	}
	// names returns the index after col, col, … at k, or -1.
	names := func(k int) int {
		for name(k) {
			if k+1 < len(toks) && toks[k+1].Text == "," {
				k += 2
				continue
			}
			return k + 1
		}
		return -1
	}
	if is(i, "search") && (is(i+1, "depth") || is(i+1, "breadth")) && is(i+2, "first") && is(i+3, "by") {
		if k := names(i + 4); k > 0 && is(k, "set") && name(k+1) {
			i = k + 2
		}
	}
	if is(i, "cycle") {
		k := names(i + 1)
		if k < 0 || !is(k, "set") || !name(k+1) {
			return i
		}
		k += 2
		if is(k, "to") && is(k+2, "default") {
			k += 4
		}
		if is(k, "using") && name(k+1) {
			i = k + 2
		}
	}
	return i
}

// bodyKeyword checks the first keyword of a CTE body or of the statement
// after a WITH clause.
func bodyKeyword(t sqltext.Token, where string) *text2sql.SQLError {
	w := strings.ToLower(t.Text)
	switch {
	case t.Kind != sqltext.Word, w == "select", w == "values", w == "with":
		return nil
	case writeWords[w]:
		return &text2sql.SQLError{Kind: text2sql.KindNotReadOnly,
			Message: "data-modifying " + where + " (" + strings.ToUpper(w) + "); only queries are allowed"}
	}
	return &text2sql.SQLError{Kind: text2sql.KindForbiddenStatement,
		Message: strings.ToUpper(w) + " is not allowed as a " + where + "; only queries are allowed"}
}

// refuseFirst refuses a statement whose first keyword, toks[i], does not
// start a query.
func refuseFirst(toks []sqltext.Token, i int) *text2sql.SQLError {
	if i >= len(toks) {
		return &text2sql.SQLError{Kind: text2sql.KindForbiddenStatement,
			Message: "not a query; only SELECT, WITH … SELECT and VALUES are allowed"}
	}
	w := strings.ToLower(toks[i].Text)
	if toks[i].Kind == sqltext.Word && writeWords[w] {
		return &text2sql.SQLError{Kind: text2sql.KindNotReadOnly,
			Message: strings.ToUpper(w) + " changes the database; only SELECT, WITH … SELECT and VALUES are allowed"}
	}
	if toks[i].Kind != sqltext.Word || !forbiddenWords[w] && nearQueryKeyword(w) {
		// Not a statement keyword at all, or a misspelt SELECT/WITH/VALUES.
		return &text2sql.SQLError{Kind: text2sql.KindSyntax,
			Message: "near " + strconv.Quote(toks[i].Text) + ": a statement must start with SELECT, WITH or VALUES"}
	}
	return &text2sql.SQLError{Kind: text2sql.KindForbiddenStatement,
		Message: strings.ToUpper(w) + " is not allowed; only SELECT, WITH … SELECT and VALUES are allowed"}
}

// nearQueryKeyword reports whether w is within two edits of SELECT, WITH or
// VALUES: a typo rather than another statement.
func nearQueryKeyword(w string) bool {
	for _, k := range []string{"select", "with", "values"} {
		if sqltext.EditDistance(w, k) <= 2 {
			return true
		}
	}
	return false
}

// deepScan looks, in toks, for keywords of data-modifying SQL and of
// locking clauses: CheckText's scan of a whole statement, and DeepScan's
// of the tokens the syntax tree could not place.
func deepScan(toks []sqltext.Token) *text2sql.SQLError {
	for i, t := range toks {
		if t.Kind != sqltext.Word {
			continue
		}
		if i > 0 && toks[i-1].Kind == sqltext.Punct && toks[i-1].Text == "." {
			continue
		}
		next := ""
		if i+1 < len(toks) {
			next = strings.ToLower(toks[i+1].Text)
		}
		w := strings.ToLower(t.Text)
		switch {
		case w == "update" && i > 0 && toks[i-1].Is("for"):
			return &text2sql.SQLError{Kind: text2sql.KindNotReadOnly,
				Message: "locking clause (FOR UPDATE) takes row locks; only plain queries are allowed"}
		case w == "into" && next != "(":
			return intoRefusal()
		case deepWriteWords[w] && next != "(":
			return writeRefusal(w)
		case w == "for" && (next == "share" || next == "key" || next == "no"):
			return &text2sql.SQLError{Kind: text2sql.KindNotReadOnly,
				Message: "locking clause (FOR " + strings.ToUpper(next) + ") takes row locks; only plain queries are allowed"}
		case w == "lock" && next == "in":
			return &text2sql.SQLError{Kind: text2sql.KindNotReadOnly,
				Message: "locking clause (LOCK IN SHARE MODE) takes row locks; only plain queries are allowed"}
		}
	}
	return nil
}

// skipOpenParens returns the index of the first token at or after i that
// is not "(".
func skipOpenParens(toks []sqltext.Token, i int) int {
	for i < len(toks) && toks[i].Kind == sqltext.Punct && toks[i].Text == "(" {
		i++
	}
	return i
}

// skipGroup returns the index after the parenthesis group opening at toks[i].
func skipGroup(toks []sqltext.Token, i int) int {
	depth := 0
	for ; i < len(toks); i++ {
		if toks[i].Kind != sqltext.Punct {
			continue
		}
		switch toks[i].Text {
		case "(":
			depth++
		case ")":
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return i
}

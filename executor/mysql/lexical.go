package mysql

import (
	"slices"
	"strings"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/sqltext"
)

// MariaDB's grammar is not MySQL's: MEDIAN(x) OVER (), CAST(x AS INT),
// VALUES (1), (2), JSON_TABLE, SOUNDS LIKE, WITHIN GROUP, OFFSET … FETCH,
// ROWNUM() and more are MariaDB queries the parser of the Guard (TiDB's,
// MySQL's grammar) does not read. Such a text is decided on its tokens,
// by MariaDB's lexical rules, with rules that hold whatever the grammar
// makes of them, and the server's own parser then reads it (a text it
// does not read fails there as a syntax error, having run nothing):
//
//   - it starts as a query does (SELECT, WITH, VALUES, TABLE or "(");
//   - no word of a clause that writes, locks or changes the session
//     appears anywhere (INTO, LOCK, FOR UPDATE/SHARE, PROCEDURE, NEXT or
//     PREVIOUS VALUE FOR, :=) — outside literals and quoted names these
//     words mean nothing else;
//   - every name followed by "(" is a function on the allow-list or a
//     word of the grammar that takes a parenthesis (IN (, OVER (,
//     DECIMAL(10, 2), a WITH query's column list); a qualified one
//     (db.f(…)) only when allowed by that name. The names are confirmed
//     on the server as calls of the statement are (Executor.Execute);
//   - no qualifier names a system schema, and each other qualifier
//     (x. in x.y) is confirmed on the server not to be another database
//     (Statement.Qualifiers) — a table of another database can only be
//     named so.

// grammarParen are the words MariaDB's grammar puts before "(" in a
// query without making a call of them: keywords, clause and operator
// words, and type names (CAST(x AS DECIMAL(10, 2)), JSON_TABLE columns).
// Those a stored function could be named by are confirmed like calls.
var grammarParen = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`in exists values over as from join on using where and or not xor
		select all any some union intersect except by having when then else case like between distinct
		interval against match index key partition div mod is row columns path group window rows range json_table
		with recursive nested ordinality of escape sounds regexp rlike limit offset collate
		decimal dec numeric fixed float double real int integer tinyint smallint mediumint bigint
		varchar varbinary binary char nchar character datetime time timestamp year bit unsigned signed`) {
		grammarParen[w] = true
	}
}

// clauseWords are the words that make a query write, lock rows or set
// variables, with the kind of their refusal.
var clauseWords = map[string]text2sql.ErrorKind{
	"into": text2sql.KindNotReadOnly, "outfile": text2sql.KindNotReadOnly, "dumpfile": text2sql.KindNotReadOnly,
	"lock": text2sql.KindNotReadOnly, "update": text2sql.KindNotReadOnly,
	"procedure": text2sql.KindForbiddenStatement, "handler": text2sql.KindForbiddenStatement,
	"nextval": text2sql.KindForbiddenFunction, "lastval": text2sql.KindForbiddenFunction,
	"setval": text2sql.KindForbiddenFunction,
}

// lexicalPlan decides, on its significant tokens, a text the parser did
// not read (see above). ok is false when the text does not start as a
// query: the parser's refusal then stands.
func (c *Guard) lexicalPlan(text string, toks []sqltext.Token) (st Statement, se *text2sql.SQLError, ok bool) {
	i := 0
	for i < len(toks) && toks[i].Text == "(" {
		i++
	}
	if i == len(toks) || !(toks[i].Is("select") || toks[i].Is("with") || toks[i].Is("values") || toks[i].Is("table")) {
		return Statement{}, nil, false
	}
	calls, quals := map[string]bool{}, map[string]bool{}
	for i, t := range toks {
		next := func(k int) sqltext.Token {
			if i+k < len(toks) {
				return toks[i+k]
			}
			return sqltext.Token{}
		}
		if t.Kind == sqltext.Punct && (strings.Contains(t.Text, ":=") || t.Text == ":" && next(1).Text == "=") {
			return Statement{}, &text2sql.SQLError{Kind: text2sql.KindNotReadOnly,
				Message: "assignment (:=) changes the session; only plain queries are allowed"}, true
		}
		if t.Kind == sqltext.Word {
			w := strings.ToLower(t.Text)
			if kind, bad := clauseWords[w]; bad && !(i > 0 && toks[i-1].Text == ".") {
				return Statement{}, &text2sql.SQLError{Kind: kind,
					Message: strings.ToUpper(w) + " is not allowed in a query: it writes, locks rows or runs more than a query"}, true
			}
			if w == "for" && next(1).Is("share") {
				return Statement{}, &text2sql.SQLError{Kind: text2sql.KindNotReadOnly,
					Message: "locking clause FOR SHARE takes row locks; only plain queries are allowed"}, true
			}
			if (w == "next" || w == "previous") && next(1).Is("value") {
				return Statement{}, &text2sql.SQLError{Kind: text2sql.KindForbiddenFunction,
					Message: strings.ToUpper(w) + " VALUE FOR reads a sequence (NEXT moves it); only plain queries are allowed"}, true
			}
		}
		name, isName := t.Ident()
		if !isName {
			continue
		}
		name = strings.ToLower(name)
		qualified := i > 0 && toks[i-1].Text == "."
		switch {
		case next(1).Text == "." && !qualified:
			if systemSchemas[name] {
				return Statement{}, &text2sql.SQLError{Kind: text2sql.KindForbiddenTable,
					Message: "qualifier " + name + " is one of the server's system schemas; only the database's own tables and views may be read"}, true
			}
			quals[name] = true
		case next(1).Text != "(":
		case qualified:
			full := strings.ToLower(toks[i-2].Text) + "." + name
			if q, ok := toks[i-2].Ident(); ok {
				full = strings.ToLower(q) + "." + name
			}
			if !c.allow[full] {
				return Statement{}, &text2sql.SQLError{Kind: text2sql.KindForbiddenFunction,
					Message: "function " + full + " is a stored function, not on the allow-list of read-only functions"}, true
			}
		case t.Kind == sqltext.Word && grammarParen[name], withColumns(toks, i):
			calls[name] = true
		default:
			if se := c.checkName(name, "function"); se != nil {
				return Statement{}, se, true
			}
			calls[name] = true
		}
	}
	return Statement{Text: text, Calls: sortedKeys(calls), Qualifiers: sortedKeys(quals), Unparsed: true}, nil, true
}

// withColumns reports whether the name at toks[i] starts the column list
// of a WITH query: name (a, b) AS (…) after WITH, RECURSIVE or ",".
func withColumns(toks []sqltext.Token, i int) bool {
	if i == 0 || !(toks[i-1].Is("with") || toks[i-1].Is("recursive") || toks[i-1].Text == ",") {
		return false
	}
	depth := 0
	for j := i + 1; j < len(toks); j++ {
		switch toks[j].Text {
		case "(":
			depth++
		case ")":
			depth--
			if depth == 0 {
				return j+2 < len(toks) && toks[j+1].Is("as") && toks[j+2].Text == "("
			}
		}
	}
	return false
}

func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

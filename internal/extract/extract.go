// Package extract finds SQL in the free text a language model returns
// when it does not answer in JSON (generator.Parse): fenced code blocks
// (also read by the stages that look for a JSON object in a block),
// "SQLQuery:"-style labels, bare statements between lines of prose,
// inline code. Where a statement
// ends is decided on tokens of the lexer (line by line: can the next line
// continue it?), and whether a text is a statement at all on its parse
// (judge): a query whose head parses cleanly, or another statement whose
// tokens match its verb's pattern. Nothing looks at raw text with keyword
// regexes, so a keyword inside a literal, a quoted identifier or a comment
// means nothing and a statement is never cut at WITH ROLLUP, WITHIN GROUP
// or a second CTE.
//
// It reads the text with the SQL lexer (internal/sqltext) and parser
// (internal/sqlparse); what it returns is not checked: deciding what may
// run is the guard's job, and whether it answers the question the lint's.
package extract

import (
	"regexp"
	"strings"
	"sync"

	"github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/sqlparse"
	"github.com/text2sql-go/text2sql/internal/sqltext"
)

// SQL returns the SQL in a model's free-text answer, without code
// fences, labels, surrounding prose or the final semicolon; leading
// comments stay. ok is false when the text holds no SQL statement.
//
// Sources, in order of preference (the last match of the first source that
// has one wins, as models put their final answer last):
//
//  1. a fenced code block (``` or ~~~): a block tagged sql, sqlite,
//     postgresql, mysql… is SQL whatever it holds; an untagged block is SQL
//     when it starts with a statement (see StartsStatement);
//  2. a statement at the start of a line or after a label such as
//     "SQLQuery:", "SQL:" or "Here is the query:", running to the end of the
//     text, to a top-level semicolon not followed by another statement, or
//     to a line that cannot continue it (prose);
//  3. inline code (`SELECT …`) that starts with a statement.
//
// Statements that follow one another ("SELECT 1; DROP TABLE t") are
// returned together, so a guard sees — and refuses — all of them. Writes
// are returned like queries: deciding what may run is the guard's job.
func SQL(text string) (sql string, ok bool) {
	blocks := Fences(text)
	for i := len(blocks) - 1; i >= 0; i-- {
		b := blocks[i]
		if b.Lang == "json" {
			continue
		}
		if sqlLang[b.Lang] || StartsStatement(b.Content) {
			if s := clean(b.Content); s != "" {
				return s, true
			}
		}
	}
	segs := outside(text, blocks)
	for i := len(segs) - 1; i >= 0; i-- {
		if s := lastBare(segs[i]); s != "" {
			return s, true
		}
	}
	for i := len(segs) - 1; i >= 0; i-- {
		if s := lastInline(segs[i]); s != "" {
			return s, true
		}
	}
	return "", false
}

// sqlLang are the info strings of fenced blocks that hold SQL.
var sqlLang = map[string]bool{
	"sql": true, "sqlite": true, "sqlite3": true, "postgresql": true, "postgres": true, "psql": true,
	"pgsql": true, "plpgsql": true, "mysql": true, "mariadb": true, "tsql": true, "mssql": true,
	"plsql": true, "duckdb": true, "bigquery": true, "snowflake": true, "hive": true, "sparksql": true,
}

// clean trims white space and trailing semicolons (and comments after the
// last token) from a statement, keeping leading comments.
func clean(s string) string { return sqltext.StripTrailing(strings.TrimSpace(s)) }

// outside returns the parts of text that are not in blocks.
func outside(text string, blocks []Fence) []string {
	var segs []string
	pos := 0
	for _, b := range blocks {
		if b.Start > pos {
			segs = append(segs, text[pos:b.Start])
		}
		pos = b.End
	}
	if pos < len(text) {
		segs = append(segs, text[pos:])
	}
	return segs
}

// maxLookahead is how many tokens after a semicolon are looked at to
// decide whether another statement follows.
const maxLookahead = 512

// firstWindow is how many bytes of a statement are lexed at first;
// statementEnd doubles it while the statement runs on, so its cost stays
// linear in the statement's length (startsAt uses bounded windows around
// it).
const firstWindow = 2048

// lastBare returns the last bare statement of seg, or "".
func lastBare(seg string) string {
	last := ""
	end := 0 // candidates before end are inside a statement already found
	for _, off := range candidates(seg) {
		if off < end {
			continue
		}
		if !startsAt(seg, off) {
			continue
		}
		e := statementEnd(seg, off)
		if s := clean(seg[off:e]); s != "" {
			last, end = s, e
		}
	}
	return last
}

// candidates returns the offsets in seg where a bare statement may begin,
// ascending: the first non-blank character of each line, and the text
// after a label ("SQLQuery:", "**SQL:**", "Here is the query:") when a
// line has one.
func candidates(seg string) []int {
	var offs []int
	for ls := 0; ls < len(seg); {
		le := strings.IndexByte(seg[ls:], '\n')
		if le < 0 {
			le = len(seg)
		} else {
			le += ls
		}
		line := seg[ls:le]
		i := 0
		for i < len(line) && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r' || line[i] == '>') {
			i++
		}
		if i < len(line) {
			offs = append(offs, ls+i)
			if j := listMarker(line[i:]); j > 0 {
				offs = append(offs, ls+i+j)
			}
		}
		if c := strings.IndexByte(line, ':'); c > 0 && c <= maxLabelBytes && isLabel(line[:c]) {
			j := c + 1
			for j < len(line) && (line[j] == ' ' || line[j] == '\t' || line[j] == '*' || line[j] == '_') {
				j++
			}
			if j > i && (len(offs) == 0 || ls+j > offs[len(offs)-1]) {
				offs = append(offs, ls+j)
			}
		}
		ls = le + 1
	}
	return offs
}

// maxLabelBytes and maxLabelWords bound a label ("Here is the corrected
// SQL query:"): a longer text before a colon is a sentence of prose.
const (
	maxLabelBytes = 80
	maxLabelWords = 12
)

// maxListDigits is how many digits a numbered list marker ("12. ") may
// have; more is a number, not a list item.
const maxListDigits = 3

// listMarker returns the length of a Markdown list marker and the spaces
// after it at the start of line ("- ", "* ", "1. ", "2) "), or 0.
func listMarker(line string) int {
	i := 0
	switch {
	case strings.HasPrefix(line, "- ") || strings.HasPrefix(line, "* ") || strings.HasPrefix(line, "+ "):
		i = 2
	default:
		for i < len(line) && i < maxListDigits && line[i] >= '0' && line[i] <= '9' {
			i++
		}
		if i == 0 || i >= len(line) || (line[i] != '.' && line[i] != ')') || i+1 >= len(line) || line[i+1] != ' ' {
			return 0
		}
		i += 2
	}
	for i < len(line) && line[i] == ' ' {
		i++
	}
	return i
}

// isLabel reports whether p, the text of a line before its first colon,
// can be a label: a few words of prose, possibly in Markdown emphasis or
// a heading, with no quotes, brackets or backticks.
func isLabel(p string) bool {
	words := 0
	inWord := false
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == ' ' || c == '\t' || c == '*' || c == '#' || c == '_' || c == '-' || c == '>' || c == '.' || c == ',' || c == '/':
			inWord = false
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80:
			if !inWord {
				words++
			}
			inWord = true
		default:
			return false
		}
	}
	return words > 0 && words <= maxLabelWords
}

// lastInline returns the last `inline code` of seg that starts with a
// statement, or "".
func lastInline(seg string) string {
	last := ""
	for i := 0; i < len(seg); i++ {
		if seg[i] != '`' {
			continue
		}
		j := strings.IndexByte(seg[i+1:], '`')
		if j < 0 {
			break
		}
		code := seg[i+1 : i+1+j]
		if StartsStatement(code) {
			if s := clean(code); s != "" {
				last = s
			}
		}
		i += j + 1
	}
	return last
}

// window returns s[off:off+size] (or to the end) and reports whether it
// reaches the end of s.
func window(s string, off, size int) (string, bool) {
	if end := off + size; end < len(s) {
		return s[off:end], false
	}
	return s[off:], true
}

// StartsStatement reports whether s, after white space and comments, starts
// with an SQL statement: a query (SELECT, WITH … AS (, VALUES (, or a
// parenthesised query) or another statement (INSERT INTO, UPDATE … SET,
// DELETE FROM, CREATE TABLE, DROP, ALTER, COPY, ATTACH, PRAGMA, VACUUM,
// transaction control, SET, EXPLAIN …). It is judged on its parse (see
// judge), not just its first word, so prose that opens with an English
// word that is also a keyword ("With the students table you can…",
// "Select the rows you need", "Update: …", "Drop me a line") is not a
// statement.
func StartsStatement(s string) bool {
	return startsAt(s, 0)
}

// statementEnd returns the end offset in s of the statement starting at
// s[off:]: the end of its last significant token before a top-level
// semicolon that no statement follows, a line that cannot continue it, or
// the end of s.
func statementEnd(s string, off int) int {
	for size := firstWindow; ; size *= 2 {
		src, all := window(s, off, size)
		end, decided := scanEnd(src, sqltext.Lex(src), true)
		if decided || all {
			return off + end
		}
	}
}

// scanEnd finds where the statement at the start of toks, the tokens of
// src, ends: the end offset of its last significant token. With more, statements that follow
// a top-level semicolon are taken in too. decided is false when the scan
// ran to the last token, so the caller may lex further.
func scanEnd(src string, toks []sqltext.Token, more bool) (end int, decided bool) {
	depth := 0
	lastSig := -1 // index of the last significant token kept
	endOf := func(i int) int {
		if i < 0 {
			return 0
		}
		return toks[i].Pos + len(toks[i].Text)
	}
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		switch {
		case t.Kind == sqltext.Punct && t.Text == "(":
			depth++
		case t.Kind == sqltext.Punct && t.Text == ")":
			depth--
			if depth < 0 { // a parenthesis of the surrounding prose
				return endOf(lastSig), true
			}
		case t.Kind == sqltext.Punct && t.Text == ";" && depth == 0:
			if !more {
				return endOf(lastSig), true
			}
			rest := toks[i+1 : min(len(toks), i+1+maxLookahead)]
			if len(sqltext.Significant(rest)) == 0 {
				return endOf(lastSig), false // maybe more beyond the lexed window
			}
			last := rest[len(rest)-1]
			if ok, _ := startsWith(src[rest[0].Pos : last.Pos+len(last.Text)]); !ok {
				return endOf(lastSig), true
			}
		case t.Kind == sqltext.Space && depth <= 0 && strings.Contains(t.Text, "\n") && lastSig >= 0:
			j := i + 1
			for j < len(toks) && toks[j].Trivia() {
				j++
			}
			if j == len(toks) {
				continue
			}
			if !continues(toks[lastSig], firstSignificant(toks[j:], 2), strings.Count(t.Text, "\n") > 1) {
				return endOf(lastSig), true
			}
		}
		if !t.Trivia() && !(t.Kind == sqltext.Punct && t.Text == ";") {
			lastSig = i
		}
	}
	return endOf(lastSig), false
}

// lineEndNeedsMore are words after which a statement cannot end.
var lineEndNeedsMore = set(`select from where and or not on by join as with union all distinct set values into in like
	ilike glob between case when then else having limit offset is using recursive over partition filter within inner
	left right full outer cross natural group order except intersect escape exists materialized`)

// lineStartContinues are words that, at the start of a line, carry on the
// statement above.
var lineStartContinues = set(`from where group order having limit offset union intersect except join inner left right
	full cross natural outer on using and or not window fetch returning when then else end asc desc nulls collate over
	partition filter within qualify lateral straight_join escape between like ilike glob regexp in is for rows range
	groups tablesample`)

// lineEndOps are punctuation after which a statement cannot end.
var lineEndOps = set(`, ( = < > <= >= <> != == + - / % || . :: -> ->> #> #>> @> <@ ~ ~* !~ & | << >> && ^ <=>`)

// lineStartOps are punctuation that, at the start of a line, carry on the
// statement above. "-", "+", "*" and "(" are left out: at the start of a
// line they are more often a list bullet or prose.
var lineStartOps = set(`, ) = < > <= >= <> != == / % || . :: -> ->> #> #>> @> <@ && <=>`)

// firstSignificant returns the first n significant tokens of toks (fewer
// if it has fewer).
func firstSignificant(toks []sqltext.Token, n int) []sqltext.Token {
	var out []sqltext.Token
	for _, t := range toks {
		if len(out) == n {
			break
		}
		if !t.Trivia() {
			out = append(out, t)
		}
	}
	return out
}

// continues reports whether the line starting with next (its first two
// significant tokens) carries on the statement whose last token is prev.
// After a blank line only a clause keyword or an unfinished line carries
// on.
func continues(prev sqltext.Token, next []sqltext.Token, blank bool) bool {
	if len(next) == 0 {
		return true
	}
	if needsMore(prev) {
		return true
	}
	n := next[0]
	w := strings.ToLower(n.Text)
	switch {
	case n.Kind == sqltext.Word && (w == "select" || w == "values"):
		// The main query after a CTE list: "…)\nSELECT".
		return prev.Kind == sqltext.Punct && prev.Text == ")"
	case n.Kind == sqltext.Word && w == "with":
		// GROUP BY … WITH ROLLUP, FETCH … WITH TIES, WITH ORDINALITY, WITH CHECK OPTION.
		if len(next) > 1 {
			w2 := strings.ToLower(next[1].Text)
			return w2 == "rollup" || w2 == "ties" || w2 == "ordinality" || w2 == "check" || w2 == "cube" || w2 == "totals"
		}
		return false
	case n.Kind == sqltext.Word && lineStartContinues[w]:
		if blank {
			return blankContinues[w]
		}
		return true
	case n.Kind == sqltext.Punct && lineStartOps[n.Text]:
		return !blank
	}
	return false
}

// blankContinues are the clause keywords that carry a statement on across
// a blank line.
var blankContinues = set(`from where group order having limit offset union intersect except join inner left right full
	cross natural window fetch qualify`)

// needsMore reports whether a statement cannot end at t.
func needsMore(t sqltext.Token) bool {
	switch t.Kind {
	case sqltext.Word:
		return lineEndNeedsMore[strings.ToLower(t.Text)]
	case sqltext.Punct:
		return lineEndOps[t.Text]
	}
	return false
}

func set(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// startWindows are the sizes in bytes of the windows startsAt lexes, one
// after the other while its verdict needs more text: most candidates are
// decided in the first, and the last bounds the cost of one candidate.
var startWindows = []int{256, firstWindow, 32 * firstWindow}

// startsAt reports whether a statement starts at s[off:], after white
// space and comments. It judges a window first, a larger one when the
// verdict needed text past its end, and gives a statement whose head is
// still open at the end of the largest the benefit of the doubt (so the
// cost per candidate stays bounded).
func startsAt(s string, off int) bool {
	if !mayStart(s[off:]) {
		return false
	}
	for _, size := range startWindows {
		src, all := window(s, off, size)
		ok, more := startsWith(src)
		if ok || !more || all {
			return ok
		}
	}
	return true
}

// startsWith reports whether text starts with a statement, judging only
// the text up to where the statement ends (see scanEnd), so the prose
// after it cannot pass for an alias or a clause. more says the verdict
// depends on text past the end of text.
func startsWith(text string) (ok, more bool) {
	end, decided := scanEnd(text, sqltext.Lex(text), false)
	ok, more = judge(text[:end], true)
	return ok, more && !decided
}

// judge reports whether text is shaped like a statement rather than like
// prose: sqlparse parses it as a query whose head (see queryHead) holds
// neither an error nor a prose word, or as another statement that its
// verb's pattern matches (see otherShapes; with explain, EXPLAIN and the
// statement it explains). more says the verdict was reached at the end of
// text, so more text could change it.
func judge(text string, explain bool) (ok, more bool) {
	sc := sqlparse.Parse(text, text2sql.DialectSQLite)
	if len(sc.Stmts) == 0 {
		return false, true
	}
	switch st := sc.Stmts[0].(type) {
	case *sqlparse.Query:
		from, end, shaped := queryHead(st)
		if !shaped {
			return false, end >= len(sc.Tokens)
		}
		reach := proseIn(sc, st, from, end)
		return reach < 0, max(end, reach) >= len(sc.Tokens)
	case *sqlparse.Other:
		toks := sc.Tokens[st.From:st.To]
		if explain && toks[0].Is("explain") {
			if m := explainPrefix().FindString(shapeOf(toks)); m != "" {
				k := st.From + strings.Count(m, " ")
				if k < st.To {
					ok, _ := judge(text[sc.Tokens[k].Pos:st.End], false)
					return ok, false
				}
			}
			return false, false
		}
		re := otherShapes()[strings.ToLower(toks[0].Text)]
		return re != nil && re.MatchString(shapeOf(toks)), false
	}
	return false, false
}

// queryHead returns the tokens [from, end) of q that tell a query from
// prose: the header of its first CTE up to the "(" of its body; else the
// SELECT of its first operand with its select list and, when it has FROM,
// the first table of FROM with its alias (or up to the "(" of a derived
// table, table function or parenthesised join), plus the token after
// them, which must go on with a clause, a join or a comma; for VALUES, up
// to its first "(". What comes after the head is not looked at: a query
// with mistakes is still the model's query. shaped is false when q has no
// head: a WITH without a CTE body, VALUES without a row, no SELECT.
func queryHead(q *sqlparse.Query) (from, end int, shaped bool) {
	if q.With != nil {
		if len(q.With.CTEs) == 0 || q.With.CTEs[0].Query == nil {
			return 0, q.To, false
		}
		return q.From, q.With.CTEs[0].Query.From, true
	}
	body := q.Body
	for {
		switch b := body.(type) {
		case *sqlparse.SetOp:
			body = b.Left
			continue
		case *sqlparse.ParenQuery:
			return queryHead(b.Query)
		case *sqlparse.Values:
			if len(b.Rows) == 0 {
				return 0, b.To, false
			}
			return b.From, b.Rows[0].From + 1, true
		case *sqlparse.Select:
			return b.Span.From, selectHeadEnd(b), true
		}
		return 0, body.Extent().To, false
	}
}

// selectHeadEnd returns the end of the head of s (see queryHead).
func selectHeadEnd(s *sqlparse.Select) int {
	if len(s.From) == 0 {
		return s.Items[len(s.Items)-1].To + 1
	}
	t := s.From[0]
	for {
		switch v := t.(type) {
		case *sqlparse.Join:
			t = v.Left
			continue
		case *sqlparse.TableName:
			return v.To + 1
		case *sqlparse.DerivedTable:
			return v.Query.From
		case *sqlparse.TableFunc:
			return v.Call.Name[len(v.Call.Name)-1].To + 1
		case *sqlparse.ParenTable:
			return v.From + 1
		}
		return t.Extent().To + 1
	}
}

// proseIn looks in the tokens [from, end) of q, the head, for the marks of
// prose: an error of the parse or an unquoted identifier that is a prose
// word (see proseWords). It returns the end of the first it finds, -1 if
// none. What stands inside a closed parenthesis is not looked at, as the
// model's own functions and mistakes stand there (COUNT(x WHERE y)), nor
// is a parenthesis left open: the text may end inside it.
func proseIn(sc *sqlparse.Script, q *sqlparse.Query, from, end int) (reach int) {
	inside := enclosed(sc.Tokens, from)
	top := func(i int) bool { return i >= len(inside) || !inside[i] }
	for _, e := range sc.Errors {
		if e.From >= from && e.From < end && top(e.From-from) && e.Reason != sqlparse.ReasonMissingParen {
			return e.To
		}
	}
	reach = -1
	sqlparse.Inspect(q, func(n sqlparse.Node) bool {
		if n == nil || reach >= 0 {
			return false
		}
		if sp := n.Extent(); sp.From >= end || sp.To <= from {
			return false
		}
		switch v := n.(type) {
		case *sqlparse.Call: // a function's name may be any word: insert(s, 1, 0, 'x')
			return false
		case *sqlparse.Ident:
			if !v.Quoted && top(v.From-from) && proseWords[strings.ToLower(v.Name)] {
				reach = v.To
			}
		}
		return true
	})
	return reach
}

// enclosed marks the tokens of toks[from:], and the end after them, that
// stand inside a parenthesis opened at or after from — closed (its ")"
// included, where the parser puts what is missing before it) or left open
// to the end.
func enclosed(toks []sqltext.Token, from int) []bool {
	toks = toks[min(from, len(toks)):]
	match := make([]int, len(toks)) // index of the ")" closing a "(", -1 if none
	var open []int
	for i, t := range toks {
		match[i] = -1
		switch {
		case t.Kind == sqltext.Punct && t.Text == "(":
			open = append(open, i)
		case t.Kind == sqltext.Punct && t.Text == ")" && len(open) > 0:
			match[open[len(open)-1]] = i
			open = open[:len(open)-1]
		}
	}
	inside := make([]bool, len(toks)+1)
	for i := 0; i < len(toks); i++ {
		if t := toks[i]; t.Kind != sqltext.Punct || t.Text != "(" {
			continue
		}
		last := match[i]
		if last < 0 {
			last = len(toks)
		}
		for j := i + 1; j <= last; j++ {
			inside[j] = true
		}
		i = last
	}
	return inside
}

// proseWords are the words every target dialect reserves that the parser
// still reads as names, so that as an unquoted name in a query's head they
// show the text is prose: "select name from the table".
var proseWords = set(`table set insert update delete create drop alter`)

// shapeOf renders toks for the patterns of otherShapes: each token and a
// space — a word lower-cased, a string as ', a number as 9, a quoted
// identifier as ", a parameter as ?, punctuation as written — and ";" for
// the end of the statement.
func shapeOf(toks []sqltext.Token) string {
	var b strings.Builder
	for _, t := range toks {
		switch t.Kind {
		case sqltext.Word:
			b.WriteString(strings.ToLower(t.Text))
		case sqltext.String:
			b.WriteByte('\'')
		case sqltext.Number:
			b.WriteByte('9')
		case sqltext.QuotedIdent:
			b.WriteByte('"')
		case sqltext.Param:
			b.WriteByte('?')
		default:
			b.WriteString(t.Text)
		}
		b.WriteByte(' ')
	}
	b.WriteString("; ")
	return b.String()
}

// shapeRE compiles a pattern over shapeOf's rendering, anchored at the
// start, where N stands for a possibly qualified name, W for a word,
// {objects} and {modifiers} for the words of objectWords and
// createModifiers, and {privileges} for the words that may follow a
// privilege of GRANT (ALL PRIVILEGES, SHOW VIEW, REPLICATION CLIENT).
func shapeRE(pattern string) *regexp.Regexp {
	const word = `[\pL_][\pL\pN_$]*`
	r := strings.NewReplacer(
		"N", `(?:`+word+`|")(?: \. (?:`+word+`|"))*`,
		"W", word,
		"{objects}", `(?:`+strings.Join(strings.Fields(objectWords), "|")+`)`,
		"{modifiers}", `(?:`+strings.Join(strings.Fields(createModifiers), "|")+`)`,
		"{privileges}", `(?:privileges|tables|view|routine|client|slave|databases|user|role)`,
	)
	return regexp.MustCompile("^" + r.Replace(pattern))
}

// objectWords are the kinds of object CREATE, DROP and ALTER act on.
const objectWords = `table view index trigger schema database function procedure sequence extension role user type
	domain policy rule aggregate cast collation server publication subscription event tablespace statistics operator
	language conversion materialized temporary temp virtual unique owned group foreign text access default transform
	routine macro secret unlogged system`

// createModifiers may come between CREATE and the object kind.
const createModifiers = `or replace temp temporary unique materialized virtual global local unlogged recursive
	external trusted procedural constraint if not exists definer algorithm sql security`

// explainPrefix is EXPLAIN with its options, before the statement it
// explains; compiled on first use, as otherShapes.
var explainPrefix = sync.OnceValue(func() *regexp.Regexp {
	return shapeRE(`explain (?:(?:query|plan|analyze|analyse|verbose|extended|partitions|format = W) |\( [^;]*?\) )*`)
})

// otherShapes are, by verb, the patterns (see shapeRE) of how the
// statements that are not queries begin: enough of each to tell it from
// an English sentence that opens with the same word ("Update the table",
// "Drop me a line", "Set the limit higher"). They are compiled on first
// use, so that a program that never extracts SQL from prose does not
// pay for them at start-up.
var otherShapes = sync.OnceValue(func() map[string]*regexp.Regexp {
	shapes := map[string]*regexp.Regexp{}
	for verbs, pattern := range map[string]string{
		"insert":                         `insert (?:or W |ignore |low_priority |delayed |high_priority )*(?:into|overwrite) `,
		"replace upsert merge":           `W into `,
		"update":                         `update (?:or W |only |low_priority |ignore )*N (?:(?:as )?(?:W|'|") )?set `,
		"delete":                         `delete (?:low_priority |quick |ignore )*(?:N (?:, N )*)?from `,
		"create drop alter":              `W (?:{modifiers} )*(?:{objects} )+(?:if |not |exists |concurrently |only )*N (?:;|\(|,|as|on|cascade|restrict|to|add|rename|set|owner|using|from|for|with|after|before|instead|drop|alter|select|version|schema|authorization) `,
		"truncate":                       `truncate (?:table |only )*N (?:;|,|cascade|restrict|restart|continue) `,
		"grant revoke":                   `W (?:grant option for )?W (?:{privileges} )*(?:\( [^;]*?\) )?(?:, W (?:{privileges} )*(?:\( [^;]*?\) )?)*(?:on |(?:to|from) (?:public|'|N) (?:;|,|with|granted|cascade|restrict) )`,
		"copy":                           `copy (?:\( |N (?:\( [^;]*?\) )?(?:from|to) )`,
		"attach":                         `attach (?:database )?(?:'|W|"|\?) as `,
		"detach":                         `detach (?:database )?N ;`,
		"pragma":                         `pragma N (?:;|=|\() `,
		"vacuum":                         `vacuum (?:(?:full|freeze|verbose|analyze|analyse) |\( [^;]*?\) )*(?:;|into |N (?:;|into) )`,
		"reindex analyze analyse":        `W (?:verbose |table |index |schema |database |system |concurrently )*(?:N )?;`,
		"begin":                          `begin (?:;|transaction|work|deferred|immediate|exclusive|isolation|read) `,
		"start":                          `start transaction `,
		"commit end rollback abort":      `(?:W (?:;|transaction|work|and|prepared) |(?:rollback|abort) to (?:savepoint )?N ;)`,
		"savepoint":                      `savepoint N ;`,
		"release":                        `release (?:savepoint )?N ;`,
		"set":                            `set (?:(?:role|transaction|names|constraints|session) [^=]|(?:local |global |persist |persist_only )*(?:\?|N) (?:=|to|:=|: =) )`,
		"reset":                          `reset (?:all|N) ;`,
		"lock":                           `lock tables? `,
		"unlock":                         `unlock tables `,
		"call":                           `call N \( `,
		"exec execute":                   `W N (?:;|\(|\?|'|9) `,
		"do":                             `do ' `,
		"load":                           `load (?:'|data|extension) `,
		"show":                           `show (?:(?:tables|databases|columns|fields|create|variables|status|grants|index|indexes|keys|processlist|full|global|session|engine|engines|warnings|errors|triggers|schemas|search_path|all|table|open|plugins|privileges|procedure|function|events|character|collation|master|slave|replica|binary) |N ;)`,
		"describe desc use table":        `W N ;`,
		"comment":                        `comment on `,
		"refresh":                        `refresh materialized `,
		"prepare":                        `prepare N (?:as|from|\() `,
		"deallocate":                     `deallocate (?:prepare )?(?:all|N) ;`,
		"declare":                        `declare (?:\?|N (?:cursor|scroll|binary|insensitive|asensitive|no) )`,
		"listen unlisten notify":         `W (?:\*|N) (?:;|,) `,
		"checkpoint":                     `checkpoint ;`,
		"discard":                        `discard (?:all|plans|sequences|temp|temporary) ;`,
		"cluster":                        `cluster (?:verbose )?(?:;|N (?:;|using|on) )`,
		"rename":                         `rename (?:table|user) `,
		"kill":                           `kill (?:query |connection )?9 `,
		"flush":                          `flush (?:tables|table|privileges|logs|hosts|status|binary|engine|error|general|relay|slow|query|user_resources|optimizer_costs) `,
		"install uninstall":              `W (?:plugin |component |W ;)`,
		"handler":                        `handler N (?:open|read|close) `,
		"optimize repair check checksum": `W tables? W `,
		"security":                       `security label `,
		"reassign":                       `reassign owned `,
		"import export":                  `W (?:foreign|database) `,
	} {
		re := shapeRE(pattern)
		for _, v := range strings.Fields(verbs) {
			shapes[v] = re
		}
	}
	return shapes
})

// mayStart is a cheap filter before lexing: false when s cannot start
// with a statement because its first word is no statement's.
func mayStart(s string) bool {
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n' || s[i] == '\f' || s[i] == '\v') {
		i++
	}
	if i == len(s) {
		return false
	}
	if c := s[i]; c == '(' || c == '-' || c == '/' {
		return true
	}
	j := i
	for j < len(s) && (s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z' || s[j] == '_') {
		j++
	}
	w := strings.ToLower(s[i:j])
	return w == "select" || w == "with" || w == "values" || w == "explain" || otherShapes()[w] != nil
}

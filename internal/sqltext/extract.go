package sqltext

import "strings"

// This file finds SQL in the free text a language model returns when it
// does not answer in JSON: fenced code blocks, "SQLQuery:"-style labels,
// bare statements between lines of prose, inline code. Everything is
// decided on tokens of the lexer, never by keyword regexes, so a keyword
// inside a literal, a quoted identifier or a comment means nothing and a
// statement is never cut at WITH ROLLUP, WITHIN GROUP or a second CTE.

// Extract returns the SQL in a model's free-text answer, without code
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
func Extract(text string) (sql string, ok bool) {
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
func clean(s string) string { return StripTrailing(strings.TrimSpace(s)) }

// Fence is a fenced code block of Markdown text.
type Fence struct {
	Lang    string // the info string's first word, lower-cased; "" when untagged
	Content string // the text between the opening and the closing fence
	Start   int    // byte offset of the opening fence
	End     int    // byte offset just after the closing fence (or the end of the text)
	Closed  bool   // false when the text ended inside the block
}

// Fences returns the fenced code blocks of text, in order. A fence is a run
// of three or more backticks or tildes; it is closed by a run of at least
// as many of the same character. Models do not always follow Markdown, so
// a fence may open anywhere on a line and a block may sit on one line
// ("```sql SELECT 1```"); an unclosed block runs to the end of the text.
func Fences(text string) []Fence {
	var out []Fence
	pos := 0
	for pos < len(text) {
		start, n, c := nextFence(text, pos)
		if start < 0 {
			break
		}
		f := Fence{Start: start}
		body := start + n // just after the opening run
		eol := strings.IndexByte(text[body:], '\n')
		line := text[body:]
		if eol >= 0 {
			line = text[body : body+eol]
		}
		contentStart := body
		if cs, cn := runOf(line, c, n); cs >= 0 {
			// One-line block: ```sql SELECT 1```.
			inner := line[:cs]
			word, rest := firstWord(inner)
			if isLangTag(word) && strings.TrimSpace(rest) != "" && !StartsStatement(inner) {
				f.Lang, inner = strings.ToLower(word), rest
			}
			f.Content, f.End, f.Closed = inner, body+cs+cn, true
			out = append(out, f)
			pos = f.End
			continue
		}
		if word, rest := firstWord(line); isLangTag(word) && strings.TrimSpace(rest) == "" {
			f.Lang = strings.ToLower(word)
			contentStart = body + len(line)
		} else if strings.TrimSpace(line) == "" {
			contentStart = body + len(line)
		}
		if contentStart < len(text) && text[contentStart] == '\n' {
			contentStart++
		}
		cs, cn := runOf(text[contentStart:], c, n)
		if cs < 0 {
			f.Content, f.End = text[contentStart:], len(text)
		} else {
			f.Content, f.End, f.Closed = text[contentStart:contentStart+cs], contentStart+cs+cn, true
		}
		out = append(out, f)
		pos = f.End
	}
	return out
}

// nextFence finds the next run of at least three backticks or tildes at or
// after pos: its offset, length and character; start is -1 when none.
func nextFence(text string, pos int) (start, n int, c byte) {
	for i := pos; i < len(text); i++ {
		if text[i] != '`' && text[i] != '~' {
			continue
		}
		j := i
		for j < len(text) && text[j] == text[i] {
			j++
		}
		if j-i >= 3 {
			return i, j - i, text[i]
		}
		i = j - 1
	}
	return -1, 0, 0
}

// runOf finds the first run of at least n characters c in s: its offset
// and length, or -1.
func runOf(s string, c byte, n int) (int, int) {
	for i := 0; i < len(s); i++ {
		if s[i] != c {
			continue
		}
		j := i
		for j < len(s) && s[j] == c {
			j++
		}
		if j-i >= n {
			return i, j - i
		}
		i = j - 1
	}
	return -1, 0
}

// firstWord splits s into its first white-space-delimited word and the rest.
func firstWord(s string) (word, rest string) {
	s = strings.TrimLeft(s, " \t\r")
	i := strings.IndexAny(s, " \t\r\n")
	if i < 0 {
		return s, ""
	}
	return s[:i], s[i:]
}

// isLangTag reports whether w looks like a code block's language tag.
func isLangTag(w string) bool {
	if w == "" || len(w) > 20 {
		return false
	}
	for i := 0; i < len(w); i++ {
		c := w[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '+' || c == '.' || c == '#') {
			return false
		}
	}
	return true
}

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

// window is how many bytes of a statement are lexed at first; statementEnd
// doubles it while the statement runs on, so its cost stays linear in the
// statement's length (startsAt uses bounded windows around it).
const window = 2048

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
		if c := strings.IndexByte(line, ':'); c > 0 && c <= 80 && isLabel(line[:c]) {
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

// listMarker returns the length of a Markdown list marker and the spaces
// after it at the start of line ("- ", "* ", "1. ", "2) "), or 0.
func listMarker(line string) int {
	i := 0
	switch {
	case strings.HasPrefix(line, "- ") || strings.HasPrefix(line, "* ") || strings.HasPrefix(line, "+ "):
		i = 2
	default:
		for i < len(line) && i < 3 && line[i] >= '0' && line[i] <= '9' {
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
	return words > 0 && words <= 12
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

// lexFrom lexes s[off:off+size] (or to the end) and reports whether it
// reached the end of s.
func lexFrom(s string, off, size int) ([]Token, bool) {
	end := off + size
	if end >= len(s) {
		return Lex(s[off:]), true
	}
	return Lex(s[off:end]), false
}

// StartsStatement reports whether s, after white space and comments, starts
// with an SQL statement: a query (SELECT, WITH … AS (, VALUES (, or a
// parenthesised query) or another statement (INSERT INTO, UPDATE … SET,
// DELETE FROM, CREATE TABLE, DROP, ALTER, COPY, ATTACH, PRAGMA, VACUUM,
// transaction control, SET, EXPLAIN …). Its shape is checked, not just its
// first word, so prose that opens with an English word that is also a
// keyword ("With the students table you can…", "Select the rows you
// need", "Update: …", "Drop me a line") is not a statement.
func StartsStatement(s string) bool {
	return startsAt(s, 0)
}

// statementEnd returns the end offset in s of the statement starting at
// s[off:]: the end of its last significant token before a top-level
// semicolon that no statement follows, a line that cannot continue it, or
// the end of s.
func statementEnd(s string, off int) int {
	for size := window; ; size *= 2 {
		toks, all := lexFrom(s, off, size)
		end, decided := scanEnd(toks, true)
		if decided || all {
			return off + end
		}
	}
}

// scanEnd finds where the statement at the start of toks ends: the end
// offset of its last significant token. With more, statements that follow
// a top-level semicolon are taken in too. decided is false when the scan
// ran to the last token, so the caller may lex further.
func scanEnd(toks []Token, more bool) (end int, decided bool) {
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
		case t.Kind == Punct && t.Text == "(":
			depth++
		case t.Kind == Punct && t.Text == ")":
			depth--
			if depth < 0 { // a parenthesis of the surrounding prose
				return endOf(lastSig), true
			}
		case t.Kind == Punct && t.Text == ";" && depth == 0:
			if !more {
				return endOf(lastSig), true
			}
			rest := toks[i+1 : min(len(toks), i+1+maxLookahead)]
			if len(Significant(rest)) == 0 {
				return endOf(lastSig), false // maybe more beyond the lexed window
			}
			if ok, _, _ := stmtOK(rest); !ok {
				return endOf(lastSig), true
			}
		case t.Kind == Space && depth <= 0 && strings.Contains(t.Text, "\n") && lastSig >= 0:
			j := i + 1
			for j < len(toks) && toks[j].Trivia() {
				j++
			}
			if j == len(toks) {
				continue
			}
			if !continues(toks[lastSig], Significant(toks[j:]), strings.Count(t.Text, "\n") > 1) {
				return endOf(lastSig), true
			}
		}
		if !t.Trivia() && !(t.Kind == Punct && t.Text == ";") {
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

// continues reports whether the line starting with next carries on the
// statement whose last token is prev. After a blank line only a clause
// keyword or an unfinished line carries on.
func continues(prev Token, next []Token, blank bool) bool {
	if len(next) == 0 {
		return true
	}
	if needsMore(prev) {
		return true
	}
	n := next[0]
	w := strings.ToLower(n.Text)
	switch {
	case n.Kind == Word && (w == "select" || w == "values"):
		// The main query after a CTE list: "…)\nSELECT".
		return prev.Kind == Punct && prev.Text == ")"
	case n.Kind == Word && w == "with":
		// GROUP BY … WITH ROLLUP, FETCH … WITH TIES, WITH ORDINALITY, WITH CHECK OPTION.
		if len(next) > 1 {
			w2 := strings.ToLower(next[1].Text)
			return w2 == "rollup" || w2 == "ties" || w2 == "ordinality" || w2 == "check" || w2 == "cube" || w2 == "totals"
		}
		return false
	case n.Kind == Word && lineStartContinues[w]:
		if blank {
			return blankContinues[w]
		}
		return true
	case n.Kind == Punct && lineStartOps[n.Text]:
		return !blank
	}
	return false
}

// blankContinues are the clause keywords that carry a statement on across
// a blank line.
var blankContinues = set(`from where group order having limit offset union intersect except join inner left right full
	cross natural window fetch qualify`)

// needsMore reports whether a statement cannot end at t.
func needsMore(t Token) bool {
	switch t.Kind {
	case Word:
		return lineEndNeedsMore[strings.ToLower(t.Text)]
	case Punct:
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

// startsAt reports whether a statement starts at s[off:], after white
// space and comments. It lexes a window first, a larger one when the check
// ran out of tokens there, and gives a statement whose first clause is
// still open at the end of that the benefit of the doubt (so the cost per
// candidate stays bounded).
func startsAt(s string, off int) bool {
	if !mayStart(s[off:]) {
		return false
	}
	for _, size := range []int{256, window, 32 * window} {
		toks, all := lexFrom(s, off, size)
		ok, hitEnd, decided := stmtOK(toks)
		if ok {
			return true
		}
		if all || decided || !hitEnd {
			return false
		}
	}
	return true
}

// stmtOK reports whether toks start with a statement, checking only the
// tokens up to where the statement ends (see scanEnd), so the prose after
// it cannot pass for an alias or a clause. hitEnd says the check ran out of
// tokens; decided that the end was found before the last token.
func stmtOK(toks []Token) (ok, hitEnd, decided bool) {
	end, decided := scanEnd(toks, false)
	n := 0
	for n < len(toks) && toks[n].Pos < end {
		n++
	}
	p := &shape{t: Significant(toks[:n])}
	return p.statement(), p.hitEnd, decided
}

// shape is a small recursive-descent check of how a statement begins. It
// is not an SQL parser: it decides whether tokens are shaped like a
// statement rather than like prose, looking at the first clause (and, for
// a query, the select list and the first table of FROM).
type shape struct {
	t      []Token // significant tokens
	i      int
	nest   int  // recursion depth, bounded
	hitEnd bool // a check failed because the tokens ran out
}

func (p *shape) tok(k int) Token {
	if p.i+k < len(p.t) {
		return p.t[p.i+k]
	}
	return Token{Kind: Space}
}

func (p *shape) eof(k int) bool {
	if p.i+k >= len(p.t) {
		p.hitEnd = true
		return true
	}
	return false
}

// word returns the k-th token ahead lower-cased when it is a word, else "".
func (p *shape) word(k int) string {
	if t := p.tok(k); t.Kind == Word {
		return strings.ToLower(t.Text)
	}
	return ""
}

func (p *shape) isWord(k int, words ...string) bool {
	w := p.word(k)
	if w == "" {
		return false
	}
	for _, x := range words {
		if w == x {
			return true
		}
	}
	return false
}

func (p *shape) punct(k int, s string) bool {
	t := p.tok(k)
	return t.Kind == Punct && t.Text == s
}

// atEnd reports whether the statement may end k tokens ahead: the tokens
// run out or a semicolon follows.
func (p *shape) atEnd(k int) bool { return p.eof(k) || p.punct(k, ";") }

// ident reports whether the k-th token ahead can be an identifier.
func (p *shape) ident(k int) bool {
	t := p.tok(k)
	switch t.Kind {
	case QuotedIdent:
		return true
	case Word:
		return !reserved[strings.ToLower(t.Text)]
	}
	return false
}

// qname consumes a possibly qualified name: a.b.c.
func (p *shape) qname() bool {
	if !p.ident(0) {
		p.eof(0)
		return false
	}
	p.i++
	for p.punct(0, ".") {
		if !p.ident(1) {
			p.eof(1)
			return false
		}
		p.i += 2
	}
	return true
}

// parens consumes a balanced parenthesis group opening at the current token.
func (p *shape) parens() bool {
	depth := 0
	for !p.eof(0) {
		t := p.tok(0)
		p.i++
		if t.Kind != Punct {
			continue
		}
		switch t.Text {
		case "(":
			depth++
		case ")":
			depth--
			if depth == 0 {
				return true
			}
		}
	}
	return false
}

// reserved are words that cannot be a bare identifier or an alias in the
// places shape checks.
var reserved = set(`select from where group order having limit offset union intersect except into on join inner left
	right full outer cross natural using as and or not is in like ilike glob regexp between by case when then else end
	with window fetch for distinct all asc desc top qualify returning escape collate over partition filter within
	exists values set table insert update delete create drop alter lateral straight_join tablesample`)

// reservedCallable are reserved words that are also functions: left(s, 3).
var reservedCallable = set(`left right replace insert values exists any all some`)

// literalWords are words that are a complete operand.
var literalWords = set(`null true false current_date current_time current_timestamp localtime localtimestamp
	current_user session_user current_role current_catalog current_schema`)

// typedLiteral are words that prefix a string to make a typed literal.
var typedLiteral = set(`interval date time timestamp timestamptz datetime`)

// objectWords are the kinds of object CREATE, DROP and ALTER act on.
var objectWords = set(`table view index trigger schema database function procedure sequence extension role user type
	domain policy rule aggregate cast collation server publication subscription event tablespace statistics operator
	language conversion materialized temporary temp virtual unique owned group foreign text access default transform
	routine macro secret unlogged system`)

// createModifiers may come between CREATE and the object kind.
var createModifiers = set(`or replace temp temporary unique materialized virtual global local unlogged recursive
	external trusted procedural constraint if not exists definer algorithm sql security`)

// afterSelectList are the words that may follow a select list.
var afterSelectList = set(`where group order having limit offset union intersect except into window fetch for qualify`)

// afterTable are the words that may follow a table of a FROM clause.
var afterTable = set(`where group order having limit offset union intersect except join inner left right full cross
	natural outer on using window fetch for qualify tablesample indexed not straight_join lateral returning pivot
	unpivot`)

// maxStatementNest and maxExprNest bound the recursion of the shape check
// (statements inside statements; expressions inside expressions), so
// hostile text cannot exhaust the stack. The check needs only the start of
// a statement to tell SQL from prose: past these depths it stops following
// the nesting, and a query nested deeper is still extracted whole
// (TestExtractDeeplyNested, 40 levels).
const (
	maxStatementNest = 8
	maxExprNest      = 32
)

// statement checks the start of a statement.
func (p *shape) statement() bool {
	if p.nest > maxStatementNest {
		return false
	}
	p.nest++
	defer func() { p.nest-- }()
	open := 0
	for p.punct(0, "(") {
		p.i++
		open++
	}
	w := p.word(0)
	if open > 0 && w != "select" && w != "with" && w != "values" {
		return false
	}
	switch w {
	case "select":
		return p.selectStmt()
	case "with":
		return p.withStmt()
	case "values":
		return p.punct(1, "(")
	case "insert":
		p.i++
		for p.isWord(0, "or", "ignore", "low_priority", "delayed", "high_priority") {
			if p.isWord(0, "or") {
				p.i++
			}
			p.i++
		}
		return p.isWord(0, "into", "overwrite")
	case "replace", "upsert", "merge":
		return p.isWord(1, "into")
	case "update":
		p.i++
		for p.isWord(0, "or", "only", "low_priority", "ignore") {
			if p.isWord(0, "or") {
				p.i++
			}
			p.i++
		}
		if !p.qname() {
			return false
		}
		p.alias()
		return p.isWord(0, "set")
	case "delete":
		p.i++
		for p.isWord(0, "low_priority", "quick", "ignore") {
			p.i++
		}
		if p.isWord(0, "from") {
			return true
		}
		for p.qname() { // MySQL: DELETE t1, t2 FROM …
			if !p.punct(0, ",") {
				break
			}
			p.i++
		}
		return p.isWord(0, "from")
	case "create", "drop", "alter":
		p.i++
		for createModifiers[p.word(0)] && !objectWords[p.word(0)] {
			p.i++
		}
		if !objectWords[p.word(0)] {
			return false
		}
		for objectWords[p.word(0)] {
			p.i++
		}
		for p.isWord(0, "if", "not", "exists", "concurrently", "only") {
			p.i++
		}
		if p.atEnd(0) {
			return false
		}
		return p.qname() && (p.atEnd(0) || p.punct(0, "(") || p.punct(0, ",") ||
			p.isWord(0, "as", "on", "cascade", "restrict", "to", "add", "rename", "set", "owner", "using", "from",
				"for", "with", "after", "before", "instead", "drop", "alter", "select", "version", "schema", "authorization"))
	case "truncate":
		p.i++
		for p.isWord(0, "table", "only") {
			p.i++
		}
		return p.qname() && (p.atEnd(0) || p.punct(0, ",") || p.isWord(0, "cascade", "restrict", "restart", "continue"))
	case "grant", "revoke":
		p.i++
		if p.isWord(0, "grant") && p.isWord(1, "option") { // REVOKE GRANT OPTION FOR
			p.i += 3
		}
		// privilege [(columns)] [privilege words…], … ON … | role, … TO|FROM grantee
		for {
			if !p.isWord(0, "all", "select", "insert", "update", "delete", "usage", "execute", "create", "connect",
				"temporary", "temp", "references", "trigger", "truncate", "maintain", "alter", "drop", "index", "file",
				"process", "reload", "shutdown", "super", "event", "lock", "show", "replication") && !p.ident(0) {
				p.eof(0)
				return false
			}
			p.i++
			for p.isWord(0, "privileges", "tables", "view", "routine", "client", "slave", "databases", "user", "role") {
				p.i++
			}
			if p.punct(0, "(") && !p.parens() {
				return false
			}
			if !p.punct(0, ",") {
				break
			}
			p.i++
		}
		if p.isWord(0, "on") {
			return true
		}
		if !p.isWord(0, "to", "from") {
			p.eof(0)
			return false
		}
		p.i++
		if p.isWord(0, "public") || p.tok(0).Kind == String {
			p.i++
		} else if !p.qname() {
			return false
		}
		return p.atEnd(0) || p.punct(0, ",") || p.isWord(0, "with", "granted", "cascade", "restrict")
	case "copy":
		p.i++
		if p.punct(0, "(") {
			return true
		}
		if !p.qname() {
			return false
		}
		if p.punct(0, "(") && !p.parens() {
			return false
		}
		return p.isWord(0, "from", "to")
	case "attach":
		p.i++
		if p.isWord(0, "database") {
			p.i++
		}
		if k := p.tok(0).Kind; k != String && k != Word && k != QuotedIdent && k != Param {
			p.eof(0)
			return false
		}
		p.i++
		return p.isWord(0, "as")
	case "detach":
		p.i++
		if p.isWord(0, "database") {
			p.i++
		}
		return p.qname() && p.atEnd(0)
	case "pragma":
		p.i++
		return p.qname() && (p.atEnd(0) || p.punct(0, "=") || p.punct(0, "("))
	case "vacuum":
		p.i++
		for p.isWord(0, "full", "freeze", "verbose", "analyze", "analyse") || p.punct(0, "(") {
			if p.punct(0, "(") {
				if !p.parens() {
					return false
				}
				continue
			}
			p.i++
		}
		if p.isWord(0, "into") {
			return true
		}
		if p.atEnd(0) {
			return true
		}
		return p.qname() && (p.atEnd(0) || p.isWord(0, "into"))
	case "reindex", "analyze", "analyse":
		p.i++
		for p.isWord(0, "verbose", "table", "index", "schema", "database", "system", "concurrently") {
			p.i++
		}
		return p.atEnd(0) || (p.qname() && p.atEnd(0))
	case "begin":
		return p.atEnd(1) || p.isWord(1, "transaction", "work", "deferred", "immediate", "exclusive", "isolation", "read")
	case "start":
		return p.isWord(1, "transaction")
	case "commit", "end", "rollback", "abort":
		if p.isWord(1, "to") && (w == "rollback" || w == "abort") {
			p.i += 2
			if p.isWord(0, "savepoint") {
				p.i++
			}
			return p.qname() && p.atEnd(0)
		}
		return p.atEnd(1) || p.isWord(1, "transaction", "work", "and", "prepared")
	case "savepoint":
		p.i++
		return p.qname() && p.atEnd(0)
	case "release":
		p.i++
		if p.isWord(0, "savepoint") {
			p.i++
		}
		return p.qname() && p.atEnd(0)
	case "set":
		p.i++
		if p.isWord(0, "role", "transaction", "names", "constraints", "session") && !p.punct(1, "=") {
			return true
		}
		for p.isWord(0, "local", "global", "persist", "persist_only") {
			p.i++
		}
		if p.tok(0).Kind == Param {
			p.i++
		} else if !p.qname() {
			return false
		}
		return p.punct(0, "=") || p.isWord(0, "to") || (p.punct(0, ":") && p.punct(1, "="))
	case "reset":
		p.i++
		return (p.isWord(0, "all") || p.qname()) && p.atEnd(0)
	case "lock":
		return p.isWord(1, "table", "tables")
	case "unlock":
		return p.isWord(1, "tables")
	case "call":
		p.i++
		return p.qname() && p.punct(0, "(")
	case "exec", "execute":
		p.i++
		if !p.qname() {
			return false
		}
		k := p.tok(0).Kind
		return p.atEnd(0) || p.punct(0, "(") || (!p.eof(0) && (k == Param || k == String || k == Number))
	case "do":
		return p.tok(1).Kind == String
	case "load":
		return p.tok(1).Kind == String || p.isWord(1, "data", "extension")
	case "show":
		p.i++
		if p.isWord(0, "tables", "databases", "columns", "fields", "create", "variables", "status", "grants", "index",
			"indexes", "keys", "processlist", "full", "global", "session", "engine", "engines", "warnings", "errors",
			"triggers", "schemas", "search_path", "all", "table", "open", "plugins", "privileges", "procedure",
			"function", "events", "character", "collation", "master", "slave", "replica", "binary") {
			return true
		}
		return p.qname() && p.atEnd(0)
	case "explain":
		p.i++
		for {
			switch {
			case p.isWord(0, "query", "plan", "analyze", "analyse", "verbose", "extended", "partitions"):
				p.i++
			case p.isWord(0, "format") && p.punct(1, "="):
				p.i += 3
			case p.punct(0, "("):
				if !p.parens() {
					return false
				}
			default:
				return p.statement()
			}
		}
	case "describe", "desc":
		p.i++
		return p.qname() && p.atEnd(0)
	case "use":
		p.i++
		return p.qname() && p.atEnd(0)
	case "table":
		p.i++
		return p.qname() && p.atEnd(0)
	case "comment":
		return p.isWord(1, "on")
	case "refresh":
		return p.isWord(1, "materialized")
	case "prepare":
		p.i++
		return p.qname() && (p.isWord(0, "as", "from") || p.punct(0, "("))
	case "deallocate":
		p.i++
		if p.isWord(0, "prepare") {
			p.i++
		}
		return (p.isWord(0, "all") || p.qname()) && p.atEnd(0)
	case "declare":
		if p.tok(1).Kind == Param {
			return true
		}
		p.i++
		return p.qname() && p.isWord(0, "cursor", "scroll", "binary", "insensitive", "asensitive", "no")
	case "listen", "unlisten", "notify":
		p.i++
		return (p.punct(0, "*") || p.qname()) && (p.atEnd(0) || p.punct(0, ","))
	case "checkpoint":
		return p.atEnd(1)
	case "discard":
		return p.isWord(1, "all", "plans", "sequences", "temp", "temporary") && p.atEnd(2)
	case "cluster":
		p.i++
		if p.isWord(0, "verbose") {
			p.i++
		}
		if p.atEnd(0) {
			return true
		}
		return p.qname() && (p.atEnd(0) || p.isWord(0, "using", "on"))
	case "rename":
		return p.isWord(1, "table", "user")
	case "kill":
		p.i++
		if p.isWord(0, "query", "connection") {
			p.i++
		}
		return p.tok(0).Kind == Number
	case "flush":
		return p.isWord(1, "tables", "table", "privileges", "logs", "hosts", "status", "binary", "engine", "error",
			"general", "relay", "slow", "query", "user_resources", "optimizer_costs")
	case "install", "uninstall":
		return p.isWord(1, "plugin", "component") || (p.ident(1) && p.atEnd(2))
	case "handler":
		p.i++
		return p.qname() && p.isWord(0, "open", "read", "close")
	case "optimize", "repair", "check", "checksum":
		return p.isWord(1, "table", "tables") && p.ident(2)
	case "security":
		return p.isWord(1, "label")
	case "reassign":
		return p.isWord(1, "owned")
	case "import", "export":
		return p.isWord(1, "foreign", "database")
	}
	p.eof(0)
	return false
}

// withStmt checks WITH [RECURSIVE] name [(columns)] AS [[NOT] MATERIALIZED] (.
func (p *shape) withStmt() bool {
	p.i++
	if p.isWord(0, "recursive") {
		p.i++
	}
	if !p.ident(0) {
		p.eof(0)
		return false
	}
	p.i++
	if p.punct(0, "(") && !p.parens() {
		return false
	}
	if !p.isWord(0, "as") {
		p.eof(0)
		return false
	}
	p.i++
	for p.isWord(0, "not", "materialized") {
		p.i++
	}
	if p.eof(0) {
		return false
	}
	return p.punct(0, "(")
}

// selectStmt checks SELECT [modifiers] item [[AS] alias], … followed by the
// end, a clause keyword, or FROM and a table.
func (p *shape) selectStmt() bool {
	p.i++
	for {
		switch {
		case p.isWord(0, "distinct"):
			p.i++
			if p.isWord(0, "on") && p.punct(1, "(") {
				p.i++
				if !p.parens() {
					return false
				}
			}
			continue
		case p.isWord(0, "all", "distinctrow", "sql_calc_found_rows", "sql_no_cache", "sql_cache", "high_priority",
			"straight_join", "sql_small_result", "sql_big_result", "sql_buffer_result"):
			p.i++
			continue
		case p.isWord(0, "top") && (p.tok(1).Kind == Number || p.punct(1, "(")):
			p.i++
			if p.punct(0, "(") {
				if !p.parens() {
					return false
				}
			} else {
				p.i++
			}
			if p.isWord(0, "percent") {
				p.i++
			}
			if p.isWord(0, "with") && p.isWord(1, "ties") {
				p.i += 2
			}
			continue
		}
		break
	}
	for {
		if p.eof(0) {
			return false
		}
		if p.punct(0, "*") {
			p.i++
		} else if !p.expr() {
			return false
		}
		if p.isWord(0, "as") {
			p.i++
			if k := p.tok(0).Kind; !p.ident(0) && k != String {
				p.eof(0)
				return false
			}
			p.i++
		} else {
			p.alias()
		}
		if p.punct(0, ",") {
			p.i++
			continue
		}
		break
	}
	if p.atEnd(0) || p.punct(0, ")") {
		return true
	}
	if p.isWord(0, "from") {
		p.i++
		return p.fromItem()
	}
	return afterSelectList[p.word(0)]
}

// alias consumes an optional alias (an identifier or, as MySQL allows, a
// string) after an expression or table.
func (p *shape) alias() {
	if p.isWord(0, "as") {
		p.i++
	}
	t := p.tok(0)
	if (p.ident(0) && !(t.Kind == QuotedIdent && t.Text[0] == '[')) || t.Kind == String {
		p.i++
	}
}

// fromItem checks the first table of a FROM clause and what follows it.
func (p *shape) fromItem() bool {
	if p.punct(0, "(") {
		return true
	}
	if p.isWord(0, "lateral", "only") {
		p.i++
	}
	if !p.qname() {
		return false
	}
	if p.punct(0, "(") { // a table-valued function
		return true
	}
	p.alias()
	if p.punct(0, "(") && !p.parens() { // column aliases
		return false
	}
	return p.atEnd(0) || p.punct(0, ",") || p.punct(0, ")") || afterTable[p.word(0)]
}

// binaryPunct are the binary operators written with punctuation.
var binaryPunct = set(`+ - * / % || = == != <> < > <= >= & | << >> -> ->> #> #>> @> <@ ~ ~* !~ !~* && ^ <=> ?| ?& @@ @?`)

// binaryWords are the binary operators written as words.
var binaryWords = set(`and or xor like ilike glob regexp rlike match div mod escape overlaps in between`)

// expr consumes an expression: operands joined by binary operators.
func (p *shape) expr() bool {
	if p.nest > maxExprNest {
		return false
	}
	p.nest++
	defer func() { p.nest-- }()
	for {
		if !p.operand() {
			return false
		}
		if !p.binary() {
			return true
		}
	}
}

// binary consumes a binary operator, if one comes next.
func (p *shape) binary() bool {
	t := p.tok(0)
	switch t.Kind {
	case Punct:
		if binaryPunct[t.Text] {
			p.i++
			return true
		}
	case Word:
		w := strings.ToLower(t.Text)
		switch {
		case binaryWords[w]:
			p.i++
			return true
		case w == "similar" && p.isWord(1, "to"):
			p.i += 2
			return true
		case w == "is":
			p.i++
			if p.isWord(0, "not") {
				p.i++
			}
			if p.isWord(0, "distinct") && p.isWord(1, "from") {
				p.i += 2
			}
			return true
		case w == "not" && p.isWord(1, "in", "like", "ilike", "glob", "regexp", "rlike", "match", "between", "similar"):
			p.i += 2
			if p.isWord(0, "to") {
				p.i++
			}
			return true
		}
	}
	return false
}

// operand consumes one operand with its prefix and postfix operators.
func (p *shape) operand() bool {
	for p.punct(0, "-") || p.punct(0, "+") || p.punct(0, "~") || p.punct(0, "!") || p.isWord(0, "not") {
		p.i++
	}
	if p.eof(0) {
		return false
	}
	t := p.tok(0)
	switch t.Kind {
	case Number, String, Param:
		p.i++
	case QuotedIdent:
		p.i++
		p.nameTail()
	case Word:
		w := strings.ToLower(t.Text)
		switch {
		case literalWords[w]:
			p.i++
		case w == "case":
			if !p.caseExpr() {
				return false
			}
		case typedLiteral[w] && p.tok(1).Kind == String:
			p.i += 2
		case reserved[w] && !(reservedCallable[w] && p.punct(1, "(")):
			return false
		default:
			p.i++
			p.nameTail()
		}
	case Punct:
		if t.Text != "(" || !p.parens() {
			return false
		}
	default:
		return false
	}
	// Postfix operators.
	for {
		switch {
		case p.punct(0, "::"):
			p.i++
			if !p.ident(0) {
				p.eof(0)
				return false
			}
			p.i++
			if p.punct(0, "(") && !p.parens() {
				return false
			}
		case p.isWord(0, "isnull", "notnull"):
			p.i++
		case p.isWord(0, "collate") && (p.ident(1) || p.tok(1).Kind == String):
			p.i += 2
		case p.tok(0).Kind == QuotedIdent && p.tok(0).Text[0] == '[': // a subscript, a[1]
			p.i++
		default:
			return true
		}
	}
}

// nameTail consumes what may follow a name: .qualifiers, a call's
// arguments, FILTER (…), WITHIN GROUP (…), OVER (…).
func (p *shape) nameTail() {
	for p.punct(0, ".") && (p.ident(1) || p.punct(1, "*")) {
		p.i += 2
	}
	if !p.punct(0, "(") {
		return
	}
	if !p.parens() {
		return
	}
	if p.isWord(0, "filter") && p.punct(1, "(") {
		p.i++
		p.parens()
	}
	if p.isWord(0, "within") && p.isWord(1, "group") && p.punct(2, "(") {
		p.i += 2
		p.parens()
	}
	if p.isWord(0, "over") {
		p.i++
		if p.punct(0, "(") {
			p.parens()
		} else if p.ident(0) {
			p.i++
		}
	}
}

// caseExpr consumes CASE … END, nesting included.
func (p *shape) caseExpr() bool {
	depth := 0
	for !p.eof(0) {
		switch p.word(0) {
		case "case":
			depth++
		case "end":
			depth--
			if depth == 0 {
				p.i++
				return true
			}
		}
		p.i++
	}
	return false
}

// firstWords are the words statement checks a statement may begin with.
var firstWords = set(`select with values insert replace upsert merge update delete create drop alter truncate grant
	revoke copy attach detach pragma vacuum reindex analyze analyse begin start commit end rollback abort savepoint
	release set reset lock unlock call exec execute do load show explain describe desc use table comment refresh
	prepare deallocate declare listen unlisten notify checkpoint discard cluster rename kill flush install uninstall
	handler optimize repair check checksum security reassign import export`)

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
	for j < len(s) && j-i <= 12 && (s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z' || s[j] == '_') {
		j++
	}
	return firstWords[strings.ToLower(s[i:j])]
}

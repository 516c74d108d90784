package sqltext

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestStatements(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"SELECT 1", []string{"SELECT 1"}},
		{"SELECT 1; -- trailing comment", []string{"SELECT 1"}},
		{"SELECT ';' AS x;", []string{"SELECT ';' AS x"}},
		{`SELECT "a;b" FROM t /* ; */`, []string{`SELECT "a;b" FROM t /* ; */`}},
		{"SELECT 1; DROP TABLE employees; SELECT 2;", []string{"SELECT 1", "DROP TABLE employees", "SELECT 2"}},
		{"  ;; \n", nil},
		{"SELECT $$a;b$$", []string{"SELECT $$a;b$$"}},
		{"SELECT 'it''s;'", []string{"SELECT 'it''s;'"}},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, Statements(c.in), "Statements(%q)", c.in)
	}
}

func TestLexRoundTrip(t *testing.T) {
	for _, s := range []string{"SELECT \"a\"\"b\", `c`, [d e] FROM t WHERE x::int >= $1 AND y = E'\\'' -- c\n/* /* n */ */", "unterminated 'abc", "é ü ∑"} {
		var b strings.Builder
		for _, tok := range Lex(s) {
			b.WriteString(tok.Text)
		}
		assert.Equal(t, s, b.String(), "round trip of %q", s)
	}
}

// LexPostgres cuts operators as PostgreSQL's lexer does, and reads
// brackets, "?", ":" and "@" as PostgreSQL does.
func TestLexPostgres(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"a<-1", []string{"a", "<", "-", "1"}},
		{"a=-1 AND b*-2", []string{"a", "=", "-", "1", "AND", "b", "*", "-", "2"}},
		{"j ?| k ?& l ? 'x'", []string{"j", "?|", "k", "?&", "l", "?", "'x'"}},
		{"a @-@ b !~* c <-> d", []string{"a", "@-@", "b", "!~*", "c", "<->", "d"}},
		{"x::int[] || a[1:n]", []string{"x", "::", "int", "[", "]", "||", "a", "[", "1", ":", "n", "]"}},
		{"a +--c\n1", []string{"a", "+", "1"}},
		{"a */*c*/ b", []string{"a", "*", "b"}},
		{"U&'d\\0061t' U&\"x\" $1 `b`", []string{"U&'d\\0061t'", "U&\"x\"", "$1", "`b`"}},
		{"f(a => 1)", []string{"f", "(", "a", "=>", "1", ")"}},
	}
	for _, c := range cases {
		var got []string
		for _, tok := range Significant(LexPostgres(c.in)) {
			got = append(got, tok.Text)
		}
		assert.Equal(t, c.want, got, "LexPostgres(%q)", c.in)
	}
	s := "SELECT a[1] @> ARRAY['x;y'] -- c\n/* /* n */ */ ?| 'z'"
	var b strings.Builder
	for _, tok := range LexPostgres(s) {
		b.WriteString(tok.Text)
	}
	assert.Equal(t, s, b.String(), "round trip")
	assert.Equal(t, []string{"SELECT a[1] @> ARRAY['x;y']"}, split("SELECT a[1] @> ARRAY['x;y'];", LexPostgres("SELECT a[1] @> ARRAY['x;y'];")))
}

// Lexed reads a text as the functions that lex it each time do: its
// statements, the text without what trails it, and the first statement's
// tokens (Lex of Statements()[0], at their offsets in the text), also
// where white space beyond ASCII's borders the statement.
func TestLexed(t *testing.T) {
	for _, s := range lexedSeeds {
		checkLexed(t, s)
	}
}

// FuzzLexed checks Lexed against the functions that lex each time on
// any text.
func FuzzLexed(f *testing.F) {
	for _, s := range lexedSeeds {
		f.Add(s)
	}
	f.Fuzz(checkLexed)
}

var lexedSeeds = []string{
	"SELECT 1", "  SELECT 1 ; -- c\n", "SELECT ';' AS x; SELECT 2", "/* a */ SELECT $$a;b$$ /* b */;",
	"\u00a0SELECT 1\u00a0", "\u00a0 SELECT 1 \u00a0;x", "SELECT 1\u2003", "\u2003\tSELECT x::int; ", ";;", "",
	"SELECT 'unterminated", "SELECT 1e", "WITH a AS (SELECT 1) SELECT * FROM a -- tail", "é;ü ∑",
}

func checkLexed(t *testing.T, s string) {
	l := LexText(s)
	assert.Equal(t, Statements(s), l.Statements(), "Statements(%q)", s)
	assert.Equal(t, len(Statements(s)), l.Count(), "Count(%q)", s)
	assert.Equal(t, StripTrailing(s), l.StripTrailing(), "StripTrailing(%q)", s)
	stmts := Statements(s)
	if len(stmts) == 0 {
		assert.Nil(t, l.First(), "First(%q)", s)
		return
	}
	want, got := Lex(stmts[0]), l.First()
	if !assert.Len(t, got, len(want), "First(%q)", s) || len(got) == 0 {
		return
	}
	off := got[0].Pos
	assert.Equal(t, stmts[0], s[off:off+len(stmts[0])], "First(%q): offset", s)
	for i := range want {
		want[i].Pos += off
	}
	assert.Equal(t, want, got, "First(%q)", s)
}

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

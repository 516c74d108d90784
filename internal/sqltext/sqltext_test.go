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

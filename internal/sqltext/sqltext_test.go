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

func TestTables(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"SELECT count(*) FROM singer", []string{"singer"}},
		{"SELECT T1.name FROM singer AS T1 JOIN concert AS T2 ON T1.id = T2.id", []string{"singer", "concert"}},
		{"SELECT a FROM x, y AS yy, z WHERE a IN (SELECT b FROM w)", []string{"x", "y", "z", "w"}},
		{"WITH per AS (SELECT s.id FROM enrollments e JOIN students s ON s.id = e.student_id) SELECT * FROM per", []string{"enrollments", "students"}},
		{"SELECT EXTRACT(year FROM created) FROM t", []string{"t"}},
		{`SELECT * FROM "order" o JOIN sales."Line Items" li USING (id)`, []string{"order", "Line Items"}},
		{"SELECT a IS DISTINCT FROM b FROM t1", []string{"t1"}},
		{"SELECT * FROM json_each('[1]'), t2", []string{"t2"}},
		{"SELECT * FROM (SELECT id FROM a) AS s, b", []string{"a", "b"}},
	}
	for _, c := range cases {
		var got []string
		for _, r := range Tables(c.in) {
			got = append(got, r.Name)
		}
		assert.Equal(t, c.want, got, "Tables(%q)", c.in)
	}
}

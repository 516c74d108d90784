package sqlparse

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/text2sql-go/text2sql"
)

func TestTables(t *testing.T) {
	cases := []struct {
		d    text2sql.Dialect
		sql  string
		want []TableRef
	}{
		{text2sql.DialectSQLite, "SELECT * FROM a AS x JOIN s.b ON 1, c", []TableRef{{Name: "a", Alias: "x"}, {Schema: "s", Name: "b"}, {Name: "c"}}},
		{text2sql.DialectSQLite, "WITH w AS (SELECT * FROM t) SELECT * FROM w JOIN T ON 1 WHERE x IN (SELECT y FROM u)", []TableRef{{Name: "t"}, {Name: "u"}}},
		{text2sql.DialectSQLite, "SELECT * FROM json_each(x) j, (SELECT 1 FROM d) q", []TableRef{{Name: "d"}}},
		{text2sql.DialectMySQL, "SELECT * FROM `order` o WHERE lock IN (1, 2)", []TableRef{{Name: "order", Alias: "o"}}},
		{text2sql.DialectSQLite, "SELECT EXTRACT(YEAR FROM d) FROM t", []TableRef{{Name: "t"}}},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, Tables(Parse(c.sql, c.d)), c.sql)
	}
	names := []struct {
		sql  string
		want []string
	}{
		{"SELECT count(*) FROM singer", []string{"singer"}},
		{"SELECT T1.name FROM singer AS T1 JOIN concert AS T2 ON T1.id = T2.id", []string{"singer", "concert"}},
		{"SELECT a FROM x, y AS yy, z WHERE a IN (SELECT b FROM w)", []string{"x", "y", "z", "w"}},
		{"WITH per AS (SELECT s.id FROM enrollments e JOIN students s ON s.id = e.student_id) SELECT * FROM per", []string{"enrollments", "students"}},
		{`SELECT * FROM "order" o JOIN sales."Line Items" li USING (id)`, []string{"order", "Line Items"}},
		{"SELECT a IS DISTINCT FROM b FROM t1", []string{"t1"}},
		{"SELECT * FROM json_each('[1]'), t2", []string{"t2"}},
		{"SELECT * FROM (SELECT id FROM a) AS s, b", []string{"a", "b"}},
		{"SELECT name FROM t; and then the prose FROM here", []string{"t"}},
	}
	for _, c := range names {
		var got []string
		for _, r := range Tables(Parse(c.sql, text2sql.DialectSQLite)) {
			got = append(got, r.Name)
		}
		assert.Equal(t, c.want, got, c.sql)
	}
	assert.Equal(t, "sales.orders", TableRef{Schema: "sales", Name: "orders"}.QualifiedName())
	assert.Equal(t, "orders", TableRef{Name: "orders", Alias: "o"}.QualifiedName())
}

func TestColumnRefs(t *testing.T) {
	q := "WITH w(k) AS (SELECT id FROM t) SELECT x.a, b AS alias, count(c) OVER win, CAST(d AS INT) COLLATE nocase, " +
		"x.* FROM s.t AS x JOIN u USING (e) WHERE f IN (SELECT g FROM w) WINDOW win AS (PARTITION BY h)"
	var got []string
	for _, r := range ColumnRefs(Parse(q, text2sql.DialectSQLite)) {
		var parts []string
		for _, p := range r.Parts {
			parts = append(parts, p.Name)
		}
		got = append(got, strings.Join(parts, "."))
	}
	assert.ElementsMatch(t, []string{"id", "x.a", "b", "c", "d", "e", "f", "g", "h"}, got)
}

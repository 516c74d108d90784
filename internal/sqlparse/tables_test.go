package sqlparse

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/sqltext"
)

func TestTables(t *testing.T) {
	cases := []struct {
		d    text2sql.Dialect
		sql  string
		want []sqltext.TableRef
	}{
		{text2sql.DialectSQLite, "SELECT * FROM a AS x JOIN s.b ON 1, c", []sqltext.TableRef{{Name: "a", Alias: "x"}, {Schema: "s", Name: "b"}, {Name: "c"}}},
		{text2sql.DialectSQLite, "WITH w AS (SELECT * FROM t) SELECT * FROM w JOIN T ON 1 WHERE x IN (SELECT y FROM u)", []sqltext.TableRef{{Name: "t"}, {Name: "u"}}},
		{text2sql.DialectSQLite, "SELECT * FROM json_each(x) j, (SELECT 1 FROM d) q", []sqltext.TableRef{{Name: "d"}}},
		{text2sql.DialectMySQL, "SELECT * FROM `order` o WHERE lock IN (1, 2)", []sqltext.TableRef{{Name: "order", Alias: "o"}}},
		{text2sql.DialectSQLite, "SELECT EXTRACT(YEAR FROM d) FROM t", []sqltext.TableRef{{Name: "t"}}},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, Tables(Parse(c.sql, c.d)), c.sql)
	}
}

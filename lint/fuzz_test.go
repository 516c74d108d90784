package lint_test

import (
	"context"
	"strings"
	"testing"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/lint"
	"github.com/text2sql-go/text2sql/schema"

	"github.com/stretchr/testify/require"
)

// fuzzDB is a small schema with the shapes the checker cares about.
var fuzzDB = &schema.Database{Name: "f", Dialect: text2sql.DialectSQLite, Tables: []*schema.Table{
	{Name: "t", Columns: []schema.Column{{Name: "id", Type: "INTEGER", NotNull: true}, {Name: "v", Type: "TEXT"}, {Name: "n", Type: "INTEGER"}}, PrimaryKey: []string{"id"}},
	{Name: "u", Columns: []schema.Column{{Name: "id", Type: "INTEGER"}, {Name: "t_id", Type: "INTEGER"}, {Name: "x", Type: "REAL"}}},
	{Schema: "s", Name: "w", Columns: []schema.Column{{Name: "a"}}},
}}

// FuzzCheck: Check and Warn never panic, whatever the text, in every
// dialect; every failure has a known kind and a message.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{
		"SELECT TOP 5 name FROM artists ORDER BY name",
		"SELECT v FROM t ORDER BY v LIMIT 1",
		"SELECT COUNT(*) / COUNT(DISTINCT n) FROM t JOIN u ON u.t_id = t.id GROUP BY t.v HAVING COUNT(*) > 1",
		"WITH RECURSIVE r(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM r WHERE k < 3) SELECT k FROM r",
		"SELECT a.v FROM (SELECT v, n AS m FROM t) a WHERE a.m = (SELECT MAX(x) FROM u WHERE u.t_id = a.m)",
		"SELECT CAST(x AS REAL) / 2, x::int, EXTRACT(year FROM now()) FROM u WHERE v ILIKE 'a%'",
		"SELECT * FROM t, json_each(t.v) AS j(key, value) NATURAL JOIN u USING (id) WINDOW w AS (ORDER BY id)",
		"SELECT ((((((((((1))))))))))",
		"SELECT CASE WHEN n = NULL THEN 1 ELSE 0 END FROM t LIMIT 2, 1",
		"SELECT `v`, [n], \"id\" FROM s.w, main.t",
		"SELECT ( FROM",
		"))((SELECT",
		"SELECT 1 UNION SELECT 2 ORDER BY 1 LIMIT",
		"SELECT x FROM t AS",
		"WITH a AS (",
		"SELECT t.* , u.* FROM t LEFT JOIN u ON",
	} {
		f.Add(s)
	}
	res := &text2sql.Result{Columns: []string{"v"}, Rows: [][]any{{nil}, {"10"}, {int64(3)}}, RowCount: 3}
	dialects := []text2sql.Dialect{text2sql.DialectSQLite, text2sql.DialectPostgres, text2sql.DialectMySQL}
	f.Fuzz(func(t *testing.T, sql string) {
		for _, d := range dialects {
			db := *fuzzDB
			db.Dialect = d
			c := lint.New(&db, d)
			rep := c.Check(sql)
			for _, fl := range rep.Failures {
				require.Contains(t, []text2sql.ErrorKind{text2sql.KindUnknownTable, text2sql.KindUnknownColumn, text2sql.KindDialect}, fl.Kind, "%s: failure of an unexpected kind", d)
				require.NotEmpty(t, strings.TrimSpace(fl.Message), "%s: empty failure message", d)
			}
			if len(rep.Failures) > 0 {
				require.NotNil(t, rep.Err(), "%s: failures but Err() is nil", d)
			}
			for _, w := range append(rep.Warnings, c.Warn(context.Background(), sql, res)...) {
				require.NotEqual(t, w, lint.Kind(w), "%s: warning without a kind", d)
			}
			c.Warn(context.Background(), sql, nil)
		}
	})
}

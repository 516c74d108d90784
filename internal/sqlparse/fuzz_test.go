package sqlparse

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/text2sql-go/text2sql"
)

// FuzzParse: Parse never panics, every span lies inside the input and
// within the script's tokens, the walk ends, and the tree's size is
// linear in the number of tokens.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"SELECT a, b AS c FROM t JOIN u ON t.id = u.id WHERE lock IN (1, 2) ORDER BY a DESC LIMIT 3",
		"WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM c) SELECT * FROM c",
		"SELECT CASE WHEN a THEN CAST(b AS INT) END, count(DISTINCT x) FILTER (WHERE y) OVER (PARTITION BY z) FROM t",
		"SELECT (a FROM t) WHERE",
		"SELECT * FROM (SELECT 1) x, json_each(y) INDEXED BY i USE INDEX (k) LIMIT 1, 2; SELECT 'x",
		"((((SELECT 1) UNION (SELECT 2)))",
		"SELECT a::int[] FROM t WHERE b IS NOT DISTINCT FROM c AND d NOT BETWEEN 1 AND 2",
	} {
		f.Add(s, uint8(0))
	}
	f.Add("SELECT * FROM ROWS FROM (f(1), g(2) AS (a int)) WITH ORDINALITY AS t(x, y), ONLY u TABLESAMPLE SYSTEM (1) WHERE a[1:2] @> ARRAY[[1],[2]] AND (x).f ?| b AT TIME ZONE 'UTC' GROUP BY GROUPING SETS ((a), ())", uint8(1))
	f.Add("SELECT X'41', @@v, _utf8mb4'x' FROM JSON_TABLE(d, '$' COLUMNS (a INT PATH '$', NESTED PATH '$' COLUMNS (b INT PATH '$'))) jt WHERE a SOUNDS LIKE 'b' LIMIT 1 ROWS EXAMINED 9", uint8(2))
	dialects := []text2sql.Dialect{text2sql.DialectSQLite, text2sql.DialectPostgres, text2sql.DialectMySQL}
	f.Fuzz(func(t *testing.T, sql string, d uint8) {
		s := Parse(sql, dialects[int(d)%len(dialects)])
		nodes := 0
		Inspect(s, func(n Node) bool {
			if n == nil {
				return false
			}
			nodes++
			sp := n.Extent()
			require.True(t, 0 <= sp.Pos && sp.Pos <= sp.End && sp.End <= len(sql), "%T byte span %+v outside %d bytes", n, sp, len(sql))
			require.True(t, 0 <= sp.From && sp.From <= sp.To && sp.To <= len(s.Tokens), "%T token span %+v outside %d tokens", n, sp, len(s.Tokens))
			return true
		})
		require.LessOrEqual(t, nodes, 8*(len(s.Tokens)+1), "nodes for %d tokens", len(s.Tokens))
		for _, e := range s.Errors {
			require.True(t, 0 <= e.Pos && e.Pos <= e.End && e.End <= len(sql), "error span %+v outside %d bytes", e.Span, len(sql))
		}
	})
}

// BenchmarkParseSpider parses the Spider dev gold queries in each
// dialect (each has its lexer); ns/op and allocs/op are per query.
func BenchmarkParseSpider(b *testing.B) {
	qs := spiderGold(b)
	for _, d := range []text2sql.Dialect{text2sql.DialectSQLite, text2sql.DialectPostgres, text2sql.DialectMySQL} {
		b.Run(string(d), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				Parse(qs[i%len(qs)], d)
			}
		})
	}
}

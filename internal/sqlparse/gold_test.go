package sqlparse

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/shareddata"
)

// birdGold returns the SQL of the 500 BIRD mini-dev gold queries in file.
func birdGold(t testing.TB, file string) []string {
	b, err := os.ReadFile(shareddata.Path(t, "bird", "mini_dev", file))
	require.NoError(t, err)
	var qs []struct {
		SQL string `json:"SQL"`
	}
	require.NoError(t, json.Unmarshal(b, &qs))
	require.Len(t, qs, 500)
	out := make([]string, len(qs))
	for i, q := range qs {
		out[i] = q.SQL
	}
	return out
}

func spiderGold(t testing.TB) []string {
	qs, _ := shareddata.SpiderDev(t)
	out := make([]string, len(qs))
	for i, q := range qs {
		out[i] = q.Query
	}
	return out
}

// errorText lists the error nodes of s with their text, for failures.
func errorText(s *Script) string {
	var b strings.Builder
	for _, e := range s.Errors {
		b.WriteString(e.Reason + " at " + strings.TrimSpace(s.Text()[e.Pos:min(len(s.Text()), e.Pos+40)]) + "; ")
	}
	return b.String()
}

// Every gold query of Spider dev and of BIRD mini-dev (in its SQLite,
// PostgreSQL and MySQL versions) parses as one query with no error node.
func TestGoldNoErrors(t *testing.T) {
	sets := []struct {
		name    string
		dialect text2sql.Dialect
		sqls    func(testing.TB) []string
	}{
		{"spider", text2sql.DialectSQLite, spiderGold},
		{"bird-sqlite", text2sql.DialectSQLite, func(t testing.TB) []string { return birdGold(t, "mini_dev_sqlite.json") }},
		{"bird-postgres", text2sql.DialectPostgres, func(t testing.TB) []string { return birdGold(t, "mini_dev_postgresql.json") }},
		{"bird-mysql", text2sql.DialectMySQL, func(t testing.TB) []string { return birdGold(t, "mini_dev_mysql.json") }},
	}
	for _, set := range sets {
		t.Run(set.name, func(t *testing.T) {
			sqls := set.sqls(t)
			bad := 0
			for _, q := range sqls {
				s := Parse(q, set.dialect)
				ok := len(s.Errors) == 0 && len(s.Stmts) == 1
				if ok {
					_, ok = s.Stmts[0].(*Query)
				}
				if !ok {
					bad++
					if bad <= 15 {
						t.Errorf("%d stmts, errors: %s\n  %s", len(s.Stmts), errorText(s), strings.Join(strings.Fields(q), " "))
					}
				}
			}
			t.Logf("%s: %d queries, %d with error nodes", set.name, len(sqls), bad)
		})
	}
}

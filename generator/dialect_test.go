package generator

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/llm/llmtest"
)

// What follows the SQL of an answer is cut by the target engine's lexical
// rules: for MySQL "#" starts a comment, "--" does only before white
// space, and an executable comment is SQL the guard must see.
func TestTrailingByDialect(t *testing.T) {
	for _, c := range []struct {
		dialect  text2sql.Dialect
		sql, out string
	}{
		{text2sql.DialectMySQL, `SELECT 1 --1`, `SELECT 1 --1`},
		{text2sql.DialectSQLite, `SELECT 1 --1`, `SELECT 1`},
		{text2sql.DialectMySQL, `SELECT 1 # the answer;`, `SELECT 1`},
		{text2sql.DialectMySQL, `SELECT Name FROM singer /*! INTO OUTFILE '/tmp/x' */;`, `SELECT Name FROM singer /*! INTO OUTFILE '/tmp/x' */`},
		{text2sql.DialectPostgres, `SELECT Name FROM singer /*! INTO OUTFILE '/tmp/x' */;`, `SELECT Name FROM singer`},
		{text2sql.DialectMySQL, `SELECT 'it\'s' -- done`, `SELECT 'it\'s'`},
	} {
		m := llmtest.New(`{"answerable": true, "sql": ` + jsonString(c.sql) + `, "explanation": ""}`)
		g := newGen(t, m, Options{Dialect: c.dialect})
		cand, err := g.Generate(context.Background(), simpleRequest())
		require.NoError(t, err, c.sql)
		assert.Equal(t, c.out, cand.SQL, "%s: %s", c.dialect, c.sql)
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

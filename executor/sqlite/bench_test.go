package sqlite

import (
	"database/sql"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/text2sql-go/text2sql/internal/exectest"
)

// BenchmarkExecute compares the guarded executor with plain database/sql
// (go-sqlite3, read-only DSN) on a 1-row and a 1,000-row result.
func BenchmarkExecute(b *testing.B) {
	path := bigDB(b, 1000)
	e := open(b, path, Options{})
	plain, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	require.NoError(b, err)
	defer plain.Close()
	exectest.BenchExecute(b, e, plain, []exectest.BenchQuery{
		{Name: "1row", SQL: "SELECT id, label, half FROM big WHERE id = 500"},
		{Name: "1000rows", SQL: "SELECT id, label, half FROM big"},
	})
}

package sqlite

import (
	"database/sql"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/text2sql-go/text2sql/internal/exectest"
)

// BenchmarkExecute compares the guarded executor with plain database/sql
// (go-sqlite3, read-only DSN) on a 1-row and a 1,000-row result, and on
// 1,000 calls of instr and replace, which the guarded connection replaces
// with its linear-time equivalents (bounds.c) and plain database/sql runs
// as SQLite's built-ins.
func BenchmarkExecute(b *testing.B) {
	path := bigDB(b, 1000)
	e := open(b, path, Options{})
	plain, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	require.NoError(b, err)
	defer plain.Close()
	exectest.BenchExecute(b, e, plain, []exectest.BenchQuery{
		{Name: "1row", SQL: "SELECT id, label, half FROM big WHERE id = 500"},
		{Name: "1000rows", SQL: "SELECT id, label, half FROM big"},
		{Name: "instr", SQL: "SELECT count(*) FROM big WHERE instr(label, '99') > 0"},
		{Name: "replace", SQL: "SELECT max(replace(label, 'row', 'r')) FROM big"},
	})
}

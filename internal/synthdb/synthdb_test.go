package synthdb_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/text2sql-go/text2sql/internal/synthdb"
	"github.com/text2sql-go/text2sql/schema"
)

// The database has the tables and columns asked for, rows of text, no
// declared keys, and column names that imply keys to most tables.
func TestWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	require.NoError(t, synthdb.Write(path, 200, 12))
	db, err := sql.Open("sqlite3", path)
	require.NoError(t, err)
	defer db.Close()
	d, err := schema.InspectSQLite(context.Background(), db)
	require.NoError(t, err)
	require.Len(t, d.Tables, 200)
	inferred := 0
	for _, tb := range schema.InferForeignKeys(d).Tables {
		assert.Len(t, tb.Columns, 12, tb.Name)
		for _, fk := range tb.ForeignKeys {
			assert.True(t, fk.Inferred, "%s: a declared key", tb.Name)
			inferred++
		}
	}
	assert.Greater(t, inferred, 200, "keys implied by column names")
	var rows int
	require.NoError(t, db.QueryRow(`SELECT count(*) FROM `+d.Tables[0].Name+` WHERE label LIKE '% %'`).Scan(&rows))
	assert.Equal(t, synthdb.Rows, rows)
	require.Error(t, synthdb.Write(path, 1, 12), "the file exists")
}

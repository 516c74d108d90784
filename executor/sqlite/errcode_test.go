package sqlite

import (
	"database/sql"
	"errors"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/lint"
)

// SQLite's result codes give the kinds they can tell; SQLITE_ERROR is
// left to the message, and the kinds agree with what the messages give.
func TestErrorKind(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.db")
	rw, err := sql.Open("sqlite3", path)
	require.NoError(t, err)
	defer rw.Close()
	_, err = rw.Exec("CREATE TABLE t (a INTEGER NOT NULL)")
	require.NoError(t, err)

	for q, want := range map[string]text2sql.ErrorKind{
		"SELECT * FROM nope":             text2sql.KindUnknownTable,
		"SELECT nope FROM t":             text2sql.KindUnknownColumn,
		"SELEC 1":                        text2sql.KindSyntax,
		"SELECT nope(1)":                 text2sql.KindRuntime,
		"INSERT INTO t(a) VALUES (NULL)": text2sql.KindRuntime, // SQLITE_CONSTRAINT
	} {
		_, err := rw.Exec(q)
		require.Error(t, err, q)
		got := lint.EngineError(errorKind(err), err.Error(), nil, q).Kind
		assert.Equal(t, want, got, "%s: %v", q, err)
		assert.Equal(t, lint.Classify(err.Error()), got, "%s: %v", q, err)
	}
	_, err = rw.Exec("SELECT * FROM nope")
	assert.Equal(t, text2sql.ErrorKind(""), errorKind(err), "SQLITE_ERROR is left to the message")

	ro, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	require.NoError(t, err)
	defer ro.Close()
	_, err = ro.Exec("INSERT INTO t(a) VALUES (1)")
	require.Error(t, err)
	assert.Equal(t, text2sql.KindNotReadOnly, errorKind(err), "%v", err)

	assert.Equal(t, text2sql.ErrorKind(""), errorKind(errors.New("sql: database is closed")), "not SQLite's")
}

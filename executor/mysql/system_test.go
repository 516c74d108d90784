package mysql

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/dbtest"
)

// Findings of the second attack round: the server's system schemas
// (accounts and password hashes, other sessions' statements) are refused
// as forbidden_table, and an allowed name this server has no built-in for
// cannot reach a stored function of the same name in the database.
func TestSystemSchemasAndStoredFunctions(t *testing.T) {
	admin, dsn := dbtest.MySQL(t)
	dbtest.Exec(t, admin, "CREATE TABLE singer (id INT PRIMARY KEY, Name TEXT)",
		"CREATE FUNCTION months_between(a INT, b INT) RETURNS INT DETERMINISTIC RETURN a - b")
	ctx := context.Background()
	e, err := Open(ctx, dsn, Options{})
	require.NoError(t, err)
	defer e.Close()
	for q, kind := range map[string]text2sql.ErrorKind{
		"SELECT user, authentication_string FROM mysql.user":              text2sql.KindForbiddenTable,
		"SELECT * FROM mysql.global_priv":                                 text2sql.KindForbiddenTable,
		"SELECT * FROM information_schema.processlist":                    text2sql.KindForbiddenTable,
		"SELECT * FROM `INFORMATION_SCHEMA`.`PROCESSLIST`":                text2sql.KindForbiddenTable,
		"SELECT * FROM performance_schema.threads":                        text2sql.KindForbiddenTable,
		"SELECT Name FROM singer WHERE id IN (SELECT 1 FROM sys.version)": text2sql.KindForbiddenTable,
		"SELECT months_between(2, 1)":                                     text2sql.KindForbiddenFunction,
	} {
		res, err := e.Execute(ctx, text2sql.ExecuteRequest{SQL: q})
		require.NoError(t, err)
		if assert.NotNil(t, res.Error, q) {
			assert.Equal(t, kind, res.Error.Kind, "%q: %s", q, res.Error.Message)
		}
	}
	// The host may allow the stored function by name.
	allowed, err := Open(ctx, dsn, Options{AllowFunctions: []string{"months_between"}})
	require.NoError(t, err)
	defer allowed.Close()
	res, err := allowed.Execute(ctx, text2sql.ExecuteRequest{SQL: "SELECT months_between(5, 2) AS d"})
	require.NoError(t, err)
	require.Nil(t, res.Error)
	assert.Equal(t, int64(3), res.Rows[0][0])
}

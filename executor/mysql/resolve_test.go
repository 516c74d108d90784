package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"testing"

	"github.com/go-sql-driver/mysql"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/dbtest"
	"github.com/text2sql-go/text2sql/internal/exectest"
)

// Class 9 of issue 36: a name on the allow-list reaches only the server's
// own built-in. Stored functions created after Open, with the names of
// functions other dialects have (TRANSLATE, REGEXP_LIKE, MONTHS_BETWEEN),
// of built-ins the parser reads only in one form (COUNT, SUBSTRING,
// NOW, written quoted or with a space), or of any other built-in, each
// reading another database's secret as its DEFINER, are never called:
// every such statement is refused, the secret never appears. DEFAULT(col)
// on a column defaulting to NEXTVAL(seq) is refused and the sequence
// does not move.
func TestStoredFunctionsNeverShadowBuiltins(t *testing.T) {
	e, admin, _ := setupWith(t, Options{},
		"CREATE TABLE pets (id INT PRIMARY KEY, name VARCHAR(20))", "INSERT INTO pets VALUES (1, 'Rex')",
		"CREATE SEQUENCE seq1", "CREATE TABLE numbered (id INT DEFAULT NEXTVAL(seq1), name TEXT)")
	other, otherDSN := dbtest.MySQL(t)
	dbtest.Exec(t, other, "CREATE TABLE secret (s VARCHAR(20))", "INSERT INTO secret VALUES ('hunter2')")
	ocfg, err := mysql.ParseDSN(otherDSN)
	require.NoError(t, err)
	for _, name := range []string{"translate", "regexp_like", "months_between", "json_storage_size",
		"count", "substring", "now", "concat", "upper", "soundex"} {
		dbtest.Exec(t, admin, fmt.Sprintf("CREATE DEFINER = CURRENT_USER FUNCTION `%s`(a TEXT) RETURNS TEXT READS SQL DATA SQL SECURITY DEFINER RETURN (SELECT s FROM `%s`.secret LIMIT 1)", name, ocfg.DBName))
	}
	for _, q := range []string{
		"SELECT translate(name) FROM pets",
		"SELECT TRANSLATE(name, 'a', 'b') FROM pets",
		"SELECT regexp_like(name) FROM pets",
		"SELECT name FROM pets WHERE months_between(name) IS NOT NULL",
		"SELECT json_storage_size(name) FROM pets",
		"SELECT count (name) FROM pets",
		"SELECT `count`(name) FROM pets",
		"SELECT COUNT(name) FROM pets",
		"SELECT substring (name) FROM pets",
		"SELECT `now`(name) FROM pets",
		"SELECT now() FROM pets",
		"SELECT concat(name) FROM pets",
		"SELECT `upper` (name) FROM pets",
		"WITH c AS (SELECT soundex(name) AS x FROM pets) SELECT x FROM c",
		"SELECT name FROM pets ORDER BY count (name) OVER ()",
	} {
		res := exectest.Run(t, e, q)
		if assert.NotNil(t, res.Error, "%q ran: %v", q, res.Rows) {
			assert.Equal(t, text2sql.KindForbiddenFunction, res.Error.Kind, "%q: %s", q, res.Error.Message)
			assert.NotContains(t, res.Error.Message, "hunter2")
		}
	}
	// Built-ins whose names no function of the database has still run.
	res := exectest.Run(t, e, "SELECT LOWER(name), CHAR_LENGTH(name) FROM pets")
	require.Nil(t, res.Error)
	assert.Equal(t, [][]any{{"rex", int64(3)}}, res.Rows)

	// DEFAULT(col) evaluates NEXTVAL(seq1).
	var before int64
	require.NoError(t, admin.QueryRow("SELECT next_not_cached_value FROM seq1").Scan(&before))
	for _, q := range []string{"SELECT DEFAULT(id) FROM numbered", "SELECT name FROM numbered WHERE id = DEFAULT(id)",
		"SELECT (SELECT DEFAULT(n.id) FROM numbered n LIMIT 1)"} {
		exectest.RunKind(t, e, q, text2sql.KindForbiddenFunction)
	}
	var after int64
	require.NoError(t, admin.QueryRow("SELECT next_not_cached_value FROM seq1").Scan(&after))
	assert.Equal(t, before, after, "the sequence moved")
}

// Names that are not built-ins of the server are off the allow-list from
// Open on, so refused even when no function of that name exists; the
// host's own functions stay allowed.
func TestAllowListHoldsOnlyBuiltins(t *testing.T) {
	e, _, _ := setupWith(t, Options{AllowFunctions: []string{"translate"}}, "CREATE TABLE pets (name VARCHAR(20))")
	for _, name := range []string{"regexp_like", "months_between", "json_storage_size"} {
		assert.False(t, e.Guard().allow[name], name)
		exectest.RunKind(t, e, "SELECT "+name+"(name) FROM pets", text2sql.KindForbiddenFunction)
	}
	for _, name := range []string{"concat", "count", "substring", "now", "chr", "median", "translate"} {
		assert.True(t, e.Guard().allow[name], name)
	}
	// CHAR and INSERT, which the parser names char_func and insert_func,
	// are asked of the server as they are written.
	res := exectest.Run(t, e, "SELECT CHAR(65), INSERT('abc', 1, 1, 'x')")
	require.Nil(t, res.Error)
	assert.Equal(t, [][]any{{[]byte("A"), "xbc"}}, res.Rows)
	// The offline Guard knows no server: it keeps the whole list.
	assert.Nil(t, NewGuard("", nil).CheckSQL("SELECT regexp_like(a, 'x') FROM t"))
}

// A name in mysql.func leaves the allow-list at Open before any name is
// asked of the server (preparing a call of a loadable function runs its
// init code), even a built-in's, which `name`(…) would reach.
func TestLoadableFunctionNamesDroppedAtOpen(t *testing.T) {
	admin, dsn := dbtest.MySQL(t)
	dbtest.Exec(t, admin, "CREATE TABLE pets (name VARCHAR(20))",
		"INSERT INTO mysql.func (name, ret, dl, type) VALUES ('soundex', 0, 'none.so', 'function')")
	t.Cleanup(func() { admin.Exec("DELETE FROM mysql.func WHERE name = 'soundex'") })
	e, err := Open(context.Background(), dsn, Options{})
	require.NoError(t, err)
	defer e.Close()
	assert.False(t, e.Guard().allow["soundex"])
	exectest.RunKind(t, e, "SELECT SOUNDEX(name) FROM pets", text2sql.KindForbiddenFunction)
}

// A loadable function of a built-in's name (mysql.func) refuses the
// statement as a stored one does. The row is removed at once: the server
// reads mysql.func only at start-up, so it loads nothing.
func TestLoadableFunctionNamesChecked(t *testing.T) {
	e, admin, _ := setupWith(t, Options{}, "CREATE TABLE pets (name VARCHAR(20))")
	require.True(t, e.udfsVisible)
	name := dbtest.Name("udf")
	dbtest.Exec(t, admin, "INSERT INTO mysql.func (name, ret, dl, type) VALUES ('"+name+"', 0, 'none.so', 'function')")
	t.Cleanup(func() { admin.Exec("DELETE FROM mysql.func WHERE name = ?", name) })
	err := e.confirmCalls(context.Background(), mustConn(t, e), []string{"upper", name})
	var shadow *shadowError
	require.ErrorAs(t, err, &shadow)
	assert.Contains(t, shadow.se.Message, name)
	assert.NoError(t, e.confirmCalls(context.Background(), mustConn(t, e), []string{"upper"}))
}

func mustConn(t *testing.T, e *Executor) *sql.Conn {
	t.Helper()
	conn, err := e.db.Conn(context.Background())
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	return conn
}

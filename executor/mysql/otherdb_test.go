package mysql

import (
	"context"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/dbtest"
	"github.com/text2sql-go/text2sql/internal/exectest"
)

// A statement reads the database the executor is connected to, never
// another database of the same server, whatever the login may read:
// qualified names of another database are refused in every place a
// table can stand; the own database's qualifier is fine.
func TestOtherDatabaseRefused(t *testing.T) {
	e, _, dsn := setupWith(t, Options{}, "CREATE TABLE pets (id INT PRIMARY KEY, name VARCHAR(20))", "INSERT INTO pets VALUES (1, 'Rex')")
	other, otherDSN := dbtest.MySQL(t)
	dbtest.Exec(t, other, "CREATE TABLE secret (s VARCHAR(20))", "INSERT INTO secret VALUES ('hunter2')")
	ocfg, err := mysql.ParseDSN(otherDSN)
	require.NoError(t, err)
	cfg, err := mysql.ParseDSN(dsn)
	require.NoError(t, err)
	o, own := ocfg.DBName, cfg.DBName
	for _, q := range []string{
		"SELECT s FROM " + o + ".secret",
		"SELECT s FROM `" + o + "`.`secret`",
		"SELECT name, (SELECT s FROM " + o + ".secret LIMIT 1) FROM pets",
		"SELECT name FROM pets, " + o + ".secret",
		"SELECT name FROM pets WHERE name IN (SELECT s FROM " + o + ".secret)",
		"WITH x AS (SELECT s FROM " + o + ".secret) SELECT * FROM x",
		"SELECT name FROM pets UNION SELECT s FROM " + o + ".secret",
		"SELECT s FROM " + strings.ToUpper(o) + ".secret",
	} {
		res := exectest.RunKind(t, e, q, text2sql.KindForbiddenTable)
		assert.NotContains(t, res.Error.Message, "hunter2")
		assert.ErrorIs(t, e.Check(context.Background(), q), text2sql.ErrRefused, q)
	}
	res := exectest.Run(t, e, "SELECT name FROM "+own+".pets")
	require.Nil(t, res.Error, "the own database's qualifier: %v", res.Error)
	assert.Equal(t, [][]any{{"Rex"}}, res.Rows)
}

// Findings of an attack on the token path (MariaDB syntax the parser does
// not read): a table name starting with digits after a qualifier, and a
// number running into a keyword (1.5INTO), are read as the server reads
// them; regular expressions that backtrack and JSON_QUOTE doubling are
// bounded.
func TestTokenPathAsTheServerReads(t *testing.T) {
	e, _, _ := setupWith(t, Options{}, "CREATE TABLE big (n INT)", "INSERT INTO big VALUES (1)")
	other, otherDSN := dbtest.MySQL(t)
	dbtest.Exec(t, other, "CREATE TABLE `1secret` (s VARCHAR(20))", "INSERT INTO `1secret` VALUES ('hunter2')",
		"CREATE TABLE `2e5` (s VARCHAR(20))", "INSERT INTO `2e5` VALUES ('hunter2')")
	ocfg, err := mysql.ParseDSN(otherDSN)
	require.NoError(t, err)
	o := ocfg.DBName
	for _, q := range []string{
		"SELECT s, CAST(1 AS INT) FROM " + o + ".1secret",
		"SELECT CAST(1 AS INT), (SELECT s FROM " + o + ".1secret LIMIT 1)",
		"SELECT x.s, MEDIAN(1) OVER () FROM " + o + ".1secret x",
		"VALUES ((SELECT s FROM " + o + ".1secret))",
		"SELECT s, CAST(1 AS INT) FROM " + o + ".2e5",
		"SELECT s FROM " + o + ".1secret",
	} {
		res := exectest.RunKind(t, e, q, text2sql.KindForbiddenTable)
		assert.NotContains(t, res.Error.Message, "hunter2", q)
	}
	for _, q := range []string{"SELECT CAST(1 AS INT)+1.5INTO @a", "SELECT CAST(1 AS INT)+1e1INTO @a",
		"SELECT CAST(1 AS INT) FROM big WHERE n=1.0LOCK IN SHARE MODE"} {
		res := exectest.Run(t, e, q)
		if assert.NotNil(t, res.Error, q) {
			assert.True(t, res.Error.Kind.Refusal(), "%s: %+v", q, res.Error)
		}
	}
	regex := "SELECT " + strings.Repeat("CONCAT(REPEAT('a',24),'!') REGEXP '^(a+)+$', ", 149) + "1"
	exectest.RunKind(t, e, regex, text2sql.KindTooLarge)
	quoted := "SELECT LENGTH(" + strings.Repeat("JSON_QUOTE(", 13) + "REPEAT('\\\\', 8000)" + strings.Repeat(")", 13) + ")"
	exectest.RunKind(t, e, quoted, text2sql.KindTooLarge)
	assert.Nil(t, exectest.Run(t, e, "SELECT n FROM big WHERE CAST(n AS CHAR) REGEXP '^[0-9]+$' AND n > 0.5").Error)
}

// A GROUP_CONCAT in a subquery returns at most the server's
// group_concat_max_len, not any string: ordinary searches beside one pass.
func TestGroupConcatSearches(t *testing.T) {
	e, _, _ := setupWith(t, Options{}, "CREATE TABLE c (id INT, name TEXT, email TEXT)", "CREATE TABLE o (cid INT, status TEXT)",
		"INSERT INTO c VALUES (1, 'ada', 'ada@x')", "INSERT INTO o VALUES (1, 'shipped')")
	for _, q := range []string{
		"SELECT c.name, (SELECT GROUP_CONCAT(o.status) FROM o WHERE o.cid = c.id) AS s FROM c WHERE c.name LIKE '%ada%' OR c.email LIKE '%ada%'",
		"WITH t AS (SELECT cid, GROUP_CONCAT(status) s FROM o GROUP BY cid) SELECT cid FROM t WHERE s LIKE '%shipped%'",
	} {
		assert.Nil(t, exectest.Run(t, e, q).Error, q)
	}
}

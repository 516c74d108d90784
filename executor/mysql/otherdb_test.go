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

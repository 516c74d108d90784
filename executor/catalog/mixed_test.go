package catalog_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/executor/catalog"
	"github.com/text2sql-go/text2sql/executor/mysql"
	"github.com/text2sql-go/text2sql/executor/postgres"
	"github.com/text2sql-go/text2sql/executor/sqlite"
	"github.com/text2sql-go/text2sql/internal/dbtest"
	"github.com/text2sql-go/text2sql/internal/exectest"
	"github.com/text2sql-go/text2sql/internal/shareddata"
)

// mixed is a catalog of three dialects: Spider's concert_singer in
// SQLite, a pet shop in MariaDB and a clinic in PostgreSQL.
func mixed(t *testing.T) *catalog.Catalog {
	t.Helper()
	ctx := context.Background()
	concert, err := sqlite.Open(shareddata.SpiderDB(t, "concert_singer"), sqlite.Options{})
	require.NoError(t, err)
	my, myDSN := dbtest.MySQL(t)
	dbtest.Exec(t, my,
		"CREATE TABLE `Pets` (PetID INT PRIMARY KEY, PetType VARCHAR(20), weight DOUBLE)",
		"INSERT INTO `Pets` VALUES (1, 'cat', 12), (2, 'dog', 13.4), (3, 'dog', 9.3)")
	shop, err := mysql.Open(ctx, myDSN, mysql.Options{})
	require.NoError(t, err)
	pg, pgDSN := dbtest.Postgres(t)
	dbtest.Exec(t, pg,
		"CREATE TABLE visits (visit_id int PRIMARY KEY, pet_id int, fee numeric(6,2), day date)",
		"INSERT INTO visits VALUES (1, 1, 40.50, '2024-01-02'), (2, 2, 55, '2024-02-03'), (3, 2, 20, '2024-03-04')")
	clinic, err := postgres.Open(ctx, pgDSN, postgres.Options{})
	require.NoError(t, err)
	c, err := catalog.New([]catalog.Database{
		{Name: "concert", Executor: concert}, {Name: "shop", Executor: shop}, {Name: "clinic", Executor: clinic},
	}, catalog.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, c.Close()) })
	return c
}

func TestMixedDialects(t *testing.T) {
	c := mixed(t)
	ctx := context.Background()
	require.True(t, c.Mixed())
	assert.Equal(t, text2sql.DialectSQLite, c.Schema().Dialect, "merges run in SQLite")
	assert.Equal(t, text2sql.DialectMySQL, c.Schema().Lookup("shop.Pets").Dialect)
	assert.Equal(t, text2sql.DialectPostgres, c.Dialect("clinic"))
	assert.Contains(t, c.Schema().DDL(c.Schema().Tables), "CREATE TABLE shop.`Pets` (", "MySQL's quoting for its table")
	assert.Contains(t, c.Rule(), "shop (MySQL)")

	run := func(q string) *text2sql.Result {
		t.Helper()
		res, err := c.Execute(ctx, text2sql.ExecuteRequest{SQL: q})
		require.NoError(t, err, q)
		require.Nil(t, res.Error, "%s: %v", q, res.Error)
		return res
	}
	// Read by MySQL's rules: the backslash escapes the quote, so the
	// string holds "'s" and no table name.
	res := run(`SELECT CONCAT(PetType, '\'s') AS kind FROM shop.` + "`Pets`" + ` WHERE PetID = 2`)
	assert.Equal(t, [][]any{{"dog's"}}, res.Rows)
	assert.Equal(t, "shop", res.Steps[0].Database)
	assert.Equal(t, "SELECT CONCAT(PetType, '\\'s') AS kind FROM `Pets` WHERE PetID = 2", res.Steps[0].SQL)
	// PostgreSQL's casts and date functions on its own database.
	res = run("SELECT sum(fee)::int AS total, min(date_trunc('month', day))::date::text AS first FROM clinic.visits")
	assert.Equal(t, "clinic", res.Steps[0].Database)
	assert.Equal(t, []any{int64(116), "2024-01-01"}, res.Rows[0])
	// All three: each step in its own dialect, the merge in SQLite.
	res = run("WITH p AS (SELECT PetID, PetType FROM shop.`Pets`), v AS (SELECT pet_id, fee::float AS fee FROM clinic.visits), " +
		"s AS (SELECT count(*) AS n FROM concert.singer) " +
		"SELECT p.PetType, sum(v.fee) AS fees, max(s.n) AS singers FROM p JOIN v ON v.pet_id = p.PetID, s GROUP BY p.PetType ORDER BY p.PetType")
	assert.Equal(t, [][]any{{"cat", 40.5, int64(6)}, {"dog", 75.0, int64(6)}}, res.Rows)
	require.Len(t, res.Steps, 4)
	assert.Equal(t, "SELECT PetID, PetType FROM `Pets`", res.Steps[0].SQL)
	assert.Equal(t, "SELECT pet_id, fee::float AS fee FROM public.visits", res.Steps[1].SQL, "PostgreSQL's own name")
	assert.Equal(t, catalog.MergeDatabase, res.Steps[3].Database)

	// Each member's guard still decides, on its own terms.
	for q, kind := range map[string]text2sql.ErrorKind{
		"DELETE FROM shop.`Pets`":                   text2sql.KindNotReadOnly,
		"SELECT pg_sleep(1) FROM clinic.visits":     text2sql.KindForbiddenFunction,
		"SELECT 1 FROM clinic.visits; DROP TABLE x": text2sql.KindMultipleStatements,
	} {
		exectest.RunKind(t, c, q, kind)
	}
	assert.Equal(t, [][]any{{int64(3)}}, run("SELECT count(*) FROM shop.`Pets`").Rows, "nothing was deleted")
}

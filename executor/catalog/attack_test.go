package catalog_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/executor/catalog"
	"github.com/text2sql-go/text2sql/internal/exectest"
)

// A step's rows become a merge table named after its CTE. A name SQLite
// reserves, or two CTEs of one name, used to fail the load with a Go
// error ("object name reserved for internal use", "table A already
// exists") after the steps ran: a model's mistake must be data the repair
// loop sees, refused before anything runs.
func TestAttackStepNamesTheMergeCannotHoldAreRefusals(t *testing.T) {
	c := open(t, catalog.Options{}, concertPets...)
	refusedAcross(t, c,
		"WITH sqlite_master AS (SELECT Age FROM concert.singer), t AS (SELECT Age FROM pets.Student) SELECT * FROM sqlite_master",
		"WITH SQLite_x AS (SELECT Age FROM concert.singer), t AS (SELECT Age FROM pets.Student) SELECT * FROM SQLite_x, t",
		"WITH a AS (SELECT Age FROM concert.singer), A AS (SELECT Age FROM pets.Student) SELECT * FROM a",
		"WITH a AS (SELECT Age FROM concert.singer), a AS (SELECT Age FROM pets.Student) SELECT * FROM a",
		"WITH s AS (SELECT Age FROM concert.singer), t AS (SELECT Age FROM pets.Student), S AS (SELECT 1) SELECT * FROM s, t",
	)
	// A CTE over CTEs stays a CTE of the final statement, where SQLite
	// takes such a name.
	res := exectest.Run(t, c, "WITH s AS (SELECT Age FROM concert.singer), t AS (SELECT Age FROM pets.Student), sqlite_y AS (SELECT * FROM s) SELECT count(*) FROM sqlite_y, t")
	require.Nil(t, res.Error)
	assert.Equal(t, [][]any{{int64(6 * 34)}}, res.Rows)
}

// Each step is bounded by its member (32 MiB), but a statement may have
// any number of steps, all held in memory and written to the merge file:
// three steps of 12 MB each used to merge without complaint, and forty
// would hold 480 MB. The steps' rows are bounded together.
func TestAttackStepsAreBoundedInBytesTogether(t *testing.T) {
	c := open(t, catalog.Options{}, concertPets...)
	q := `WITH a AS (SELECT randomblob(2000000) AS b FROM concert.singer),
	           b AS (SELECT randomblob(2000000) AS b FROM concert.singer),
	           c AS (SELECT randomblob(2000000) AS b FROM pets.Student LIMIT 6)
	      SELECT count(*) FROM a`
	// 36 MB of steps, past the 32 MiB bound.
	assert.Nil(t, exectest.RunKind(t, c, q, text2sql.KindTooLarge).Rows)

	small := open(t, catalog.Options{MaxResultBytes: 1 << 20}, concertPets...)
	exectest.RunKind(t, small, `WITH a AS (SELECT randomblob(300000) AS b FROM concert.singer),
	      c AS (SELECT Age FROM pets.Student) SELECT count(*) FROM a, c`, text2sql.KindTooLarge)
	// The merged result is bounded by the same option.
	exectest.RunKind(t, small, `WITH a AS (SELECT Age FROM concert.singer),
	      c AS (SELECT Age FROM pets.Student) SELECT zeroblob(500000) FROM a, c`, text2sql.KindTooLarge)

	_, err := catalog.New(nil, catalog.Options{MaxResultBytes: -1})
	assert.ErrorIs(t, err, text2sql.ErrInvalidConfig)
}

// The merge file's path was put in a "file:" URI unencoded: a TempDir
// with "?" in its name made SQLite open (and create, mode 0644) the file
// named by the part before it, write the steps' tables there and leave
// it behind, while the final statement ran on the empty temporary file
// ("no such table: s").
func TestAttackTempDirWithURICharacters(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "m?mode=memory#x")
	require.NoError(t, os.Mkdir(dir, 0o700))
	c := open(t, catalog.Options{TempDir: dir}, concertPets...)
	res, err := c.Execute(context.Background(), text2sql.ExecuteRequest{SQL: "WITH s AS (SELECT Age FROM concert.singer), t AS (SELECT Age FROM pets.Student) SELECT count(*) FROM s, t"})
	require.NoError(t, err)
	require.Nil(t, res.Error)
	assert.Equal(t, [][]any{{int64(6 * 34)}}, res.Rows)
	ents, err := os.ReadDir(base)
	require.NoError(t, err)
	require.Len(t, ents, 1, "no file was made beside TempDir: %v", ents)
	left, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, left, "the merge database is removed")
}

// What held: the rewriter edits table names only (not strings, comments
// or a quoted identifier holding a dot), the merge database holds the
// steps' tables alone, and hostile column and CTE names are quoted.
func TestAttackRewriteAndMergeHold(t *testing.T) {
	c := open(t, catalog.Options{}, concertPets...)
	ctx := context.Background()
	two := "s AS (SELECT Age FROM concert.singer), t AS (SELECT Age FROM pets.Student)"
	for _, tc := range []struct{ sql, ran string }{
		{`SELECT 'concert.singer' FROM concert.singer`, `SELECT 'concert.singer' FROM singer`},
		{`SELECT * FROM "concert.singer"`, `SELECT * FROM "concert.singer"`},
		{`SELECT * FROM concert.singer WHERE Name = "pets.Student"`, `SELECT * FROM singer WHERE Name = "pets.Student"`},
		{"SELECT Age /* pets.Student */ FROM concert.singer -- pets.Student\n WHERE 1", "SELECT Age /* pets.Student */ FROM singer -- pets.Student\n WHERE 1"},
		{`SELECT "pets.Student".Age FROM concert.singer AS "pets.Student"`, `SELECT "pets.Student".Age FROM singer AS "pets.Student"`},
	} {
		res, err := c.Execute(ctx, text2sql.ExecuteRequest{SQL: tc.sql})
		require.NoError(t, err, tc.sql)
		require.Len(t, res.Steps, 1, tc.sql)
		assert.Equal(t, "concert", res.Steps[0].Database, tc.sql)
		assert.Equal(t, tc.ran, res.Steps[0].SQL, tc.sql)
	}
	res, err := c.Execute(ctx, text2sql.ExecuteRequest{SQL: "WITH " + two + " SELECT type, name FROM sqlite_master ORDER BY name"})
	require.NoError(t, err)
	require.Nil(t, res.Error)
	assert.Equal(t, [][]any{{"table", "s"}, {"table", "t"}}, res.Rows)
	res, err = c.Execute(ctx, text2sql.ExecuteRequest{SQL: `WITH "a"" , b" AS (SELECT Age AS "x"" , y" FROM concert.singer), t AS (SELECT Age FROM pets.Student) SELECT count("x"" , y") FROM "a"" , b", t`})
	require.NoError(t, err)
	require.Nil(t, res.Error)
	assert.Equal(t, [][]any{{int64(6 * 34)}}, res.Rows)
	for _, q := range []string{
		"WITH " + two + " SELECT * FROM pragma_table_info('s')",
		"WITH " + two + " SELECT readfile('/etc/passwd') FROM s",
		"WITH " + two + " SELECT load_extension('/tmp/x') FROM s",
		"WITH " + two + " SELECT * FROM s; DELETE FROM s",
		"WITH " + two + " DELETE FROM s",
		"WITH " + two + " INSERT INTO s SELECT * FROM t",
		"WITH " + two + " SELECT * FROM s UNION SELECT Age FROM singer",
		"SELECT * FROM concert.singer WHERE Name IN (WITH x AS (SELECT Age FROM pets.Student) SELECT 1)",
	} {
		res, err := c.Execute(ctx, text2sql.ExecuteRequest{SQL: q})
		require.NoError(t, err, q)
		require.NotNil(t, res.Error, q)
		assert.Nil(t, res.Rows, q)
	}
	res, err = c.Execute(ctx, text2sql.ExecuteRequest{SQL: "SELECT count(*) FROM concert.singer"})
	require.NoError(t, err)
	assert.Equal(t, [][]any{{int64(6)}}, res.Rows)
}

// Class 10 (issue 36): one row or one call of a statement exhausted
// memory or ran past the time limit, on one database and in the merge of
// a statement across databases, which runs in SQLite too. Both now end in
// too_large or timeout within the limit and a generous slack.
func TestAttackOneRowOrCallIsBounded(t *testing.T) {
	// The byte bound, not the clock, must stop these: the time limit is far
	// beyond what the statements take under the byte bound, so a too_large
	// answer proves the engine enforces the bound (without it they would
	// answer with rows, or run into this limit and answer timeout).
	c := open(t, catalog.Options{Timeout: 5 * time.Minute}, concertPets...)
	wide := strings.TrimSuffix(strings.Repeat("zeroblob(1000000), ", 100), ", ")
	var held []string
	for i := range 200 {
		held = append(held, fmt.Sprintf("Age = hex(zeroblob(%d))", 400000+i))
	}
	const across = "WITH a AS (SELECT Age FROM concert.singer), p AS (SELECT PetID FROM pets.Pets) "
	for _, q := range []string{
		"SELECT " + wide + " FROM concert.singer",
		"SELECT count(*) FROM concert.singer WHERE " + strings.Join(held, " OR "),
		"SELECT Name LIKE '%' || printf('%.*c', 20000, 'a') || 'b' FROM concert.singer",
		across + "SELECT " + wide + " FROM a, p",
		across + "SELECT count(*) FROM a WHERE " + strings.Join(held, " OR "),
		across + "SELECT Age LIKE '%' || printf('%.*c', 20000, 'a') || 'b' FROM a, p",
		"WITH a AS (SELECT randomblob(1000000) AS b FROM concert.singer), p AS (SELECT PetID FROM pets.Pets) " +
			"SELECT length(group_concat(b)) FROM a, p",
	} {
		res := exectest.RunKind(t, c, q, text2sql.KindTooLarge)
		assert.Nil(t, res.Rows, "%.100s", q)
	}
	// A cross join of 6^10*3 rows, too many to count within the time
	// limit, is stopped by it.
	timed := open(t, catalog.Options{Timeout: time.Second}, concertPets...)
	res := exectest.RunKind(t, timed, across+"SELECT count(*) FROM a, p, a AS a2, a AS a3, a AS a4, a AS a5, a AS a6, a AS a7, a AS a8, a AS a9, a AS a10", text2sql.KindTimeout)
	assert.Nil(t, res.Rows)
	// Within the bounds, a long search answers at once.
	res = exectest.Run(t, c, across+"SELECT instr(printf('%.*c', 1000000, 'a') || 'b', printf('%.*c', 400000, 'a') || 'b') FROM p LIMIT 1")
	require.Nil(t, res.Error, "%v", res.Error)
	assert.Equal(t, [][]any{{int64(600001)}}, res.Rows)
}

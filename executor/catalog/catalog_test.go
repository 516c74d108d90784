package catalog_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/executor/catalog"
	"github.com/text2sql-go/text2sql/executor/sqlite"
	"github.com/text2sql-go/text2sql/internal/exectest"
	"github.com/text2sql-go/text2sql/internal/shareddata"
	"github.com/text2sql-go/text2sql/knowledge"
)

// open returns a catalog of Spider databases, each as name=db_id.
func open(t testing.TB, opts catalog.Options, dbs ...[2]string) *catalog.Catalog {
	t.Helper()
	var members []catalog.Database
	for _, d := range dbs {
		path := shareddata.SpiderDB(t, d[1])
		if _, err := os.Stat(path); err != nil {
			t.Fatalf("Spider database %s: %v", d[1], err)
		}
		ex, err := sqlite.Open(path, sqlite.Options{})
		require.NoError(t, err)
		members = append(members, catalog.Database{Name: d[0], Executor: ex})
	}
	c, err := catalog.New(members, opts)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, c.Close()) })
	return c
}

var concertPets = [][2]string{{"concert", "concert_singer"}, {"pets", "pets_1"}}

// attached runs query with both Spider databases attached under their
// catalog names: the engine's own answer to compare with.
func attached(t *testing.T, query string) [][]any {
	t.Helper()
	return shareddata.SpiderAttached(t, query, concertPets...)
}

// refusedAcross asserts that each of queries is refused on c as
// KindCrossDatabase before any step ran, and that Check refuses it too;
// it returns the results in the order of queries.
func refusedAcross(t *testing.T, c *catalog.Catalog, queries ...string) []*text2sql.Result {
	t.Helper()
	var out []*text2sql.Result
	for _, q := range queries {
		res := exectest.RunKind(t, c, q, text2sql.KindCrossDatabase)
		assert.Empty(t, res.Steps, "nothing ran: %s", q)
		assert.Error(t, c.Check(context.Background(), q), q)
		out = append(out, res)
	}
	return out
}

func TestSchemaNamesTablesByDatabase(t *testing.T) {
	c := open(t, catalog.Options{}, concertPets...)
	s := c.Schema()
	assert.Equal(t, "concert+pets", s.Name)
	assert.Equal(t, text2sql.DialectSQLite, s.Dialect)
	require.NotNil(t, s.Lookup("concert.singer"))
	require.NotNil(t, s.Lookup("pets.Has_Pet"))
	assert.Nil(t, s.Lookup("pets.singer"))
	assert.Len(t, s.Tables, 7)
	hp := s.Lookup("pets.Has_Pet")
	require.NotEmpty(t, hp.ForeignKeys)
	assert.Equal(t, "pets", hp.ForeignKeys[0].RefSchema, "foreign keys stay inside their database")
	assert.Equal(t, []string{"concert", "pets"}, c.Databases())
}

func TestOneDatabaseRunsThere(t *testing.T) {
	c := open(t, catalog.Options{}, concertPets...)
	ctx := context.Background()
	for _, tc := range []struct {
		sql, db, ran string
		want         int64
	}{
		{"SELECT count(*) FROM concert.singer", "concert", "SELECT count(*) FROM singer", 6},
		{"SELECT count(*) FROM concert.singer AS s WHERE s.Age > 40", "concert", "SELECT count(*) FROM singer AS s WHERE s.Age > 40", 3},
		{"SELECT count(*) FROM pets.Pets", "pets", `SELECT count(*) FROM "Pets"`, 3},
		// An unqualified name one database holds is that database's.
		{"SELECT count(*) FROM Has_Pet;", "pets", "SELECT count(*) FROM Has_Pet", 3},
		{"SELECT count(concert.singer.Name) FROM concert.singer", "concert", "SELECT count(singer.Name) FROM singer", 6},
	} {
		res, err := c.Execute(ctx, text2sql.ExecuteRequest{SQL: tc.sql})
		require.NoError(t, err, tc.sql)
		require.Nil(t, res.Error, tc.sql)
		assert.Equal(t, [][]any{{tc.want}}, res.Rows, tc.sql)
		require.Len(t, res.Steps, 1)
		assert.Equal(t, tc.db, res.Steps[0].Database)
		assert.Equal(t, tc.ran, res.Steps[0].SQL)
		assert.Empty(t, res.Steps[0].Name)
	}
}

func TestAcrossDatabasesMergesSteps(t *testing.T) {
	c := open(t, catalog.Options{}, concertPets...)
	ctx := context.Background()
	// For each singer, the students younger than them.
	q := `WITH s AS (SELECT Name, Age FROM concert.singer), st AS (SELECT Age, count(*) AS n FROM pets.Student GROUP BY Age)
	      SELECT s.Name, sum(st.n) FROM s JOIN st ON st.Age < s.Age GROUP BY s.Name ORDER BY s.Name`
	want := attached(t, `SELECT s.Name, sum(st.n) FROM concert.singer AS s
	      JOIN (SELECT Age, count(*) AS n FROM pets.Student GROUP BY Age) AS st ON st.Age < s.Age GROUP BY s.Name ORDER BY s.Name`)
	require.Len(t, want, 6)
	res, err := c.Execute(ctx, text2sql.ExecuteRequest{SQL: q})
	require.NoError(t, err)
	require.Nil(t, res.Error)
	assert.Equal(t, []string{"Name", "sum(st.n)"}, res.Columns)
	assert.Equal(t, want, res.Rows)
	require.Len(t, res.Steps, 3)
	assert.Equal(t, "concert", res.Steps[0].Database)
	assert.Equal(t, "s", res.Steps[0].Name)
	assert.Equal(t, "SELECT Name, Age FROM singer", res.Steps[0].SQL)
	assert.Equal(t, 6, res.Steps[0].RowCount)
	assert.Equal(t, "pets", res.Steps[1].Database)
	assert.Equal(t, catalog.MergeDatabase, res.Steps[2].Database)
	assert.Equal(t, "SELECT s.Name, sum(st.n) FROM s JOIN st ON st.Age < s.Age GROUP BY s.Name ORDER BY s.Name", res.Steps[2].SQL)

	// A CTE over CTEs stays with the final statement; column lists name
	// the merged table's columns.
	q = `WITH a(age) AS (SELECT Age FROM concert.singer), b(age) AS (SELECT Age FROM pets.Student),
	     both_ages AS (SELECT age FROM a UNION SELECT age FROM b) SELECT count(*) FROM both_ages`
	want = attached(t, `SELECT count(*) FROM (SELECT Age FROM concert.singer UNION SELECT Age FROM pets.Student)`)
	res, err = c.Execute(ctx, text2sql.ExecuteRequest{SQL: q})
	require.NoError(t, err)
	require.Nil(t, res.Error)
	assert.Equal(t, want, res.Rows)
	assert.Equal(t, "WITH both_ages AS (SELECT age FROM a UNION SELECT age FROM b) SELECT count(*) FROM both_ages", res.Steps[2].SQL)
}

func TestAcrossDatabasesRefusedShapes(t *testing.T) {
	c := open(t, catalog.Options{}, concertPets...)
	for _, res := range refusedAcross(t, c,
		"SELECT s.Name FROM concert.singer s JOIN pets.Student t ON s.Age = t.Age",
		"SELECT Name FROM concert.singer WHERE Age IN (SELECT Age FROM pets.Student)",
		"WITH s AS (SELECT s.Age FROM concert.singer s JOIN pets.Student t ON s.Age = t.Age) SELECT * FROM s",
		"WITH s AS (SELECT Age FROM concert.singer) SELECT * FROM s JOIN pets.Student t ON s.Age = t.Age",
		"WITH s AS (SELECT Age FROM concert.singer), t AS (SELECT Age FROM pets.Student WHERE Age IN (SELECT Age FROM s)) SELECT * FROM t",
	) {
		assert.Contains(t, res.Error.Hint, "<database>.<table>", res.Error.Message)
	}
}

func TestGuardsStillDecide(t *testing.T) {
	c := open(t, catalog.Options{}, concertPets...)
	ctx := context.Background()
	for _, tc := range []struct {
		sql  string
		kind text2sql.ErrorKind
	}{
		{"DELETE FROM concert.singer", text2sql.KindNotReadOnly},
		{"SELECT 1 FROM concert.singer; DELETE FROM concert.singer", text2sql.KindMultipleStatements},
		{"ATTACH DATABASE '/tmp/x.sqlite' AS x", text2sql.KindForbiddenStatement},
		// The final statement runs through the SQLite guard.
		{"WITH s AS (SELECT Age FROM concert.singer), t AS (SELECT Age FROM pets.Student) SELECT load_extension('x') FROM s, t", text2sql.KindForbiddenFunction},
		// A step runs through its database's guard.
		{"WITH s AS (SELECT load_extension('x') FROM concert.singer), t AS (SELECT Age FROM pets.Student) SELECT * FROM s, t", text2sql.KindForbiddenFunction},
	} {
		assert.Nil(t, exectest.RunKind(t, c, tc.sql, tc.kind).Rows, tc.sql)
	}
	res, err := c.Execute(ctx, text2sql.ExecuteRequest{SQL: "SELECT count(*) FROM concert.singer"})
	require.NoError(t, err)
	assert.Equal(t, [][]any{{int64(6)}}, res.Rows, "nothing was deleted")
	var se *text2sql.SQLError
	require.ErrorAs(t, c.Check(ctx, "DELETE FROM concert.singer"), &se)
	assert.Equal(t, text2sql.KindNotReadOnly, se.Kind)
	assert.NoError(t, c.Check(ctx, "WITH s AS (SELECT Age FROM concert.singer), t AS (SELECT Age FROM pets.Student) SELECT * FROM s, t"))
}

func TestStepOverRowCapIsAnError(t *testing.T) {
	c := open(t, catalog.Options{MaxRows: 4}, concertPets...)
	res := exectest.RunKind(t, c, "WITH s AS (SELECT Age FROM concert.singer), t AS (SELECT Age FROM pets.Student) SELECT count(*) FROM s, t",
		text2sql.KindTooLarge)
	assert.Contains(t, res.Error.Message, "step s on concert")
	// One database alone is truncated as usual.
	res, err := c.Execute(context.Background(), text2sql.ExecuteRequest{SQL: "SELECT Name FROM concert.singer"})
	require.NoError(t, err)
	require.Nil(t, res.Error)
	assert.True(t, res.Truncated)
	assert.Len(t, res.Rows, 4)
}

func TestAmbiguousNameAsksForDatabase(t *testing.T) {
	c := open(t, catalog.Options{}, [2]string{"a", "concert_singer"}, [2]string{"b", "concert_singer"})
	res := exectest.RunKind(t, c, "SELECT count(*) FROM singer", text2sql.KindUnknownTable)
	assert.Contains(t, res.Error.Hint, "a.singer")
	assert.Contains(t, res.Error.Hint, "b.singer")
}

func TestKnowledgeMerged(t *testing.T) {
	ex, err := sqlite.Open(shareddata.SpiderDB(t, "concert_singer"), sqlite.Options{})
	require.NoError(t, err)
	kb := &knowledge.Base{
		Tables:   []knowledge.TableNote{{Table: "singer", Description: "Performers."}},
		Rules:    []knowledge.Rule{{ID: "old", Text: "Old means over 40.", Tables: []string{"singer"}}},
		Examples: []knowledge.Example{{ID: "n", Question: "How many singers?", SQL: "SELECT count(*) FROM singer AS s JOIN singer_in_concert USING (Singer_ID)"}},
	}
	c, err := catalog.New([]catalog.Database{{Name: "concert", Executor: ex, Knowledge: kb}}, catalog.Options{})
	require.NoError(t, err)
	defer c.Close()
	got := c.Knowledge()
	assert.Equal(t, "concert.singer", got.Tables[0].Table)
	require.Len(t, got.Rules, 1)
	assert.Equal(t, "concert.old", got.Rules[0].ID)
	assert.Equal(t, []string{"concert.singer"}, got.Rules[0].Tables)
	assert.Equal(t, "concert.n", got.Examples[0].ID)
	assert.Equal(t, "SELECT count(*) FROM concert.singer AS s JOIN concert.singer_in_concert USING (Singer_ID)", got.Examples[0].SQL)
	assert.NoError(t, got.Validate(context.Background(), c.Schema(), c), "the merged base holds against the catalog")
	assert.Equal(t, "Performers.", kb.Tables[0].Description)
	assert.Equal(t, "singer", kb.Tables[0].Table, "the member's base is unchanged")
}

func TestNewRefusesBadCatalogs(t *testing.T) {
	ex, err := sqlite.Open(shareddata.SpiderDB(t, "concert_singer"), sqlite.Options{})
	require.NoError(t, err)
	defer ex.Close()
	for _, dbs := range [][]catalog.Database{
		nil,
		{{Name: "", Executor: ex}},
		{{Name: "1st", Executor: ex}},
		{{Name: "a.b", Executor: ex}},
		{{Name: "a", Executor: ex}, {Name: "A", Executor: ex}},
		{{Name: "a"}},
	} {
		_, err := catalog.New(dbs, catalog.Options{})
		assert.ErrorIs(t, err, text2sql.ErrInvalidConfig, "%v", dbs)
	}
	_, err = catalog.New([]catalog.Database{{Name: "a", Executor: ex}}, catalog.Options{MaxRows: -1})
	assert.ErrorIs(t, err, text2sql.ErrInvalidConfig)
}

func TestDataVersionAndClose(t *testing.T) {
	c := open(t, catalog.Options{}, concertPets...)
	ctx := context.Background()
	v, err := c.DataVersion(ctx)
	require.NoError(t, err)
	assert.Regexp(t, `^concert=.+;pets=.+$`, v)
	require.NoError(t, c.Close())
	_, err = c.Execute(ctx, text2sql.ExecuteRequest{SQL: "SELECT 1"})
	assert.Error(t, err)
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, err = open(t, catalog.Options{}, concertPets...).Execute(cancelled, text2sql.ExecuteRequest{SQL: "SELECT count(*) FROM concert.singer"})
	assert.True(t, errors.Is(err, context.Canceled), "%v", err)
}

func TestConcurrentMerges(t *testing.T) {
	c := open(t, catalog.Options{}, concertPets...)
	q := "WITH s AS (SELECT count(*) AS n FROM concert.singer), t AS (SELECT count(*) AS n FROM pets.Student) SELECT s.n + t.n FROM s, t"
	want := attached(t, "SELECT (SELECT count(*) FROM concert.singer) + (SELECT count(*) FROM pets.Student)")
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			res, err := c.Execute(context.Background(), text2sql.ExecuteRequest{SQL: q})
			if assert.NoError(t, err) && assert.Nil(t, res.Error) {
				assert.Equal(t, want, res.Rows)
			}
		})
	}
	wg.Wait()
	left, err := filepath.Glob(filepath.Join(os.TempDir(), "text2sql-merge-*"))
	require.NoError(t, err)
	assert.Empty(t, left, "merge databases are removed")
}

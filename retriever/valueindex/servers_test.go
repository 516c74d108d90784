package valueindex_test

import (
	"context"
	"database/sql"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/dbtest"
	"github.com/text2sql-go/text2sql/retriever/valueindex"
	"github.com/text2sql-go/text2sql/schema"
)

// serverIndex loads racing drivers into db through a table and a column
// whose names need quoting, and builds the value index of its schema.
func serverIndex(t *testing.T, db *sql.DB, sch func() (*schema.Database, error), create string, q func(string) string) (*valueindex.Index, string) {
	t.Helper()
	dbtest.Exec(t, db, create,
		"INSERT INTO "+q("Racing Drivers")+" ("+q("Full Name")+", email, nationality) VALUES "+
			"('Lewis Hamilton', 'lewis@example.com', 'British'), ('Nico Rosberg', 'nico@example.com', 'German'), "+
			"('Sebastian Vettel', 'seb@example.com', 'German'), ('Sebastian Vettel', 'seb2@example.com', 'German')")
	s, err := sch()
	require.NoError(t, err)
	ix, err := valueindex.Build(context.Background(), db, s, valueindex.Options{})
	require.NoError(t, err)
	st := ix.Stats()
	assert.Equal(t, 2, st.Columns, "Full Name and nationality; not the key, not email")
	assert.Equal(t, 5, st.Values)
	assert.Empty(t, st.Skipped)
	tb := s.Lookup("Racing Drivers")
	require.NotNil(t, tb)
	return ix, tb.QualifiedName() // "public.Racing Drivers" on PostgreSQL
}

func checkRacing(t *testing.T, ix *valueindex.Index, table string) {
	t.Helper()
	hits := ix.Match("Which races did Lewis Hamiltn win against German drivers?", valueindex.MatchOptions{})
	require.Len(t, hits, 2, "%+v", hits)
	assert.Equal(t, table, hits[0].Table)
	assert.Equal(t, "Full Name", hits[0].Column)
	assert.Equal(t, "Lewis Hamilton", hits[0].Value)
	assert.Equal(t, "German", hits[1].Value)
	assert.Empty(t, ix.Match("lewis@example.com", valueindex.MatchOptions{Threshold: 1}), "e-mail addresses are not indexed")
}

func TestBuildPostgres(t *testing.T) {
	db, _ := dbtest.Postgres(t)
	q := func(s string) string { return schema.Quote(text2sql.DialectPostgres, s) }
	ix, table := serverIndex(t, db, func() (*schema.Database, error) { return schema.InspectPostgres(context.Background(), db, nil) },
		`CREATE TABLE "Racing Drivers" (id serial PRIMARY KEY, "Full Name" text, email varchar(80), nationality varchar(40))`, q)
	checkRacing(t, ix, table)
}

func TestBuildMySQL(t *testing.T) {
	db, _ := dbtest.MySQL(t)
	q := func(s string) string { return schema.Quote(text2sql.DialectMySQL, s) }
	ix, table := serverIndex(t, db, func() (*schema.Database, error) { return schema.InspectMySQL(context.Background(), db) },
		"CREATE TABLE `Racing Drivers` (id INT AUTO_INCREMENT PRIMARY KEY, `Full Name` TEXT, email VARCHAR(80), nationality VARCHAR(40))", q)
	checkRacing(t, ix, table)
}

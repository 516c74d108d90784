package catalog_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/executor/catalog"
)

// BenchmarkExecuteOneDatabase: a statement of one database of a catalog:
// the split, the rewrite and the member's guarded execution.
func BenchmarkExecuteOneDatabase(b *testing.B) {
	benchExecute(b, "SELECT Name, Age FROM concert.singer WHERE Age > 30 ORDER BY Age")
}

// BenchmarkExecuteAcross: two steps, the private merge file (created,
// loaded, opened through the SQLite guard, removed) and the final query.
func BenchmarkExecuteAcross(b *testing.B) {
	benchExecute(b, "WITH s AS (SELECT Name, Age FROM concert.singer), st AS (SELECT Age FROM pets.Student) "+
		"SELECT s.Name, count(st.Age) FROM s LEFT JOIN st ON st.Age < s.Age GROUP BY s.Name")
}

func benchExecute(b *testing.B, q string) {
	c := open(b, catalog.Options{}, concertPets...)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		res, err := c.Execute(ctx, text2sql.ExecuteRequest{SQL: q})
		require.NoError(b, err)
		require.Nil(b, res.Error)
	}
}

package mysql

import (
	"context"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/dbtest"
)

// benchQueries are the statements of BenchmarkExecute and
// BenchmarkPooledQuery by the rows they return.
var benchQueries = []struct{ name, sql string }{
	{"rows=1", "SELECT Name FROM singer WHERE Age > 50"},
	{"rows=1000", "SELECT id, name, age FROM people"},
}

// benchFixture is securityFixture and a table of 1,000 people.
var benchFixture = append(slices.Clip(securityFixture),
	"CREATE TABLE people (id INT PRIMARY KEY, name VARCHAR(40), age INT)",
	"INSERT INTO people WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 1000) SELECT n, CONCAT('person ', n), n % 90 FROM c")

// What the guard costs per statement: BenchmarkExecute runs a query
// through the executor (check, a clean session, read-only transaction,
// prepare, execute, rollback); BenchmarkPooledQuery runs the same query
// on a pooled connection of the driver without any of it.
func BenchmarkExecute(b *testing.B) {
	db, dsn := dbtest.MySQL(b)
	dbtest.Exec(b, db, benchFixture...)
	e, err := Open(context.Background(), dsn, Options{})
	require.NoError(b, err)
	defer e.Close()
	for _, q := range benchQueries {
		b.Run(q.name, func(b *testing.B) {
			for b.Loop() {
				res, err := e.Execute(context.Background(), text2sql.ExecuteRequest{SQL: q.sql})
				require.False(b, err != nil || res.Error != nil, "%v %v", err, res.Error)
			}
		})
	}
}

func BenchmarkPooledQuery(b *testing.B) {
	db, _ := dbtest.MySQL(b)
	dbtest.Exec(b, db, benchFixture...)
	for _, q := range benchQueries {
		b.Run(q.name, func(b *testing.B) {
			for b.Loop() {
				rows, err := db.Query(q.sql)
				require.NoError(b, err)
				for rows.Next() {
				}
				require.NoError(b, rows.Close())
			}
		})
	}
}

// BenchmarkGuard is the statement check alone, on a BIRD-sized query.
func BenchmarkGuard(b *testing.B) {
	c := NewGuard("", nil)
	q := "SELECT T2.major_name FROM member AS T1 INNER JOIN major AS T2 ON T1.link_to_major = T2.major_id WHERE T1.phone = '809-555-3360' ORDER BY T2.major_name LIMIT 10"
	for b.Loop() {
		se := c.CheckSQL(q)
		require.Nil(b, se, se)
	}
}

// BenchmarkOpen is the cost of making an executor: the server's version
// and grants, the schema, and deciding which allow-listed names are the
// server's built-ins (builtinsOnly).
func BenchmarkOpen(b *testing.B) {
	db, dsn := dbtest.MySQL(b)
	dbtest.Exec(b, db, securityFixture...)
	for b.Loop() {
		e, err := Open(context.Background(), dsn, Options{})
		require.NoError(b, err)
		e.Close()
	}
}

// BenchmarkBuiltins is builtinsOnly alone.
func BenchmarkBuiltins(b *testing.B) {
	db, _ := dbtest.MySQL(b)
	for b.Loop() {
		require.NoError(b, NewGuard("", nil).builtinsOnly(context.Background(), db, nil))
	}
}

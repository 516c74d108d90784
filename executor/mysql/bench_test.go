package mysql

import (
	"context"
	"database/sql"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/text2sql-go/text2sql/internal/dbtest"
	"github.com/text2sql-go/text2sql/internal/exectest"
)

// benchQueries are the statements of the guarded-against-plain
// benchmarks by the rows they return.
var benchQueries = []exectest.BenchQuery{
	{Name: "rows=1", SQL: "SELECT Name FROM singer WHERE Age > 50"},
	{Name: "rows=1000", SQL: "SELECT id, name, age FROM people"},
}

// benchFixture is securityFixture and a table of 1,000 people.
var benchFixture = append(slices.Clip(securityFixture),
	"CREATE TABLE people (id INT PRIMARY KEY, name VARCHAR(40), age INT)",
	"INSERT INTO people WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 1000) SELECT n, CONCAT('person ', n), n % 90 FROM c")

// benchSetup returns a database holding benchFixture, a plain handle on
// it and an executor opened on it.
func benchSetup(b *testing.B) (*sql.DB, *Executor) {
	db, dsn := dbtest.MySQL(b)
	dbtest.Exec(b, db, benchFixture...)
	e, err := Open(context.Background(), dsn, Options{})
	require.NoError(b, err)
	b.Cleanup(func() { e.Close() })
	return db, e
}

// BenchmarkExecute compares the guarded executor (check, a clean
// session, read-only transaction, the statement, the reset) with the
// same query through plain database/sql on a pooled connection, whose
// rows are scanned, every column, as a client reads them
// (exectest.BenchExecute); allocations reported.
func BenchmarkExecute(b *testing.B) {
	db, e := benchSetup(b)
	exectest.BenchExecute(b, e, db, benchQueries)
}

// BenchmarkOverhead measures the ratio guarded/plain with the two
// interleaved call by call (exectest.BenchOverhead; the targets are
// 1.5 at 1,000 rows and 3.9 at 1 row).
func BenchmarkOverhead(b *testing.B) {
	db, e := benchSetup(b)
	exectest.BenchOverhead(b, e, db, benchQueries)
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

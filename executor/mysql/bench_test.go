package mysql

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/dbtest"
)

// The cost of a connection per statement: BenchmarkExecute runs a small
// query through the executor (check, fresh connection with the session
// pinned, read-only transaction, prepare, execute, rollback, close);
// BenchmarkPooledQuery runs the same query on a pooled connection of the
// driver without any of it. The difference is what the guard costs per
// statement.
func BenchmarkExecute(b *testing.B) {
	db, dsn := dbtest.MySQL(b)
	dbtest.Exec(b, db, securityFixture...)
	e, err := Open(context.Background(), dsn, Options{})
	require.NoError(b, err)
	defer e.Close()
	for b.Loop() {
		res, err := e.Execute(context.Background(), text2sql.ExecuteRequest{SQL: "SELECT Name FROM singer WHERE Age > 30"})
		require.False(b, err != nil || res.Error != nil, "%v %v", err, res.Error)
	}
}

func BenchmarkPooledQuery(b *testing.B) {
	db, _ := dbtest.MySQL(b)
	dbtest.Exec(b, db, securityFixture...)
	for b.Loop() {
		rows, err := db.Query("SELECT Name FROM singer WHERE Age > 30")
		require.NoError(b, err)
		for rows.Next() {
		}
		rows.Close()
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

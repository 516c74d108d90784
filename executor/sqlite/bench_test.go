package sqlite

import (
	"database/sql"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/text2sql-go/text2sql/guard"
	"github.com/text2sql-go/text2sql/internal/exectest"
)

// benchQueries are the 1-row and the 1,000-row query of the benchmarks.
var benchQueries = []exectest.BenchQuery{
	{Name: "1row", SQL: "SELECT id, label, half FROM big WHERE id = 500"},
	{Name: "1000rows", SQL: "SELECT id, label, half FROM big"},
}

// benchSetup returns the guarded executor and plain database/sql
// (go-sqlite3, read-only DSN) over a 1,000-row table.
func benchSetup(b *testing.B) (*Executor, *sql.DB) {
	path := bigDB(b, 1000)
	e := open(b, path, Options{})
	plain, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	require.NoError(b, err)
	b.Cleanup(func() { plain.Close() })
	return e, plain
}

// BenchmarkExecute compares the guarded executor with plain database/sql
// on a 1-row and a 1,000-row result, and on 1,000 calls of instr and
// replace, which the guarded connection replaces with its linear-time
// equivalents (bounds.c) and plain database/sql runs as SQLite's
// built-ins.
func BenchmarkExecute(b *testing.B) {
	e, plain := benchSetup(b)
	exectest.BenchExecute(b, e, plain, append(benchQueries,
		exectest.BenchQuery{Name: "instr", SQL: "SELECT count(*) FROM big WHERE instr(label, '99') > 0"},
		exectest.BenchQuery{Name: "replace", SQL: "SELECT max(replace(label, 'row', 'r')) FROM big"}))
}

// BenchmarkOverhead measures the ratio guarded/plain with the two
// interleaved call by call (the target is below 1.10 for 1,000 rows).
func BenchmarkOverhead(b *testing.B) {
	e, plain := benchSetup(b)
	exectest.BenchOverhead(b, e, plain, benchQueries)
}

// BenchmarkShape measures the lexical check alone (guard.Shape), on the
// benchmark queries.
func BenchmarkShape(b *testing.B) {
	for _, q := range benchQueries {
		b.Run(q.Name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, se := guard.Shape(q.SQL); se != nil {
					b.Fatal(se)
				}
			}
		})
	}
}

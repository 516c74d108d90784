package postgres

import (
	"context"
	"database/sql"
	"testing"
	"time"

	text2sql "github.com/text2sql-go/text2sql"
)

// benchQueries are the 1-row and the 1,000-row query of the benchmarks,
// and a 1-row query whose qualified columns and function call the
// resolution probe confirms.
var benchQueries = []struct{ name, sql string }{
	{"1row", "SELECT id, label, half FROM big WHERE id = 500"},
	{"1000rows", "SELECT id, label, half FROM big"},
	{"1row-probed", "SELECT b.id, lower(b.label), b.half FROM big b WHERE b.id = 500"},
}

func benchSetup(b *testing.B) (*sql.DB, *Executor) {
	db, _ := testDB(b, `CREATE TABLE big (id int PRIMARY KEY, label text, half int)`,
		`INSERT INTO big SELECT g, 'label ' || g, g / 2 FROM generate_series(1, 1000) g`, `ANALYZE big`)
	db.SetMaxOpenConns(1)
	return db, newExec(b, db, Options{})
}

func guarded(b *testing.B, e *Executor, q string) {
	res, err := e.Execute(context.Background(), text2sql.ExecuteRequest{SQL: q})
	if err != nil || res.Error != nil || res.RowCount == 0 {
		b.Fatal(err, res.Error)
	}
}

// plain runs q through plain database/sql (pgx stdlib, rows scanned into
// []any), the baseline.
func plain(b *testing.B, db *sql.DB, q string) {
	rows, err := db.QueryContext(context.Background(), q)
	if err != nil {
		b.Fatal(err)
	}
	cols, _ := rows.Columns()
	var out [][]any
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			b.Fatal(err)
		}
		out = append(out, vals)
	}
	rows.Close()
	if len(out) == 0 {
		b.Fatal("no rows")
	}
}

// BenchmarkExecute compares the guarded executor with plain database/sql
// on a 1-row and a 1,000-row result, on the same single-connection handle.
func BenchmarkExecute(b *testing.B) {
	db, e := benchSetup(b)
	for _, bq := range benchQueries {
		b.Run("guarded/"+bq.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				guarded(b, e, bq.sql)
			}
		})
		b.Run("plain/"+bq.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				plain(b, db, bq.sql)
			}
		})
	}
}

// BenchmarkOverhead measures the ratio guarded/plain with the two
// interleaved call by call, so that load from other processes hits both
// alike: the metric "ratio" is the total guarded time over the total
// plain time (the target is below 1.10 for 1,000 rows).
func BenchmarkOverhead(b *testing.B) {
	db, e := benchSetup(b)
	for _, bq := range benchQueries {
		b.Run(bq.name, func(b *testing.B) {
			var g, p time.Duration
			i := 0
			for b.Loop() {
				if i%2 == 0 {
					t0 := time.Now()
					guarded(b, e, bq.sql)
					t1 := time.Now()
					plain(b, db, bq.sql)
					g, p = g+t1.Sub(t0), p+time.Since(t1)
				} else {
					t0 := time.Now()
					plain(b, db, bq.sql)
					t1 := time.Now()
					guarded(b, e, bq.sql)
					p, g = p+t1.Sub(t0), g+time.Since(t1)
				}
				i++
			}
			b.ReportMetric(float64(g)/float64(p), "ratio")
			b.ReportMetric(float64(g.Microseconds())/float64(i), "guarded-µs/op")
			b.ReportMetric(float64(p.Microseconds())/float64(i), "plain-µs/op")
		})
	}
}

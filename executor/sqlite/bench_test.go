package sqlite

import (
	"context"
	"database/sql"
	"testing"

	text2sql "github.com/text2sql-go/text2sql"
)

// BenchmarkExecute compares the guarded executor with plain database/sql
// (go-sqlite3, read-only DSN, rows scanned into []any) on a 1-row and a
// 1,000-row result.
func BenchmarkExecute(b *testing.B) {
	path := bigDB(b, 1000)
	e := open(b, path, Options{})
	plain, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	if err != nil {
		b.Fatal(err)
	}
	defer plain.Close()
	queries := map[string]string{
		"1row":     "SELECT id, label, half FROM big WHERE id = 500",
		"1000rows": "SELECT id, label, half FROM big",
	}
	for _, name := range []string{"1row", "1000rows"} {
		q := queries[name]
		b.Run("guarded/"+name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				res, err := e.Execute(context.Background(), text2sql.ExecuteRequest{SQL: q})
				if err != nil || res.Error != nil || res.RowCount == 0 {
					b.Fatal(err, res.Error)
				}
			}
		})
		b.Run("plain/"+name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				rows, err := plain.QueryContext(context.Background(), q)
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
		})
	}
}

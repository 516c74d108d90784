package postgres

import (
	"context"
	"database/sql"
	"testing"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/identity"
	"github.com/text2sql-go/text2sql/internal/dbtest"
	"github.com/text2sql-go/text2sql/internal/exectest"
)

// benchQueries are the 1-row and the 1,000-row query of the benchmarks,
// and a 1-row query whose qualified columns and function call the
// resolution probe confirms.
var benchQueries = []exectest.BenchQuery{
	{Name: "1row", SQL: "SELECT id, label, half FROM big WHERE id = 500"},
	{Name: "1000rows", SQL: "SELECT id, label, half FROM big"},
	{Name: "1row-probed", SQL: "SELECT b.id, lower(b.label), b.half FROM big b WHERE b.id = 500"},
}

func benchSetup(b *testing.B) (*sql.DB, *Executor) {
	db, _ := testDB(b, `CREATE TABLE big (id int PRIMARY KEY, label text, half int)`,
		`INSERT INTO big SELECT g, 'label ' || g, g / 2 FROM generate_series(1, 1000) g`, `ANALYZE big`)
	db.SetMaxOpenConns(1)
	return db, newExec(b, db, Options{})
}

// BenchmarkExecute compares the guarded executor with plain database/sql
// (pgx stdlib) on a 1-row and a 1,000-row result, on the same
// single-connection handle.
func BenchmarkExecute(b *testing.B) {
	db, e := benchSetup(b)
	exectest.BenchExecute(b, e, db, benchQueries)
}

// BenchmarkOverhead measures the ratio guarded/plain with the two
// interleaved call by call (the target is below 1.10 for 1,000 rows).
func BenchmarkOverhead(b *testing.B) {
	db, e := benchSetup(b)
	exectest.BenchOverhead(b, e, db, benchQueries)
}

// BenchmarkExecuteAsCaller measures what running as the caller costs: the
// 1-row query as the login, and with the role and RLS claims chosen for a
// principal (one more extended-protocol step in the same round trip).
func BenchmarkExecuteAsCaller(b *testing.B) {
	db, plain := benchSetup(b)
	role := dbtest.Name("t2s_bench")
	dbtest.Exec(b, db, `CREATE ROLE `+role+` NOLOGIN`, `GRANT SELECT ON big TO `+role)
	b.Cleanup(func() { _, _ = db.Exec(`DROP OWNED BY ` + role + `; DROP ROLE ` + role) })
	caller := newExec(b, db, Options{RoleFor: RoleMap(map[string]string{"alice": role}), Claims: true})
	ctx := identity.WithPrincipal(context.Background(), &identity.Principal{ID: "alice", Claims: map[string]any{"aal": "aal1"}})
	req := text2sql.ExecuteRequest{SQL: benchQueries[0].SQL}
	for name, run := range map[string]func() (*text2sql.Result, error){
		"login":  func() (*text2sql.Result, error) { return plain.Execute(context.Background(), req) },
		"caller": func() (*text2sql.Result, error) { return caller.Execute(ctx, req) },
	} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				res, err := run()
				if err != nil || res.Error != nil {
					b.Fatal(err, res.Error)
				}
			}
		})
	}
}

// BenchmarkCheck measures the statement check alone (no server), on the
// benchmark queries: CheckSQL, which parses and walks the statement each
// time, and prepare on a statement the Guard kept.
func BenchmarkCheck(b *testing.B) {
	g := NewGuard(nil, nil)
	for _, q := range benchQueries {
		b.Run(q.Name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if se := g.CheckSQL(q.SQL); se != nil {
					b.Fatal(se)
				}
			}
		})
		b.Run("kept/"+q.Name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, se := g.prepare(q.SQL); se != nil {
					b.Fatal(se)
				}
			}
		})
	}
}

// Package exectest holds the assertions and benchmarks the guarded
// executors' tests (executor, executor/sqlite, executor/postgres,
// executor/mysql, executor/catalog, executor/mcpexec) share: running a
// query that must not fail in Go, asserting the kind of a failed result
// or that it was refused, reading an error as a *text2sql.SQLError, and
// the guarded-against-plain benchmark.
package exectest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/executor/executortest"
	"github.com/text2sql-go/text2sql/internal/dbtest"
)

// Run executes query on e and returns the result; a Go error, or a
// RowCount that is not len(Rows), fails the test.
func Run(tb testing.TB, e text2sql.Executor, query string) *text2sql.Result {
	tb.Helper()
	res, err := e.Execute(context.Background(), text2sql.ExecuteRequest{SQL: query})
	require.NoError(tb, err, "Execute(%q): Go error", query)
	require.Equal(tb, len(res.Rows), res.RowCount, "RowCount != len(Rows)")
	return res
}

// WantKind asserts that res failed with kind, that a refusal (and only a
// refusal) matches text2sql.ErrRefused, and that the failed result
// carries no rows; query names the statement in the messages.
func WantKind(tb testing.TB, query string, res *text2sql.Result, kind text2sql.ErrorKind) {
	tb.Helper()
	require.NotNil(tb, res.Error, "%q: no error, rows %v; want %s", query, res.Rows, kind)
	require.Equal(tb, kind, res.Error.Kind, "%q: kind (%s)", query, res.Error.Message)
	require.Equal(tb, kind.Refusal(), errors.Is(res.Error, text2sql.ErrRefused), "%q: errors.Is(ErrRefused) for kind %s", query, kind)
	require.False(tb, len(res.Rows) != 0 || res.Truncated, "%q: an error result carries rows", query)
}

// RunKind runs query on e (Run) and asserts that it failed with kind
// (WantKind); it returns the result for the caller's own checks.
func RunKind(tb testing.TB, e text2sql.Executor, query string, kind text2sql.ErrorKind) *text2sql.Result {
	tb.Helper()
	res := Run(tb, e, query)
	WantKind(tb, query, res, kind)
	return res
}

// RunRefused runs query on e (Run) and asserts that it was refused, with
// whichever kind of refusal (text2sql.ErrorKind.Refusal): the error
// matches text2sql.ErrRefused and the result carries no rows. It returns
// the result for the caller's own checks.
func RunRefused(tb testing.TB, e text2sql.Executor, query string) *text2sql.Result {
	tb.Helper()
	res := Run(tb, e, query)
	require.NotNil(tb, res.Error, "%q: no error, rows %v; want a refusal", query, res.Rows)
	require.True(tb, res.Error.Kind.Refusal(), "%q: not a refusal: %v", query, res.Error)
	WantKind(tb, query, res, res.Error.Kind)
	return res
}

// RefusedUntripped asserts that each of queries is refused on e
// (RunRefused) before the database's trap functions run: no error
// message holds trap, the text they raise when they run.
func RefusedUntripped(tb testing.TB, e text2sql.Executor, trap string, queries ...string) {
	tb.Helper()
	for _, q := range queries {
		assert.NotContains(tb, RunRefused(tb, e, q).Error.Message, trap, q)
	}
}

// SQLError returns err as a *text2sql.SQLError: nil for nil, the error
// itself when it is one, else a SQLError of kind "go-error" with err's
// message, so that a Go error shows in a comparison of kinds.
func SQLError(err error) *text2sql.SQLError {
	if err == nil {
		return nil
	}
	var se *text2sql.SQLError
	if errors.As(err, &se) {
		return se
	}
	return &text2sql.SQLError{Kind: "go-error", Message: err.Error()}
}

// BenchQuery is a named query of BenchExecute.
type BenchQuery struct{ Name, SQL string }

// guarded runs q on e; an error or an empty result fails the benchmark.
func guarded(b *testing.B, e text2sql.Executor, q string) {
	res, err := e.Execute(context.Background(), text2sql.ExecuteRequest{SQL: q})
	if err != nil || res.Error != nil || res.RowCount == 0 {
		b.Fatal(err, res.Error)
	}
}

// plain runs q through plain database/sql, the baseline; an error or an
// empty result fails the benchmark.
func plain(b *testing.B, db *sql.DB, q string) {
	rows, err := dbtest.Rows(db, q)
	if err != nil || len(rows) == 0 {
		b.Fatal(err, "rows:", len(rows))
	}
}

// BenchExecute compares the guarded executor e with plain database/sql
// on db (rows scanned into []any) for each query: sub-benchmarks
// "guarded/<name>" and "plain/<name>", allocations reported.
func BenchExecute(b *testing.B, e text2sql.Executor, db *sql.DB, queries []BenchQuery) {
	for _, bq := range queries {
		b.Run("guarded/"+bq.Name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				guarded(b, e, bq.SQL)
			}
		})
		b.Run("plain/"+bq.Name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				plain(b, db, bq.SQL)
			}
		})
	}
}

// benchRuns numbers the runs of BenchOverhead's sub-benchmarks, so that
// the texts of "<name>/new" differ across runs (-count) too.
var benchRuns atomic.Int64

// BenchOverhead measures the ratio guarded/plain for each query with the
// two interleaved call by call, so that load from other processes hits
// both alike: per query, one sub-benchmark of the same text run again
// (what an executor may remember of a statement it accepted helps) and
// one, "<name>/new", whose text differs on every call, in every run, by a
// trailing comment, as a pipeline's new question does (nothing
// remembered helps either side). Each reports "ratio" (the total guarded
// time over the total plain time) and the mean "guarded-µs/op" and
// "plain-µs/op"; allocations are those of both sides.
func BenchOverhead(b *testing.B, e text2sql.Executor, db *sql.DB, queries []BenchQuery) {
	for _, bq := range queries {
		for _, fresh := range []bool{false, true} {
			name := bq.Name
			if fresh {
				name += "/new"
			}
			b.Run(name, func(b *testing.B) {
				b.ReportAllocs()
				run := benchRuns.Add(1)
				var g, p time.Duration
				i := 0
				for b.Loop() {
					q := bq.SQL
					if fresh {
						q += fmt.Sprintf(" /* %d.%d */", run, i)
					}
					if i%2 == 0 {
						t0 := time.Now()
						guarded(b, e, q)
						t1 := time.Now()
						plain(b, db, q)
						g, p = g+t1.Sub(t0), p+time.Since(t1)
					} else {
						t0 := time.Now()
						plain(b, db, q)
						t1 := time.Now()
						guarded(b, e, q)
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
}

// TopicsCheckKinds returns the statements on a table topics (id, name)
// whose Check result is the same on every engine, with the kind each
// gives: unknown table and column, syntax errors, a write, two
// statements, a blank text, and dbtest.Unbounded, which Check accepts ("") at
// once because it does not run it (with an executor time limit far below
// the query's run time, running it would fail). Callers add their
// engine's own cases.
func TopicsCheckKinds() map[string]text2sql.ErrorKind {
	return map[string]text2sql.ErrorKind{
		dbtest.Unbounded:                "",
		"SELECT name FROM topic":        text2sql.KindUnknownTable,
		"SELECT nme FROM topics":        text2sql.KindUnknownColumn,
		"SELEC name FROM topics":        text2sql.KindSyntax,
		"SELECT name FROM topics WHERE": text2sql.KindSyntax,
		"DELETE FROM topics":            text2sql.KindNotReadOnly,
		"SELECT 1; SELECT 2":            text2sql.KindMultipleStatements,
		"  ":                            text2sql.KindEmpty,
	}
}

// WantCheck asserts that g.Check of each statement of cases fails with
// its kind, or passes where the kind is "".
func WantCheck(tb testing.TB, g text2sql.Guard, cases map[string]text2sql.ErrorKind) {
	tb.Helper()
	for q, kind := range cases {
		se := SQLError(g.Check(context.Background(), q))
		if kind == "" {
			assert.Nil(tb, se, "Check(%q)", q)
		} else if assert.NotNil(tb, se, "Check(%q)", q) {
			assert.Equal(tb, kind, se.Kind, "Check(%q) = %v", q, se)
		}
	}
}

// DeepStatements returns statements too deep or too long for any
// engine's parser, which every executor's check must refuse as
// KindTooLarge before a parser sees them: 30,000 additions, a
// 65,000-arm UNION, 5,000 nested parentheses, 400,000 select items and
// an IN list as long. Callers add their engine's own.
func DeepStatements() []string {
	return []string{
		"SELECT 1" + strings.Repeat("+1", 30000),
		strings.Repeat("SELECT 1 UNION ", 65000) + "SELECT 1",
		"SELECT " + strings.Repeat("(", 5000) + "1" + strings.Repeat(")", 5000),
		"SELECT 1" + strings.Repeat(",1", 400000),
		"SELECT 1 IN (1" + strings.Repeat(",1", 400000) + ")",
	}
}

// Versioned is an executor that reports its data version.
type Versioned interface {
	DataVersion(ctx context.Context) (string, error)
}

// VersionMoves reads e's data version, then runs each write in turn (write
// fails tb itself) and requires the version read after it to be one not
// seen before.
func VersionMoves(tb testing.TB, e Versioned, write func(stmt string), stmts ...string) {
	tb.Helper()
	version := func() string {
		tb.Helper()
		v, err := e.DataVersion(context.Background())
		require.NoError(tb, err)
		return v
	}
	seen := map[string]bool{version(): true}
	for _, stmt := range stmts {
		write(stmt)
		v := version()
		assert.False(tb, seen[v], "%s left the version at %s", stmt, v)
		seen[v] = true
	}
}

// Conforms runs e, opened with error err, through the Executor kit
// (executortest.TestExecutor) on fx with the forbidden function call
// forbidden (see Fixture.ForbiddenFunction). An err fails tb at once; e is
// closed when tb ends.
func Conforms(tb testing.TB, e interface {
	text2sql.Executor
	io.Closer
}, err error, fx executortest.Fixture, forbidden string) {
	tb.Helper()
	require.NoError(tb, err)
	tb.Cleanup(func() { e.Close() })
	fx.ForbiddenFunction = forbidden
	assert.NoError(tb, executortest.TestExecutor(e, fx))
}

package valueindex_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"
	"github.com/stretchr/testify/require"

	"github.com/text2sql-go/text2sql/executor/sqlite"
	"github.com/text2sql-go/text2sql/internal/cputime"
	"github.com/text2sql-go/text2sql/retriever/valueindex"
)

var (
	firstNames = []string{"Ada", "Alan", "Barbara", "Claude", "Donald", "Edsger", "Frances", "Grace", "John", "Ken", "Leslie", "Margaret", "Niklaus", "Radia", "Robin", "Shafi", "Tim", "Tony", "Vint", "Whitfield"}
	lastNames  = []string{"Lovelace", "Turing", "Liskov", "Shannon", "Knuth", "Dijkstra", "Allen", "Hopper", "McCarthy", "Thompson", "Lamport", "Hamilton", "Wirth", "Perlman", "Milner", "Goldwasser", "Berners-Lee", "Hoare", "Cerf", "Diffie"}
	cities     = []string{"Aberdeen", "Abilene", "Kabul", "Rotterdam", "São Paulo", "Zürich", "Monte Carlo", "Silverstone", "Anthony", "Hamilton"}
)

// synthName is a deterministic person name with a number, many distinct.
func synthName(r *rand.Rand) string {
	return fmt.Sprintf("%s %s %d", firstNames[r.IntN(len(firstNames))], lastNames[r.IntN(len(lastNames))], r.IntN(100000))
}

// millionRows writes a SQLite database with a table of n rows: a name
// column with about n/2 distinct values, a city of 10 and a status of 3.
func millionRows(tb testing.TB, n int) string {
	path := filepath.Join(tb.TempDir(), "rows.sqlite")
	db, err := sql.Open("sqlite3", path)
	require.NoError(tb, err)
	defer db.Close()
	_, err = db.Exec(`CREATE TABLE people (id INTEGER PRIMARY KEY, name TEXT, city TEXT, status TEXT, email TEXT)`)
	require.NoError(tb, err)
	tx, err := db.Begin()
	require.NoError(tb, err)
	st, err := tx.Prepare(`INSERT INTO people VALUES (?, ?, ?, ?, ?)`)
	require.NoError(tb, err)
	r := rand.New(rand.NewPCG(42, 0)) // deterministic, no global state
	for i := range n {
		_, err := st.Exec(i, synthName(r), cities[r.IntN(len(cities))], []string{"active", "retired", "on leave"}[r.IntN(3)], fmt.Sprintf("u%d@example.com", i))
		require.NoError(tb, err)
	}
	require.NoError(tb, st.Close())
	require.NoError(tb, tx.Commit())
	return path
}

func heapMB() float64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.HeapAlloc) / (1 << 20)
}

// BenchmarkBuildMillionRows builds the index of a 1,000,000-row table
// (run with -benchtime=1x): one GROUP BY scan per text column (name,
// city, status; email is contact details), the name column cut to its
// 10,000 most frequent values by default, or whole ("all": 987,678
// distinct names).
func BenchmarkBuildMillionRows(b *testing.B) {
	path := millionRows(b, 1_000_000)
	ex, err := sqlite.Open(path, sqlite.Options{})
	require.NoError(b, err)
	defer ex.Close()
	for _, c := range []struct {
		name string
		opts valueindex.Options
		cut  []string
	}{
		{"default", valueindex.Options{}, []string{"people.name"}},
		{"all", valueindex.Options{MaxPerColumn: 1_000_000}, nil},
	} {
		b.Run(c.name, func(b *testing.B) {
			before := heapMB()
			var ix *valueindex.Index
			for range b.N {
				ix, err = valueindex.Build(context.Background(), ex.DB(), ex.Schema(), c.opts)
				require.NoError(b, err)
			}
			b.StopTimer()
			st := ix.Stats()
			b.ReportMetric(heapMB()-before, "index-MB")
			b.ReportMetric(float64(st.Values), "values")
			require.Equal(b, c.cut, st.Truncated)
			require.NotEmpty(b, ix.Match("people in Zurich", valueindex.MatchOptions{}))
		})
	}
}

// synthIndex is an index of n values in columns of 20 values each.
func synthIndex(tb testing.TB, n int) *valueindex.Index {
	var b valueindex.Builder
	r := rand.New(rand.NewPCG(7, 0)) // deterministic, no global state
	vals := make([]string, 0, 20)
	for c := 0; c*20 < n; c++ {
		vals = vals[:0]
		for range 20 {
			vals = append(vals, synthName(r))
		}
		b.Add(fmt.Sprintf("t%d", c/3), fmt.Sprintf("c%d", c%3), vals...)
	}
	return b.Index()
}

var matchQuestions = []string{
	"Which papers did Grace Hopper 4711 write?",
	"How many people live in Rotterdam or in Kabul?",
	"List the employees of Barbara Liskv's team hired after 2010",
	"What is the average salary per department?",
	"Show the courses taught by Edsger Dijkstra ordered by title",
}

// BenchmarkMatch1M: Match latency on an index of 1,000,000 values
// (p50 and p95 in µs, wall-clock and, as cpu-, the CPU time of the
// matching thread; build time and heap in BenchmarkIndex1M).
func BenchmarkMatch1M(b *testing.B) {
	ix := synthIndex(b, 1_000_000)
	var wall, cpu []time.Duration
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ResetTimer()
	for i := range b.N {
		c0, ok := cputime.Thread()
		t0 := time.Now()
		ix.Match(matchQuestions[i%len(matchQuestions)], valueindex.MatchOptions{})
		wall = append(wall, time.Since(t0))
		if c1, _ := cputime.Thread(); ok {
			cpu = append(cpu, c1-c0)
		}
	}
	reportPercentiles(b, wall, "")
	if len(cpu) > 0 {
		reportPercentiles(b, cpu, "cpu-")
	}
}

// reportPercentiles reports the p50 and p95 of ds, in µs, as
// prefix+"p50-µs" and prefix+"p95-µs".
func reportPercentiles(b *testing.B, ds []time.Duration, prefix string) {
	slices.Sort(ds)
	b.ReportMetric(float64(ds[len(ds)/2].Microseconds()), prefix+"p50-µs")
	b.ReportMetric(float64(ds[len(ds)*95/100].Microseconds()), prefix+"p95-µs")
}

// BenchmarkIndex1M: building the index of 1,000,000 values from memory.
func BenchmarkIndex1M(b *testing.B) {
	before := heapMB()
	var ix *valueindex.Index
	for range b.N {
		ix = synthIndex(b, 1_000_000)
	}
	b.StopTimer()
	b.ReportMetric(heapMB()-before, "index-MB")
	b.ReportMetric(float64(ix.Stats().Keys), "keys")
}

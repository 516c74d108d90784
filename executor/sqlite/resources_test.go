package sqlite

import (
	"context"
	"errors"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/exectest"
)

// bigDB returns a database with a table big of n rows (id, label, half).
func bigDB(t testing.TB, n int) string {
	t.Helper()
	return makeDB(t, "big.db", `CREATE TABLE big (id INTEGER PRIMARY KEY, label TEXT, half REAL);
		WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < `+strconv.Itoa(n)+`)
		INSERT INTO big SELECT n, 'row ' || n, n * 0.5 FROM c;`)
}

// C5 #31: a 1,000,000-row table, SELECT * with a cap of 1,000: 1,000 rows,
// truncated, and the memory used does not depend on the table's size.
func TestC5RowCapBigTable(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 1,000,000-row table")
	}
	bigPath := bigDB(t, 1_000_000)
	untouched(t, bigPath)
	big := open(t, bigPath, Options{MaxRows: 1000})
	small := open(t, bigDB(t, 2000), Options{MaxRows: 1000})

	res := exectest.Run(t, big, "SELECT * FROM big")
	require.False(t, res.Error != nil || res.RowCount != 1000 || !res.Truncated, "error %v, %d rows, truncated %v", res.Error, res.RowCount, res.Truncated)
	require.False(t, !reflect.DeepEqual(res.Columns, []string{"id", "label", "half"}) ||
		!reflect.DeepEqual(res.Rows[999], []any{int64(1000), "row 1000", 500.0}), "columns %q, last row %v", res.Columns, res.Rows[999])
	// A request's cap wins over the option.
	res, _ = big.Execute(context.Background(), text2sql.ExecuteRequest{SQL: "SELECT * FROM big", MaxRows: 10})
	require.False(t, res.RowCount != 10 || !res.Truncated, "request cap: %d rows, truncated %v", res.RowCount, res.Truncated)
	// Exactly at the cap is not truncated.
	res = exectest.Run(t, small, "SELECT * FROM big LIMIT 1000")
	require.False(t, res.RowCount != 1000 || res.Truncated, "at cap: %d rows, truncated %v", res.RowCount, res.Truncated)

	measure := func(e *Executor) (allocs float64, bytes uint64) {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		allocs = testing.AllocsPerRun(5, func() { exectest.Run(t, e, "SELECT * FROM big") })
		runtime.ReadMemStats(&after)
		return allocs, (after.TotalAlloc - before.TotalAlloc) / 6 // AllocsPerRun runs f once more to warm up
	}
	bigAllocs, bigBytes := measure(big)
	smallAllocs, smallBytes := measure(small)
	t.Logf("1,000,000-row table: %.0f allocs, %d bytes per call; 2,000-row table: %.0f allocs, %d bytes",
		bigAllocs, bigBytes, smallAllocs, smallBytes)
	assert.False(t, bigAllocs > smallAllocs*1.1+50 || bigBytes > smallBytes*2, "memory grows with the table: %.0f vs %.0f allocs, %d vs %d bytes", bigAllocs, smallAllocs, bigBytes, smallBytes)
	// 1,000,000 rows of three values would need tens of megabytes.
	assert.LessOrEqual(t, bigBytes, uint64(2<<20), "%d bytes allocated for a 1,000-row result", bigBytes)
}

func maxRSS(t *testing.T) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Skip("getrusage:", err)
	}
	return ru.Maxrss * 1024 // kilobytes on Linux
}

// C5 #41: values beyond the length limit fail with too_large; the process
// does not allocate gigabytes.
func TestC5HugeValues(t *testing.T) {
	path := makeDB(t, "x.db", "CREATE TABLE t (x)")
	untouched(t, path)
	rss := maxRSS(t)
	for _, opts := range []Options{{}, {skipTextCheck: true}} {
		e := open(t, path, opts)
		for _, q := range []string{
			"SELECT zeroblob(2000000000)",
			"SELECT printf('%.*c', 1000000000, 'x')",
			"SELECT length(replace(hex(zeroblob(1000000)), '0', '0000000000000000'))",
			"SELECT randomblob(2000000000)",
			"WITH RECURSIVE c(s) AS (SELECT 'x' UNION ALL SELECT s || s FROM c WHERE length(s) < 1e10) SELECT max(length(s)) FROM c",
		} {
			res := exectest.Run(t, e, q)
			exectest.WantKind(t, q, res, text2sql.KindTooLarge)
			assert.Contains(t, res.Error.Message, "10485760 bytes", "message %q does not give the limit", res.Error.Message)
		}
		// Under the limit is fine.
		res := exectest.Run(t, e, "SELECT length(zeroblob(1000000))")
		require.False(t, res.Error != nil || res.Rows[0][0] != int64(1000000), "%+v", res)
	}
	// A lower limit applies.
	e := open(t, path, Options{MaxLength: 1000})
	exectest.WantKind(t, "", exectest.Run(t, e, "SELECT zeroblob(1001)"), text2sql.KindTooLarge)
	grown := maxRSS(t) - rss
	assert.LessOrEqual(t, grown, int64(256<<20), "peak RSS grew by %d MiB", grown>>20)
}

const forever = "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) SELECT count(*) FROM c"

// A statement that runs forever is interrupted at the time limit and
// reported as timeout, not as a Go error; the caller's own cancellation
// is a Go error.
func TestTimeout(t *testing.T) {
	e := open(t, makeDB(t, "x.db", "CREATE TABLE t (x)"), Options{Timeout: 5 * time.Second})
	start := time.Now()
	res, err := e.Execute(context.Background(), text2sql.ExecuteRequest{SQL: forever, Timeout: 200 * time.Millisecond})
	took := time.Since(start)
	require.NoError(t, err, "Go error")
	exectest.WantKind(t, forever, res, text2sql.KindTimeout)
	assert.False(t, took < 200*time.Millisecond || took > 2*time.Second || res.Duration > 2*time.Second, "stopped after %v (Duration %v), limit 200ms", took, res.Duration)
	// The option's limit applies when the request has none.
	short := open(t, makeDB(t, "y.db", "CREATE TABLE t (x)"), Options{Timeout: 100 * time.Millisecond})
	exectest.WantKind(t, forever, exectest.Run(t, short, forever), text2sql.KindTimeout)
	// Also while rows are being read (the first rows come quickly).
	rowsForever := "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) SELECT n FROM c WHERE n % 1000000000 = 0"
	exectest.WantKind(t, rowsForever, exectest.Run(t, short, rowsForever), text2sql.KindTimeout)

	// The caller cancels: a Go error, context.Canceled.
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start = time.Now()
	res, err = e.Execute(ctx, text2sql.ExecuteRequest{SQL: forever})
	require.False(t, !errors.Is(err, context.Canceled) || res != nil, "caller cancellation: %v, %+v", err, res)
	took = time.Since(start)
	assert.LessOrEqual(t, took, 2*time.Second, "cancellation took %v", took)
	// The caller's own deadline is the caller's business too.
	ctx, cancel = context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err = e.Execute(ctx, text2sql.ExecuteRequest{SQL: forever})
	require.ErrorIs(t, err, context.DeadlineExceeded, "caller deadline: %v", err)
	// Already cancelled: nothing runs.
	_, err = e.Execute(ctx, text2sql.ExecuteRequest{SQL: "SELECT 1"})
	require.Error(t, err, "cancelled context accepted")
	// The executor still works afterwards, on every pooled connection.
	for i := 0; i < 8; i++ {
		res := exectest.Run(t, e, "SELECT 1")
		require.Nil(t, res.Error, "after timeouts: %v", res.Error)
	}
}

// Concurrent calls each get their own refusal kind and rows (run with
// -race).
func TestConcurrent(t *testing.T) {
	e := open(t, makeDB(t, "x.db", "CREATE TABLE t (x); INSERT INTO t VALUES (1), (2), (3);"), Options{MaxOpenConns: 3})
	cases := []struct {
		q    string
		kind text2sql.ErrorKind
	}{
		{"SELECT x FROM t", ""},
		{"SELECT load_extension('x')", text2sql.KindForbiddenFunction},
		{"SELECT nope FROM t", text2sql.KindUnknownColumn},
		{"DELETE FROM t", text2sql.KindNotReadOnly},
	}
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				c := cases[(w+i)%len(cases)]
				res, err := e.Execute(context.Background(), text2sql.ExecuteRequest{SQL: c.q})
				if !assert.NoError(t, err) {
					return
				}
				if !assert.False(t, c.kind == "" && (res.Error != nil || res.RowCount != 3) || c.kind != "" && (res.Error == nil || res.Error.Kind != c.kind), "%q: %+v", c.q, res) {
					return
				}
			}
		}(w)
	}
	wg.Wait()
}

// Many rows of large values stop at the result's byte bound with too_large
// instead of holding rows × MaxLength bytes in memory.
func TestResultByteBound(t *testing.T) {
	path := makeDB(t, "x.db", "CREATE TABLE t (x); WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM c WHERE n < 1000) INSERT INTO t SELECT n FROM c")
	rss := maxRSS(t)
	e := open(t, path, Options{MaxResultBytes: 8 << 20})
	q := "SELECT zeroblob(1000000) FROM t"
	res := exectest.Run(t, e, q)
	exectest.WantKind(t, q, res, text2sql.KindTooLarge)
	assert.False(t, !strings.Contains(res.Error.Message, "8388608 bytes") || res.Rows != nil, "%+v", res.Error)
	res = exectest.Run(t, e, "SELECT zeroblob(1000) FROM t")
	require.False(t, res.Error != nil || res.RowCount != 1000, "1000 x 1 KB under the bound: %+v", res.Error)
	grown := maxRSS(t) - rss
	assert.LessOrEqual(t, grown, int64(256<<20), "peak RSS grew by %d MiB", grown>>20)
}

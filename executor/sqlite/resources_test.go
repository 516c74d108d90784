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

	text2sql "github.com/text2sql-go/text2sql"
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

	res := run(t, big, "SELECT * FROM big")
	if res.Error != nil || res.RowCount != 1000 || !res.Truncated {
		t.Fatalf("error %v, %d rows, truncated %v", res.Error, res.RowCount, res.Truncated)
	}
	if !reflect.DeepEqual(res.Columns, []string{"id", "label", "half"}) ||
		!reflect.DeepEqual(res.Rows[999], []any{int64(1000), "row 1000", 500.0}) {
		t.Fatalf("columns %q, last row %v", res.Columns, res.Rows[999])
	}
	// A request's cap wins over the option.
	res, _ = big.Execute(context.Background(), text2sql.ExecuteRequest{SQL: "SELECT * FROM big", MaxRows: 10})
	if res.RowCount != 10 || !res.Truncated {
		t.Fatalf("request cap: %d rows, truncated %v", res.RowCount, res.Truncated)
	}
	// Exactly at the cap is not truncated.
	res = run(t, small, "SELECT * FROM big LIMIT 1000")
	if res.RowCount != 1000 || res.Truncated {
		t.Fatalf("at cap: %d rows, truncated %v", res.RowCount, res.Truncated)
	}

	measure := func(e *Executor) (allocs float64, bytes uint64) {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		allocs = testing.AllocsPerRun(5, func() { run(t, e, "SELECT * FROM big") })
		runtime.ReadMemStats(&after)
		return allocs, (after.TotalAlloc - before.TotalAlloc) / 6 // AllocsPerRun runs f once more to warm up
	}
	bigAllocs, bigBytes := measure(big)
	smallAllocs, smallBytes := measure(small)
	t.Logf("1,000,000-row table: %.0f allocs, %d bytes per call; 2,000-row table: %.0f allocs, %d bytes",
		bigAllocs, bigBytes, smallAllocs, smallBytes)
	if bigAllocs > smallAllocs*1.1+50 || bigBytes > smallBytes*2 {
		t.Errorf("memory grows with the table: %.0f vs %.0f allocs, %d vs %d bytes", bigAllocs, smallAllocs, bigBytes, smallBytes)
	}
	// 1,000,000 rows of three values would need tens of megabytes.
	if bigBytes > 2<<20 {
		t.Errorf("%d bytes allocated for a 1,000-row result", bigBytes)
	}
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
			res := run(t, e, q)
			wantKind(t, q, res, text2sql.KindTooLarge)
			if !strings.Contains(res.Error.Message, "10485760 bytes") {
				t.Errorf("message %q does not give the limit", res.Error.Message)
			}
		}
		// Under the limit is fine.
		if res := run(t, e, "SELECT length(zeroblob(1000000))"); res.Error != nil || res.Rows[0][0] != int64(1000000) {
			t.Fatalf("%+v", res)
		}
	}
	// A lower limit applies.
	e := open(t, path, Options{MaxLength: 1000})
	wantKind(t, "", run(t, e, "SELECT zeroblob(1001)"), text2sql.KindTooLarge)
	if grown := maxRSS(t) - rss; grown > 256<<20 {
		t.Errorf("peak RSS grew by %d MiB", grown>>20)
	}
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
	if err != nil {
		t.Fatalf("Go error %v", err)
	}
	wantKind(t, forever, res, text2sql.KindTimeout)
	if took < 200*time.Millisecond || took > 2*time.Second || res.Duration > 2*time.Second {
		t.Errorf("stopped after %v (Duration %v), limit 200ms", took, res.Duration)
	}
	// The option's limit applies when the request has none.
	short := open(t, makeDB(t, "y.db", "CREATE TABLE t (x)"), Options{Timeout: 100 * time.Millisecond})
	wantKind(t, forever, run(t, short, forever), text2sql.KindTimeout)
	// Also while rows are being read (the first rows come quickly).
	rowsForever := "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) SELECT n FROM c WHERE n % 1000000000 = 0"
	wantKind(t, rowsForever, run(t, short, rowsForever), text2sql.KindTimeout)

	// The caller cancels: a Go error, context.Canceled.
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start = time.Now()
	res, err = e.Execute(ctx, text2sql.ExecuteRequest{SQL: forever})
	if !errors.Is(err, context.Canceled) || res != nil {
		t.Fatalf("caller cancellation: %v, %+v", err, res)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("cancellation took %v", took)
	}
	// The caller's own deadline is the caller's business too.
	ctx, cancel = context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := e.Execute(ctx, text2sql.ExecuteRequest{SQL: forever}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("caller deadline: %v", err)
	}
	// Already cancelled: nothing runs.
	if _, err := e.Execute(ctx, text2sql.ExecuteRequest{SQL: "SELECT 1"}); err == nil {
		t.Fatal("cancelled context accepted")
	}
	// The executor still works afterwards, on every pooled connection.
	for i := 0; i < 8; i++ {
		if res := run(t, e, "SELECT 1"); res.Error != nil {
			t.Fatalf("after timeouts: %v", res.Error)
		}
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
				if err != nil {
					t.Error(err)
					return
				}
				if c.kind == "" && (res.Error != nil || res.RowCount != 3) || c.kind != "" && (res.Error == nil || res.Error.Kind != c.kind) {
					t.Errorf("%q: %+v", c.q, res)
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
	res := run(t, e, q)
	wantKind(t, q, res, text2sql.KindTooLarge)
	if !strings.Contains(res.Error.Message, "8388608 bytes") || res.Rows != nil {
		t.Errorf("%+v", res.Error)
	}
	if res := run(t, e, "SELECT zeroblob(1000) FROM t"); res.Error != nil || res.RowCount != 1000 {
		t.Fatalf("1000 x 1 KB under the bound: %+v", res.Error)
	}
	if grown := maxRSS(t) - rss; grown > 256<<20 {
		t.Errorf("peak RSS grew by %d MiB", grown>>20)
	}
}

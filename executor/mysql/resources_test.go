package mysql

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/dbtest"
)

// peakRSS is the process's peak resident set (VmHWM), in bytes, or 0
// where /proc is absent.
func peakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kb int64
			fmt.Sscan(strings.TrimSuffix(strings.TrimSpace(v), " kB"), &kb)
			return kb << 10
		}
	}
	return 0
}

// Results past MaxResultBytes stop with KindTooLarge while they are read:
// 50 rows of 10 MB (the bound is reached by counting rows), one row of
// eight 10 MB values (which the driver would read whole: the socket stops
// it), and a recursive WITH query building the same. The process's peak
// RSS stays under 200 MB (run alone to measure: go test -run
// TestResultBytes ./executor/mysql/).
func TestResultBytes(t *testing.T) {
	admin, dsn := dbtest.MySQL(t)
	// A generous time limit: the byte bound must decide, even on a loaded
	// machine under the race detector, where building the 10 MB values
	// can take longer than the default limit.
	e, err := Open(context.Background(), dsn, Options{Timeout: 2 * time.Minute})
	require.NoError(t, err)
	defer e.Close()
	wide := "SELECT " + strings.TrimSuffix(strings.Repeat("REPEAT('x', 10000000), ", 8), ", ")
	for _, q := range []string{
		"SELECT REPEAT('x', 10000000) FROM seq_1_to_50",
		wide,
		"WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 50) SELECT REPEAT('y', 10000000) FROM r",
	} {
		res := run(t, e, q)
		if assert.NotNil(t, res.Error, q) {
			assert.Equal(t, text2sql.KindTooLarge, res.Error.Kind, "%s: %s", q, res.Error.Message)
		}
		assert.Empty(t, res.Rows)
		runtime.GC()
	}
	// Under the bound, values come back whole.
	res := run(t, e, "SELECT REPEAT('x', 10000000) FROM seq_1_to_2")
	require.Nil(t, res.Error)
	assert.Len(t, res.Rows[1][0], 10000000)
	// New (a host's handle) bounds by counting rows only.
	n, err := New(context.Background(), admin, Options{MaxResultBytes: 1 << 20})
	require.NoError(t, err)
	res = run(t, n, "SELECT REPEAT('x', 100000) FROM seq_1_to_50")
	require.NotNil(t, res.Error)
	assert.Equal(t, text2sql.KindTooLarge, res.Error.Kind)
	if rss := peakRSS(); rss > 0 {
		t.Logf("peak RSS of the test process: %.1f MB", float64(rss)/1e6)
		if !raceEnabled {
			assert.Less(t, rss, int64(200e6))
		}
	}
}

// ElevatedPrivileges names root's powers and nothing for a login that
// can only read one database; neither login is refused.
func TestElevatedPrivileges(t *testing.T) {
	admin, dsn := dbtest.MySQL(t)
	e, err := Open(context.Background(), dsn, Options{})
	require.NoError(t, err)
	defer e.Close()
	assert.Contains(t, e.ElevatedPrivileges(), "ALL PRIVILEGES ON *.*")
	assert.Contains(t, e.ElevatedPrivileges(), "GRANT OPTION ON *.*")

	var dbName string
	require.NoError(t, admin.QueryRow("SELECT DATABASE()").Scan(&dbName))
	user := dbtest.Name("t2s_ro")
	dbtest.Exec(t, admin,
		"CREATE TABLE t (a INT)",
		"CREATE USER '"+user+"'@'%' IDENTIFIED BY 'pw'",
		"GRANT SELECT ON `"+dbName+"`.* TO '"+user+"'@'%'")
	t.Cleanup(func() { admin.Exec("DROP USER '" + user + "'@'%'") })
	ro, err := Open(context.Background(), user+":pw@tcp(127.0.0.1:3306)/"+dbName, Options{})
	require.NoError(t, err)
	defer ro.Close()
	assert.Nil(t, ro.ElevatedPrivileges())
	res := run(t, ro, "SELECT count(*) FROM t")
	require.Nil(t, res.Error)

	for _, c := range []struct {
		grants []string
		want   []string
	}{
		{[]string{"GRANT USAGE ON *.* TO `u`@`%`", "GRANT SELECT, SHOW VIEW ON `db`.* TO `u`@`%`"}, nil},
		{[]string{"GRANT FILE, PROCESS ON *.* TO `u`@`%`"}, []string{"FILE ON *.*", "PROCESS ON *.*"}},
		{[]string{"GRANT SELECT (a, b), INSERT (a) ON `db`.`t` TO `u`@`%`"}, []string{"INSERT ON `db`.`t`"}},
		{[]string{"GRANT SELECT ON `db`.* TO `u`@`%` WITH GRANT OPTION"}, []string{"GRANT OPTION ON `db`.*"}},
		{[]string{"GRANT `reader` TO `u`@`%`", "SET DEFAULT ROLE `reader` FOR `u`@`%`"}, nil},
		{[]string{"GRANT SUPER, CREATE USER, DELETE ON *.* TO 'u'@'%'"}, []string{"SUPER ON *.*", "CREATE USER ON *.*", "DELETE ON *.*"}},
	} {
		assert.Equal(t, c.want, ElevatedGrants(c.grants), "%v", c.grants)
	}
}

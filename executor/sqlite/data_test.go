package sqlite

import (
	"context"
	"database/sql"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/birdschema"
	"github.com/text2sql-go/text2sql/internal/exectest"
	"github.com/text2sql-go/text2sql/internal/shareddata"
)

// Every Spider dev gold query (on the 19 databases present) passes Check
// and Execute, and Execute returns exactly what a plain connection returns.
func TestSpiderGold(t *testing.T) {
	execs := map[string]*Executor{}
	plains := map[string]*sql.DB{}
	total, skipped := 0, 0
	for _, g := range shareddata.SpiderGold(t) {
		q, dbID := g.SQL, g.DBID
		if dbID == "wta_1" {
			skipped++
			continue
		}
		e, ok := execs[dbID]
		if !ok {
			path := shareddata.Path(t, "spider", "database", dbID, dbID+".sqlite")
			untouched(t, path)
			e = open(t, path, Options{MaxRows: 1_000_000})
			execs[dbID] = e
			p, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
			require.NoError(t, err)
			defer p.Close()
			plains[dbID] = p
		}
		total++
		if !assert.NoError(t, e.Check(context.Background(), q), "%s: Check(%q)", dbID, q) {
			continue
		}
		res := exectest.Run(t, e, q)
		if !assert.Nil(t, res.Error, "%s: Execute(%q) = %v", dbID, q, res.Error) {
			continue
		}
		want, err := shareddata.PlainRows(plains[dbID], q)
		if !assert.NoError(t, err, "%s: plain %q", dbID, q) {
			continue
		}
		if len(want) == 0 && len(res.Rows) == 0 {
			continue
		}
		assert.False(t, res.Truncated || !reflect.DeepEqual(res.Rows, want), "%s: %q: guarded rows differ from plain rows:\n%v\n%v", dbID, q, res.Rows, want)
	}
	t.Logf("Spider dev: %d gold queries on %d databases checked and executed, %d skipped (wta_1)", total, len(execs), skipped)
	assert.Equal(t, 972, total, "queries run")
	assert.Equal(t, 62, skipped, "queries skipped")
}

// The 500 BIRD mini-dev SQLite queries pass Check against empty databases
// with BIRD's schemas: no false refusal.
func TestBIRDCheck(t *testing.T) {
	tables := shareddata.Path(t, "bird", "mini_dev", "dev_tables.json")
	paths, err := birdschema.Materialize(t.TempDir(), tables)
	require.NoError(t, err)
	qs := shareddata.BIRDMiniDev(t, text2sql.DialectSQLite)
	execs := map[string]*Executor{}
	failed := map[text2sql.ErrorKind]int{}
	for _, q := range qs {
		e, ok := execs[q.DBID]
		if !ok {
			e = open(t, paths[q.DBID], Options{})
			execs[q.DBID] = e
		}
		if err := e.Check(context.Background(), q.SQL); !assert.NoError(t, err, "BIRD %d (%s)\n%s", q.ID, q.DBID, q.SQL) {
			failed[exectest.SQLError(err).Kind]++
		}
		// Executing on the empty database works too (no rows, or one row
		// of an aggregate).
		res := exectest.Run(t, e, q.SQL)
		assert.Nil(t, res.Error, "BIRD %d (%s): Execute: %v", q.ID, q.DBID, res.Error)
	}
	t.Logf("BIRD mini-dev: %d queries checked, %d failed %v", len(qs), len(qs)-passed(len(qs), failed), failed)
}

func passed(n int, failed map[text2sql.ErrorKind]int) int {
	for _, c := range failed {
		n -= c
	}
	return n
}

package sqlite

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/birdschema"
	"github.com/text2sql-go/text2sql/internal/shareddata"
)

// Every Spider dev gold query (on the 19 databases present) passes Check
// and Execute, and Execute returns exactly what a plain connection returns.
func TestSpiderGold(t *testing.T) {
	gold := shareddata.Path(t, "spider", "dev_gold.sql")
	f, err := os.Open(gold)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	execs := map[string]*Executor{}
	plains := map[string]*sql.DB{}
	total, skipped := 0, 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		i := strings.LastIndexByte(line, '\t')
		if i < 0 {
			t.Fatalf("malformed line %q", line)
		}
		q, dbID := line[:i], line[i+1:]
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
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			plains[dbID] = p
		}
		total++
		if err := e.Check(context.Background(), q); err != nil {
			t.Errorf("%s: Check(%q) = %v", dbID, q, err)
			continue
		}
		res := run(t, e, q)
		if res.Error != nil {
			t.Errorf("%s: Execute(%q) = %v", dbID, q, res.Error)
			continue
		}
		want, err := shareddata.PlainRows(plains[dbID], q)
		if err != nil {
			t.Errorf("%s: plain %q: %v", dbID, q, err)
			continue
		}
		if len(want) == 0 && len(res.Rows) == 0 {
			continue
		}
		if res.Truncated || !reflect.DeepEqual(res.Rows, want) {
			t.Errorf("%s: %q: guarded rows differ from plain rows:\n%v\n%v", dbID, q, res.Rows, want)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	t.Logf("Spider dev: %d gold queries on %d databases checked and executed, %d skipped (wta_1)", total, len(execs), skipped)
	if total != 972 || skipped != 62 {
		t.Errorf("ran %d, skipped %d; want 972 and 62", total, skipped)
	}
}

// The 500 BIRD mini-dev SQLite queries pass Check against empty databases
// with BIRD's schemas: no false refusal.
func TestBIRDCheck(t *testing.T) {
	tables := shareddata.Path(t, "bird", "mini_dev", "dev_tables.json")
	qfile := shareddata.Path(t, "bird", "mini_dev", "mini_dev_sqlite.json")
	paths, err := birdschema.Materialize(t.TempDir(), tables)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(qfile)
	if err != nil {
		t.Fatal(err)
	}
	var qs []struct {
		ID   int    `json:"question_id"`
		DBID string `json:"db_id"`
		SQL  string `json:"SQL"`
	}
	if err := json.Unmarshal(b, &qs); err != nil {
		t.Fatal(err)
	}
	execs := map[string]*Executor{}
	failed := map[text2sql.ErrorKind]int{}
	for _, q := range qs {
		e, ok := execs[q.DBID]
		if !ok {
			e = open(t, paths[q.DBID], Options{})
			execs[q.DBID] = e
		}
		if err := e.Check(context.Background(), q.SQL); err != nil {
			se := asSQLError(err)
			failed[se.Kind]++
			t.Errorf("BIRD %d (%s): %v\n%s", q.ID, q.DBID, err, q.SQL)
		}
		// Executing on the empty database works too (no rows, or one row
		// of an aggregate).
		if res := run(t, e, q.SQL); res.Error != nil {
			t.Errorf("BIRD %d (%s): Execute: %v", q.ID, q.DBID, res.Error)
		}
	}
	t.Logf("BIRD mini-dev: %d queries checked, %d failed %v", len(qs), len(qs)-passed(len(qs), failed), failed)
	if len(qs) != 500 {
		t.Errorf("%d queries, want 500", len(qs))
	}
}

func passed(n int, failed map[text2sql.ErrorKind]int) int {
	for _, c := range failed {
		n -= c
	}
	return n
}

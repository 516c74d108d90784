package sqlparse

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/shareddata"
	"github.com/text2sql-go/text2sql/internal/sqltext"
)

// Comparison for the port of sqltext.Tables onto the tree (throwaway:
// it goes with the old scan): the lexical scan and the tree pass agree on
// every gold query; on the published predictions the differences are
// logged and counted (see Tables for why they differ).
func TestTablesOldVsNew(t *testing.T) {
	type set struct {
		name string
		d    text2sql.Dialect
		sqls []string
	}
	var sets []set
	sets = append(sets, set{"spider gold", text2sql.DialectSQLite, spiderGold(t)})
	for _, f := range []struct {
		file string
		d    text2sql.Dialect
	}{{"mini_dev_sqlite.json", text2sql.DialectSQLite}, {"mini_dev_postgresql.json", text2sql.DialectPostgres}, {"mini_dev_mysql.json", text2sql.DialectMySQL}} {
		sets = append(sets, set{"bird gold " + f.file, f.d, birdGold(t, f.file)})
	}
	pdir := shareddata.Path(t, "bird", "mini_dev", "predictions")
	files, _ := filepath.Glob(filepath.Join(pdir, "*.json"))
	var birdPreds []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		var m map[string]string
		require.NoError(t, json.Unmarshal(b, &m))
		for _, v := range m {
			if i := strings.Index(v, "\t----- bird -----\t"); i >= 0 {
				v = v[:i]
			}
			birdPreds = append(birdPreds, v)
		}
	}
	sets = append(sets, set{"bird predictions", text2sql.DialectSQLite, birdPreds})
	sdir := shareddata.Path(t, "predictions", "spider_dev")
	sfiles, _ := filepath.Glob(filepath.Join(sdir, "*.txt"))
	var spiderPreds []string
	for _, f := range sfiles {
		fh, err := os.Open(f)
		require.NoError(t, err)
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			if l := strings.TrimSpace(sc.Text()); l != "" {
				spiderPreds = append(spiderPreds, l)
			}
		}
		fh.Close()
	}
	sets = append(sets, set{"spider predictions", text2sql.DialectSQLite, spiderPreds})
	for _, s := range sets {
		diff, errs, diffClean := 0, 0, 0
		for _, q := range s.sqls {
			tree := Parse(q, s.d)
			if len(tree.Errors) > 0 {
				errs++
			}
			old, new := sqltext.Tables(q), Tables(tree)
			if !reflect.DeepEqual(old, new) {
				diff++
				if len(tree.Errors) == 0 {
					diffClean++
				}
				if len(tree.Errors) == 0 || testing.Verbose() && os.Getenv("SQLPARSE_ALL") != "" {
					t.Logf("%s: old %v new %v\n  %s", s.name, old, new, strings.Join(strings.Fields(q), " "))
				}
			}
		}
		if strings.HasSuffix(s.name, "gold") || strings.Contains(s.name, "gold ") {
			require.Zero(t, diff, s.name)
		}
		t.Logf("%s: %d queries, %d with error nodes; %d Tables differences, %d of them on queries without error nodes", s.name, len(s.sqls), errs, diff, diffClean)
	}
}

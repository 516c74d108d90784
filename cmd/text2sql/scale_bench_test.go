package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/text2sql-go/text2sql/internal/synthdb"
)

// scaleColumns is the columns of each table of the synthetic databases.
const scaleColumns = 15

// BenchmarkContextCLI runs a warm `text2sql context` in-process, with
// every default of the command line (inferred joins, the value index,
// the persistent vector index), on synthetic SQLite databases of 1,000,
// 2,000 and 10,000 tables whose keys only their column names imply, and
// with --no-infer-joins for comparison (issue 37: warm context at 2,000
// tables within 2× of it, at 10,000 under 2 s). The first call, not
// timed, builds the indexes.
func BenchmarkContextCLI(b *testing.B) {
	for _, n := range []int{1000, 2000, 10000} {
		for _, flags := range [][]string{nil, {"--no-infer-joins"}} {
			b.Run(fmt.Sprintf("tables=%d/infer=%t", n, flags == nil), func(b *testing.B) {
				// An index of each configuration: their documents differ.
				db := scaleFixture(b, n)
				index := fmt.Sprintf("%s.index-%t", db, flags == nil)
				args := append([]string{"context", "--db", db, "--index-dir", index, "--json",
					"How many shipments per warehouse zone for each customer account?"}, flags...)
				contextOK(b, args)
				b.ReportAllocs()
				for b.Loop() {
					contextOK(b, args)
				}
			})
		}
	}
}

func contextOK(b *testing.B, args []string) {
	if out, errOut, code := cli(b, args...); code != 0 || len(out) == 0 {
		b.Fatalf("exit %d: %s", code, errOut)
	}
}

// scaleFixtures are the synthetic databases of this run, by table count,
// in one temporary directory, with their index directories, that TestMain
// removes: written once (10,000 tables take seconds to write and tens to
// index), whatever -count.
var scaleFixtures struct {
	sync.Mutex
	dir string
	dbs map[int]string
}

// scaleFixture returns the path of the synthetic database of n tables.
func scaleFixture(b *testing.B, n int) string {
	f := &scaleFixtures
	f.Lock()
	defer f.Unlock()
	if f.dir == "" {
		dir, err := os.MkdirTemp("", "text2sql-scale-")
		if err != nil {
			b.Fatal(err)
		}
		f.dir, f.dbs = dir, map[int]string{}
	}
	db := f.dbs[n]
	if db == "" {
		db = filepath.Join(f.dir, fmt.Sprintf("tables-%d.db", n))
		if err := synthdb.Write(db, n, scaleColumns); err != nil {
			b.Fatal(err)
		}
		f.dbs[n] = db
	}
	return db
}

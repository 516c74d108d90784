package shareddata

import (
	"bufio"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Prediction is one published model prediction on Spider dev or BIRD
// mini-dev.
type Prediction struct {
	File string // the base name of its predictions file, e.g. "DAIL-SQL+GPT-4.txt"
	Key  string // Spider: the question's index in dev.json, as %04d; BIRD: the question's key in the file
	SQL  string
	DBID string // the database it runs on
}

// birdSeparator parts the SQL of a BIRD prediction from its database ID.
const birdSeparator = "\t----- bird -----\t"

// SpiderPredictions returns the lines of the published Spider dev
// predictions files (predictions/spider_dev/*.txt, one query a line in
// the order of dev.json), files in name order and lines in file order,
// leaving out the questions whose database is missing. It skips the test
// when the data is absent and fails it when no file is found or one is
// unreadable.
func SpiderPredictions(tb testing.TB) []Prediction {
	tb.Helper()
	dev := spiderDevAll(tb)
	var out []Prediction
	for _, f := range files(tb, Path(tb, "predictions", "spider_dev"), "*.txt") {
		fh, err := os.Open(f)
		if err != nil {
			tb.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for i := 0; sc.Scan() && i < len(dev); i++ {
			if _, err := os.Stat(SpiderDB(tb, dev[i].DBID)); err != nil {
				continue
			}
			out = append(out, Prediction{File: filepath.Base(f), Key: fmt.Sprintf("%04d", i), SQL: sc.Text(), DBID: dev[i].DBID})
		}
		err = sc.Err()
		fh.Close()
		if err != nil {
			tb.Fatalf("%s: %v", f, err)
		}
	}
	return out
}

// BIRDPredictions returns the published BIRD mini-dev predictions
// (bird/mini_dev/predictions/*.json: question key → SQL, separator,
// database ID), files in name order and keys in sorted order, leaving out
// entries without the separator (the last one counts). It skips the test when the data is
// absent and fails it when no file is found or one is unreadable.
func BIRDPredictions(tb testing.TB) []Prediction {
	tb.Helper()
	var out []Prediction
	for _, f := range files(tb, Path(tb, "bird", "mini_dev", "predictions"), "*.json") {
		b, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		var preds map[string]string
		if err := json.Unmarshal(b, &preds); err != nil {
			tb.Fatalf("%s: %v", f, err)
		}
		for _, k := range slices.Sorted(maps.Keys(preds)) {
			v := preds[k]
			i := strings.LastIndex(v, birdSeparator)
			if i < 0 {
				continue
			}
			out = append(out, Prediction{File: filepath.Base(f), Key: k, SQL: v[:i], DBID: strings.TrimSpace(v[i+len(birdSeparator):])})
		}
	}
	return out
}

// files returns the files in dir matching pattern, in name order, failing
// tb when there is none.
func files(tb testing.TB, dir, pattern string) []string {
	tb.Helper()
	fs, _ := filepath.Glob(filepath.Join(dir, pattern))
	if len(fs) == 0 {
		tb.Fatalf("no %s file in %s", pattern, dir)
	}
	slices.Sort(fs)
	return fs
}

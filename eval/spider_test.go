package eval

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/text2sql-go/text2sql/internal/shareddata"
)

// spiderDev loads the shared Spider dev set, or skips.
func spiderDev(tb testing.TB) *Dataset {
	tb.Helper()
	dir := shareddata.Path(tb, "spider")
	ds, err := LoadSpider(SpiderPaths{Dir: dir})
	if err != nil {
		tb.Fatal(err)
	}
	return ds
}

var dailFiles = []string{"DAIL-SQL+GPT-4.txt", "DAIL-SQL+GPT-4+self-consistency.txt"}

func dailPredictions(tb testing.TB) []*Predictions {
	tb.Helper()
	dir := shareddata.Path(tb, "predictions", "spider_dev")
	var out []*Predictions
	for _, name := range dailFiles {
		p, err := ReadPredictions(filepath.Join(dir, name))
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

// The published DAIL-SQL predictions scored on the 972 Spider dev
// questions with a database (wta_1 excluded), in Spider mode with the
// official rewrites. The expected values were cross-checked question by
// question against an independent re-implementation of the test-suite
// evaluator's exec matching run with Python's sqlite3 (0 disagreements).
func TestSpiderDevDAIL(t *testing.T) {
	ds := spiderDev(t)
	reps, err := Score(context.Background(), ds, dailPredictions(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		correct int
		byHard  map[string][2]int
	}{
		{809, map[string][2]int{"easy": {212, 232}, "medium": {373, 416}, "hard": {126, 160}, "extra": {98, 164}}},
		{815, map[string][2]int{"easy": {212, 232}, "medium": {377, 416}, "hard": {124, 160}, "extra": {102, 164}}},
	}
	for i, r := range reps {
		t.Logf("%s: EX %.4f (%d/%d), excluded %d; nondeterministic gold %d (%d correct), EX without them %.4f",
			r.Predictions, *r.EX, r.Correct, r.Total, r.Excluded, r.Nondeterministic, r.NondeterministicCorrect, *r.EXDeterminate)
		for _, g := range r.ByDifficulty {
			t.Logf("  %-6s %.4f %d/%d", g.Name, *g.EX, g.Correct, g.Total)
		}
		for _, f := range r.Failures {
			t.Logf("  %s %s: %d", f.Outcome, f.Kind, f.Count)
		}
		if r.Correct != want[i].correct || r.Total != 972 || r.Excluded != 62 || !r.Comparable {
			t.Errorf("%s: %d/%d excluded %d", r.Predictions, r.Correct, r.Total, r.Excluded)
		}
		for _, g := range r.ByDifficulty {
			if w := want[i].byHard[g.Name]; g.Correct != w[0] || g.Total != w[1] {
				t.Errorf("%s %s: %d/%d, want %v", r.Predictions, g.Name, g.Correct, g.Total, w)
			}
		}
		if len(r.Exclusions) != 1 || r.Exclusions[0].DB != "wta_1" || r.Exclusions[0].Count != 62 {
			t.Errorf("%+v", r.Exclusions)
		}
		var md bytes.Buffer
		if err := r.WriteMarkdown(&md); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(md.String(), "excluded: 62 questions of `wta_1`") || !strings.Contains(md.String(), "| extra |") {
			t.Fatal(md.String())
		}
		var recs bytes.Buffer
		if err := r.WriteRecords(&recs); err != nil {
			t.Fatal(err)
		}
		back, err := ReadRecords(&recs)
		if err != nil || len(back) != 1034 {
			t.Fatalf("%v %d", err, len(back))
		}
	}
	// Diffing the two runs.
	changes := DiffRecords(reps[0].Records, reps[1].Records)
	up, down := 0, 0
	for _, c := range changes {
		switch {
		case c.After == OutcomeCorrect:
			up++
		case c.Before == OutcomeCorrect:
			down++
		}
	}
	if up-down != 815-809 {
		t.Fatalf("%d up, %d down", up, down)
	}
	t.Logf("self-consistency vs plain: %d questions changed outcome, %d became correct, %d stopped being correct", len(changes), up, down)
}

// BenchmarkScoreSpiderDev scores both DAIL-SQL prediction files on the 972
// Spider dev questions (gold queries run once), as the CLI does.
func BenchmarkScoreSpiderDev(b *testing.B) {
	ds := spiderDev(b)
	preds := dailPredictions(b)
	b.ResetTimer()
	for b.Loop() {
		if _, err := Score(context.Background(), ds, preds, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkScoreSpiderDevOne scores one prediction file.
func BenchmarkScoreSpiderDevOne(b *testing.B) {
	ds := spiderDev(b)
	preds := dailPredictions(b)[:1]
	for b.Loop() {
		if _, err := Score(context.Background(), ds, preds, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkScoreSpiderDevNoOrderCheck scores one file without the gold
// ordering probes, to show their cost.
func BenchmarkScoreSpiderDevNoOrderCheck(b *testing.B) {
	ds := spiderDev(b)
	preds := dailPredictions(b)[:1]
	for b.Loop() {
		if _, err := Score(context.Background(), ds, preds, Options{NoOrderCheck: true}); err != nil {
			b.Fatal(err)
		}
	}
}

package eval

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/text2sql-go/text2sql/internal/shareddata"
)

// spiderDev loads the shared Spider dev set, or skips.
func spiderDev(tb testing.TB) *Dataset {
	tb.Helper()
	dir := shareddata.Path(tb, "spider")
	ds, err := LoadSpider(SpiderPaths{Dir: dir})
	require.NoError(tb, err)
	return ds
}

var dailFiles = []string{"DAIL-SQL+GPT-4.txt", "DAIL-SQL+GPT-4+self-consistency.txt"}

func dailPredictions(tb testing.TB) []*Predictions {
	tb.Helper()
	dir := shareddata.Path(tb, "predictions", "spider_dev")
	var out []*Predictions
	for _, name := range dailFiles {
		p, err := ReadPredictions(filepath.Join(dir, name))
		require.NoError(tb, err, name)
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
	require.NoError(t, err)
	want := []struct {
		correct int
		byHard  map[string][2]int
	}{
		{809, map[string][2]int{"easy": {212, 232}, "medium": {373, 416}, "hard": {126, 160}, "extra": {98, 164}}},
		{815, map[string][2]int{"easy": {212, 232}, "medium": {377, 416}, "hard": {124, 160}, "extra": {102, 164}}},
	}
	require.Len(t, reps, len(want))
	for i, r := range reps {
		t.Logf("%s: EX %.4f (%d/%d), excluded %d; nondeterministic gold %d (%d correct), EX without them %.4f",
			r.Predictions, *r.EX, r.Correct, r.Total, r.Excluded, r.Nondeterministic, r.NondeterministicCorrect, *r.EXDeterminate)
		for _, g := range r.ByDifficulty {
			t.Logf("  %-6s %.4f %d/%d", g.Name, *g.EX, g.Correct, g.Total)
		}
		for _, f := range r.Failures {
			t.Logf("  %s %s: %d", f.Outcome, f.Kind, f.Count)
		}
		assert.Equal(t, want[i].correct, r.Correct, r.Predictions)
		assert.Equal(t, 972, r.Total, r.Predictions)
		assert.Equal(t, 62, r.Excluded, r.Predictions)
		assert.True(t, r.Comparable, r.Predictions)
		for _, g := range r.ByDifficulty {
			w := want[i].byHard[g.Name]
			assert.Equal(t, w, [2]int{g.Correct, g.Total}, "%s %s: correct/total", r.Predictions, g.Name)
		}
		if assert.Len(t, r.Exclusions, 1) {
			assert.Equal(t, "wta_1", r.Exclusions[0].DB)
			assert.Equal(t, 62, r.Exclusions[0].Count)
		}
		var md bytes.Buffer
		require.NoError(t, r.WriteMarkdown(&md))
		assert.Contains(t, md.String(), "excluded: 62 questions of `wta_1`")
		assert.Contains(t, md.String(), "| extra |")
		var recs bytes.Buffer
		require.NoError(t, r.WriteRecords(&recs))
		back, err := ReadRecords(&recs)
		require.NoError(t, err)
		assert.Len(t, back, 1034)
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
	assert.Equal(t, 815-809, up-down, "%d up, %d down", up, down)
	t.Logf("self-consistency vs plain: %d questions changed outcome, %d became correct, %d stopped being correct", len(changes), up, down)
}

// benchScore scores the first files DAIL-SQL prediction files (of
// dailFiles) on the 972 Spider dev questions with opts.
func benchScore(b *testing.B, files int, opts Options) {
	ds := spiderDev(b)
	preds := dailPredictions(b)[:files]
	b.ResetTimer()
	for b.Loop() {
		_, err := Score(context.Background(), ds, preds, opts)
		require.NoError(b, err)
	}
}

// BenchmarkScoreSpiderDev scores both DAIL-SQL prediction files (gold
// queries run once), as the CLI does.
func BenchmarkScoreSpiderDev(b *testing.B) { benchScore(b, len(dailFiles), Options{}) }

// BenchmarkScoreSpiderDevOne scores one prediction file.
func BenchmarkScoreSpiderDevOne(b *testing.B) { benchScore(b, 1, Options{}) }

// BenchmarkScoreSpiderDevNoOrderCheck scores one file without the gold
// ordering probes, to show their cost.
func BenchmarkScoreSpiderDevNoOrderCheck(b *testing.B) { benchScore(b, 1, Options{NoOrderCheck: true}) }

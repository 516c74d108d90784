package eval

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/text2sql-go/text2sql/accuracy"
)

// Report is the outcome of a scoring run. Fractions are in [0, 1];
// durations in milliseconds.
type Report struct {
	Dataset     string        `json:"dataset"`               // Dataset.Name
	Format      Format        `json:"format"`                // Dataset.Format
	Predictions string        `json:"predictions,omitempty"` // the predictions file, or the system run
	Mode        accuracy.Mode `json:"mode"`                  // the comparison mode
	// Rewrite: the Spider evaluator's rewrites were applied.
	Rewrite bool `json:"rewrite"`
	// Comparable is false when no question could be scored; EX is then
	// nil and Note says why.
	Comparable bool   `json:"comparable"`
	Note       string `json:"note,omitempty"` // why nothing could be scored
	// EX is Correct/Total: the execution accuracy, counted as the
	// official scorers count it (a nondeterministic gold counts with the
	// result it gave). Nil when Total is 0.
	EX      *float64 `json:"ex"`
	Correct int      `json:"correct"` // questions with OutcomeCorrect
	Total   int      `json:"total"`   // questions scored
	// Excluded counts the questions not scored; Exclusions says why.
	Excluded   int         `json:"excluded"`
	Exclusions []Exclusion `json:"exclusions,omitempty"` // excluded questions by database and reason
	// Nondeterministic counts scored questions whose gold LIMIT cuts
	// through a tie (OrderCheck); EXDeterminate is EX over the others.
	Nondeterministic        int      `json:"nondeterministic"`
	NondeterministicCorrect int      `json:"nondeterministic_correct"` // of those, scored correct
	EXDeterminate           *float64 `json:"ex_determinate"`           // nil when there are none
	ByDifficulty            []Group  `json:"by_difficulty"`            // in the labels' natural order
	ByDatabase              []Group  `json:"by_database"`              // by database ID
	// Failures groups the questions not correct by kind, most frequent
	// first.
	Failures []Failure `json:"failures"`
	// Warnings counts gold ordering warnings by kind (OrderCheck).
	Warnings map[string]int `json:"warnings,omitempty"`
	// Latency per stage: "gold" and "prediction" executions, and for
	// pipeline runs the pipeline's stages and "pipeline" (the whole run).
	Latency map[string]Percentiles `json:"latency"`
	// Tokens per stage (pipeline runs), per question.
	Tokens map[string]TokenStats `json:"tokens,omitempty"`
	// Recall of the retriever (pipeline runs).
	Recall *RecallReport `json:"recall,omitempty"`
	// Oracle compares an Oracle run's EX with its strict table recall.
	Oracle *OracleCheck `json:"oracle,omitempty"`
	WallMS float64      `json:"wall_ms"` // wall time of the run (scoring or answering)
	// Records are the per-question results, in question order (written
	// as JSON lines by WriteRecords, not in the report's JSON).
	Records []Record `json:"-"`
}

// Group is EX over a subset of the questions.
type Group struct {
	Name             string   `json:"name"`                       // the difficulty or database
	Correct          int      `json:"correct"`                    // questions scored correct
	Total            int      `json:"total"`                      // questions scored
	EX               *float64 `json:"ex"`                         // Correct/Total, nil when Total is 0
	Nondeterministic int      `json:"nondeterministic,omitempty"` // questions with a nondeterministic gold
}

// Failure is a kind of failure with its count and the first question IDs.
type Failure struct {
	Outcome Outcome  `json:"outcome"` // the outcome
	Kind    string   `json:"kind"`    // Record.Kind
	Count   int      `json:"count"`   // how many questions
	IDs     []string `json:"ids"`     // at most 10
}

// Percentiles summarise durations in milliseconds (nearest-rank).
type Percentiles struct {
	N       int     `json:"n"`        // samples
	P50MS   float64 `json:"p50_ms"`   // median
	P95MS   float64 `json:"p95_ms"`   // 95th percentile
	MaxMS   float64 `json:"max_ms"`   // maximum
	TotalMS float64 `json:"total_ms"` // sum (CPU-side time, not wall time, when runs overlap)
}

// TokenStats summarise token counts per question for one stage.
type TokenStats struct {
	N         int `json:"n"`            // questions with model calls in the stage
	InputP50  int `json:"input_p50"`    // median input tokens per question
	InputP95  int `json:"input_p95"`    // 95th percentile of input tokens
	OutputP50 int `json:"output_p50"`   // median output tokens per question
	OutputP95 int `json:"output_p95"`   // 95th percentile of output tokens
	Input     int `json:"input_total"`  // total input tokens
	Output    int `json:"output_total"` // total output tokens
}

// OracleCheck puts an Oracle run's EX beside the strict table recall of
// the same retrievals: the oracle answers exactly when every gold table
// was shown, so the two agree except for the questions listed.
type OracleCheck struct {
	EX                *float64 `json:"ex"`                  // the oracle run's EX
	StrictTableRecall *float64 `json:"strict_table_recall"` // share of questions with every gold table shown
	// RecalledNotCorrect are questions whose gold tables were all shown
	// but that did not score (with why); NotRecalledCorrect the reverse.
	RecalledNotCorrect []string `json:"recalled_not_correct,omitempty"`
	NotRecalledCorrect []string `json:"not_recalled_correct,omitempty"` // question IDs
}

func frac(a, b int) *float64 {
	if b == 0 {
		return nil
	}
	f := float64(a) / float64(b)
	return &f
}

// difficultyOrder sorts the usual labels in their natural order.
var difficultyOrder = map[string]int{HardnessEasy: 0, HardnessMedium: 1, HardnessHard: 2, HardnessExtra: 3,
	"simple": 0, "moderate": 1, "challenging": 2, Unknown: 9}

func buildReport(ds *Dataset, mode accuracy.Mode, rewrite bool, recs []Record) *Report {
	t := &reportTally{
		r: &Report{Dataset: ds.Name, Format: ds.Format, Mode: mode, Rewrite: rewrite, Records: recs,
			Latency: map[string]Percentiles{}, Warnings: map[string]int{}, Failures: []Failure{}},
		byDiff: map[string]*Group{}, byDB: map[string]*Group{}, fails: map[string]*Failure{},
	}
	for i := range recs {
		t.add(&recs[i])
	}
	return t.finish()
}

// maxFailureIDs is how many question IDs a Failure lists.
const maxFailureIDs = 10

// reportTally counts records into a Report.
type reportTally struct {
	r              *Report
	byDiff, byDB   map[string]*Group
	fails          map[string]*Failure // by outcome and kind
	goldMS, predMS []float64
	excl           exclusionList
	// Scored questions whose outcome is determinate, and how many of
	// those are correct.
	det, detCorrect int
}

// add counts rec.
func (t *reportTally) add(rec *Record) {
	r := t.r
	if rec.Outcome == OutcomeExcluded {
		r.Excluded++
		t.excl.add(rec.DB, rec.Error, rec.ID)
		return
	}
	r.Total++
	correct := rec.Outcome == OutcomeCorrect
	group := func(m map[string]*Group, name string) *Group {
		return named(m, name, func(name string) *Group { return &Group{Name: name} })
	}
	for _, g := range []*Group{group(t.byDiff, rec.Difficulty), group(t.byDB, rec.DB)} {
		g.Total++
		if correct {
			g.Correct++
		}
		if rec.Nondeterministic {
			g.Nondeterministic++
		}
	}
	if correct {
		r.Correct++
	}
	if rec.Nondeterministic {
		r.Nondeterministic++
		if correct {
			r.NondeterministicCorrect++
		}
	} else {
		t.det++
		if correct {
			t.detCorrect++
		}
	}
	for _, w := range rec.Warnings {
		kind, _, _ := strings.Cut(w, ":")
		r.Warnings[kind]++
	}
	if rec.GoldMS > 0 {
		t.goldMS = append(t.goldMS, rec.GoldMS)
	}
	if rec.Outcome == OutcomeCorrect || rec.Outcome == OutcomeWrong || rec.Outcome == OutcomeError {
		t.predMS = append(t.predMS, rec.PredMS)
	}
	if !correct {
		t.fail(rec)
	}
}

// fail counts rec, scored and not correct, under its outcome and kind.
func (t *reportTally) fail(rec *Record) {
	k := string(rec.Outcome) + "\x00" + rec.Kind
	f := t.fails[k]
	if f == nil {
		f = &Failure{Outcome: rec.Outcome, Kind: rec.Kind}
		t.fails[k] = f
	}
	f.Count++
	if len(f.IDs) < maxFailureIDs {
		f.IDs = append(f.IDs, rec.ID)
	}
}

// finish computes the report's rates, groups and latencies from the
// counts.
func (t *reportTally) finish() *Report {
	r := t.r
	r.Exclusions = t.excl.list
	r.EX = frac(r.Correct, r.Total)
	r.EXDeterminate = frac(t.detCorrect, t.det)
	r.Comparable = r.Total > 0
	if !r.Comparable {
		r.Note = "no question could be scored"
		if len(r.Exclusions) > 0 {
			r.Note += ": " + r.Exclusions[0].Reason
		}
	}
	r.ByDifficulty = sortedGroups(t.byDiff, lessDifficulty)
	r.ByDatabase = sortedGroups(t.byDB, func(a, b string) bool { return a < b })
	for _, f := range t.fails {
		r.Failures = append(r.Failures, *f)
	}
	sort.Slice(r.Failures, func(i, j int) bool {
		a, b := r.Failures[i], r.Failures[j]
		if a.Count != b.Count {
			return a.Count > b.Count
		}
		return a.Outcome+Outcome(a.Kind) < b.Outcome+Outcome(b.Kind)
	})
	if len(t.goldMS) > 0 {
		r.Latency["gold"] = percentiles(t.goldMS)
	}
	if len(t.predMS) > 0 {
		r.Latency["prediction"] = percentiles(t.predMS)
	}
	if len(r.Warnings) == 0 {
		r.Warnings = nil
	}
	return r
}

// lessDifficulty orders difficulty labels by difficultyOrder, labels it
// does not know between the known ones and Unknown, then by name.
func lessDifficulty(a, b string) bool {
	oa, ok1 := difficultyOrder[a]
	ob, ok2 := difficultyOrder[b]
	if !ok1 {
		oa = 5
	}
	if !ok2 {
		ob = 5
	}
	if oa != ob {
		return oa < ob
	}
	return a < b
}

func sortedGroups(m map[string]*Group, less func(a, b string) bool) []Group {
	out := make([]Group, 0, len(m))
	for _, g := range m {
		g.EX = frac(g.Correct, g.Total)
		out = append(out, *g)
	}
	sort.Slice(out, func(i, j int) bool { return less(out[i].Name, out[j].Name) })
	return out
}

// percentiles returns nearest-rank percentiles of xs (milliseconds).
func percentiles(xs []float64) Percentiles {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	p := Percentiles{N: len(s)}
	if len(s) == 0 {
		return p
	}
	for _, x := range s {
		p.TotalMS += x
	}
	p.P50MS, p.P95MS, p.MaxMS = rank(s, 0.50), rank(s, 0.95), s[len(s)-1]
	p.TotalMS = math.Round(p.TotalMS*1000) / 1000
	return p
}

func rank(s []float64, q float64) float64 {
	i := int(math.Ceil(q*float64(len(s)))) - 1
	if i < 0 {
		i = 0
	}
	return s[i]
}

func intRank(s []int, q float64) int {
	if len(s) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(s)))) - 1
	if i < 0 {
		i = 0
	}
	return s[i]
}

// WriteJSON writes r as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteRecords writes r.Records as JSON lines, one per question in
// question order: the file to diff between two runs (DiffRecords).
func (r *Report) WriteRecords(w io.Writer) error { return writeLines(w, r.Records) }

// writeLines writes recs as JSON lines, in order.
func writeLines[T any](w io.Writer, recs []T) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	for i := range recs {
		if err := enc.Encode(&recs[i]); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// ReadRecords reads JSON lines written by WriteRecords.
func ReadRecords(rd io.Reader) ([]Record, error) {
	var out []Record
	dec := json.NewDecoder(rd)
	for dec.More() {
		var rec Record
		if err := dec.Decode(&rec); err != nil {
			return nil, fmt.Errorf("eval: records: %w", err)
		}
		out = append(out, rec)
	}
	return out, nil
}

// RecordChange is a question whose outcome differs between two runs.
type RecordChange struct {
	ID     string  `json:"id"`     // Record.ID
	Before Outcome `json:"before"` // outcome in the first run
	After  Outcome `json:"after"`  // outcome in the second run
}

// DiffRecords pairs two runs' records by ID and returns the questions
// whose outcome changed, in the order of after; a question present in one
// run only has the outcome "" in the other.
func DiffRecords(before, after []Record) []RecordChange {
	prev := make(map[string]Outcome, len(before))
	for _, r := range before {
		prev[r.ID] = r.Outcome
	}
	var out []RecordChange
	seen := map[string]bool{}
	for _, r := range after {
		seen[r.ID] = true
		if p := prev[r.ID]; p != r.Outcome {
			out = append(out, RecordChange{ID: r.ID, Before: p, After: r.Outcome})
		}
	}
	for _, r := range before {
		if !seen[r.ID] {
			out = append(out, RecordChange{ID: r.ID, Before: r.Outcome})
		}
	}
	return out
}

func pct(f *float64) string {
	if f == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.1f%%", *f*100)
}

// WriteMarkdown writes r as a Markdown report: EX overall, by difficulty
// and by database, failures by kind, ordering warnings, latency, tokens,
// recall and the oracle check.
func (r *Report) WriteMarkdown(w io.Writer) error {
	b := &strings.Builder{}
	title := r.Dataset
	if r.Predictions != "" {
		title += " — " + r.Predictions
	}
	fmt.Fprintf(b, "# Evaluation: %s\n\n", title)
	rw := ""
	if r.Rewrite {
		rw = ", Spider evaluator rewrites"
	}
	fmt.Fprintf(b, "accuracy.Mode `%s`%s. Wall time %.0f ms.\n\n", r.Mode, rw, r.WallMS)
	if !r.Comparable {
		fmt.Fprintf(b, "**Results cannot be compared: %s.** EX is not reported.\n\n", r.Note)
	} else {
		fmt.Fprintf(b, "**EX %s** (%d / %d)", pct(r.EX), r.Correct, r.Total)
		if r.Excluded > 0 {
			fmt.Fprintf(b, "; %d excluded", r.Excluded)
		}
		fmt.Fprintln(b, ".")
		if r.Note != "" {
			fmt.Fprintf(b, "\n**Warning: %s.**\n", r.Note)
		}
		if r.Nondeterministic > 0 {
			fmt.Fprintf(b, "\n%d scored questions have a nondeterministic gold (a LIMIT cutting through a tie; %d of them scored correct); EX over the other %d: %s.\n",
				r.Nondeterministic, r.NondeterministicCorrect, r.Total-r.Nondeterministic, pct(r.EXDeterminate))
		}
		fmt.Fprintln(b)
	}
	writeExclusions(b, r.Exclusions)
	groups := func(name string, gs []Group) {
		if len(gs) == 0 {
			return
		}
		fmt.Fprintf(b, "## EX by %s\n\n| %s | EX | correct | total | nondeterministic |\n|---|---:|---:|---:|---:|\n", name, name)
		for _, g := range gs {
			fmt.Fprintf(b, "| %s | %s | %d | %d | %d |\n", g.Name, pct(g.EX), g.Correct, g.Total, g.Nondeterministic)
		}
		fmt.Fprintln(b)
	}
	groups("difficulty", r.ByDifficulty)
	groups("database", r.ByDatabase)
	if len(r.Failures) > 0 {
		fmt.Fprintf(b, "## Failures by kind\n\n| outcome | kind | count | first questions |\n|---|---|---:|---|\n")
		for _, f := range r.Failures {
			fmt.Fprintf(b, "| %s | %s | %d | %s |\n", f.Outcome, f.Kind, f.Count, strings.Join(f.IDs, ", "))
		}
		fmt.Fprintln(b)
	}
	if len(r.Warnings) > 0 {
		fmt.Fprintf(b, "## Gold ordering warnings\n\n")
		keys := make([]string, 0, len(r.Warnings))
		for k := range r.Warnings {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(b, "- %s: %d questions\n", k, r.Warnings[k])
		}
		fmt.Fprintln(b)
	}
	if len(r.Latency) > 0 {
		fmt.Fprintf(b, "## Latency\n\n| stage | n | p50 ms | p95 ms | max ms | total ms |\n|---|---:|---:|---:|---:|---:|\n")
		for _, k := range sortedKeys(r.Latency) {
			p := r.Latency[k]
			fmt.Fprintf(b, "| %s | %d | %.2f | %.2f | %.2f | %.1f |\n", k, p.N, p.P50MS, p.P95MS, p.MaxMS, p.TotalMS)
		}
		fmt.Fprintln(b)
	}
	if len(r.Tokens) > 0 {
		fmt.Fprintf(b, "## Tokens per question\n\n| stage | n | input p50 | input p95 | output p50 | output p95 | input total | output total |\n|---|---:|---:|---:|---:|---:|---:|---:|\n")
		for _, k := range sortedKeys(r.Tokens) {
			t := r.Tokens[k]
			fmt.Fprintf(b, "| %s | %d | %d | %d | %d | %d | %d | %d |\n", k, t.N, t.InputP50, t.InputP95, t.OutputP50, t.OutputP95, t.Input, t.Output)
		}
		fmt.Fprintln(b)
	}
	if r.Recall != nil {
		r.Recall.markdown(b)
	}
	if o := r.Oracle; o != nil {
		fmt.Fprintf(b, "## Oracle check\n\nOracle EX %s vs strict table recall %s.", pct(o.EX), pct(o.StrictTableRecall))
		if len(o.RecalledNotCorrect)+len(o.NotRecalledCorrect) == 0 {
			fmt.Fprintln(b, " They agree question by question.")
		} else {
			fmt.Fprintln(b)
			for _, s := range o.RecalledNotCorrect {
				fmt.Fprintf(b, "- recalled but not correct: %s\n", s)
			}
			for _, s := range o.NotRecalledCorrect {
				fmt.Fprintf(b, "- correct but not recalled: %s\n", s)
			}
		}
		fmt.Fprintln(b)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// writeExclusions lists exclusions grouped by reason, a database path in
// the reason shortened to its database.
func writeExclusions(b *strings.Builder, ex []Exclusion) {
	type group struct {
		n   int
		dbs []string
	}
	groups := map[string]*group{}
	var order []string
	for _, e := range ex {
		reason := e.Reason
		if db := e.DB; db != "" {
			reason = strings.ReplaceAll(reason, db, "<db>")
		}
		g := groups[reason]
		if g == nil {
			g = &group{}
			groups[reason] = g
			order = append(order, reason)
		}
		g.n += e.Count
		g.dbs = append(g.dbs, "`"+e.DB+"`")
	}
	for _, reason := range order {
		g := groups[reason]
		if len(g.dbs) == 1 { // nothing grouped: name the database in full
			reason = strings.ReplaceAll(reason, "<db>", strings.Trim(g.dbs[0], "`"))
		}
		questions := "questions"
		if g.n == 1 {
			questions = "question"
		}
		fmt.Fprintf(b, "- excluded: %d %s of %s: %s\n", g.n, questions, strings.Join(g.dbs, ", "), reason)
	}
	if len(order) > 0 {
		fmt.Fprintln(b)
	}
}

package text2sql

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// MaxCandidates bounds Config.Candidates.
const MaxCandidates = 20

// SelectionMethod says how the winner among an attempt's candidates was
// chosen: SelectVote, SelectSelector, SelectJudge, SelectOrder or
// SelectNone.
type SelectionMethod string

// The selection methods.
const (
	// SelectVote: one result group has more candidates than any other
	// (self-consistency by execution result, as in DAIL-SQL, Gao et al.
	// 2023, "Text-to-SQL Empowered by Large Language Models: A Benchmark
	// Evaluation").
	SelectVote SelectionMethod = "vote"
	// SelectJudge: several groups tie for the most candidates (or, with
	// Config.CloseCalls, none holds a majority), no Selector chose, and
	// the judge reviewed their first candidates in turn, largest group
	// first; the first it accepted wins, else the first reviewed.
	SelectJudge SelectionMethod = "judge"
	// SelectSelector: several groups tie (or, with Config.CloseCalls,
	// none holds a majority) and Config.Selector chose among their first
	// candidates (package selector compares them two
	// at a time, the pairwise selection of CHASE-SQL, Pourreza et al.
	// 2024).
	SelectSelector SelectionMethod = "selector"
	// SelectOrder: several groups tie (or, with Config.CloseCalls, none
	// holds a majority) and neither the selector nor the judge decided
	// (none is set, the model-call budget is spent, an unusable answer):
	// the earliest candidate of the tied groups wins (candidate 1 is the
	// usual prompt's), or in a close call the largest group's.
	SelectOrder SelectionMethod = "order"
	// SelectNone: no candidate executed without error; the attempt is the
	// first candidate's, as with one candidate, and goes to repair.
	SelectNone SelectionMethod = "none"
)

// Selection is how one attempt's SQL was chosen among several candidates
// (Config.Candidates): every candidate with its result group, and why the
// winner won. The pipeline adds it to the trace as a StageSelection step.
type Selection struct {
	// Candidates are in generation order: Candidates[0] is the usual
	// prompt's (variant 0), the others were generated in parallel.
	Candidates []CandidateOutcome `json:"candidates"`
	// Groups is the number of distinct results among the candidates that
	// executed without error (compared by Config.SameResult).
	Groups int `json:"groups"`
	// Winner is the index in Candidates of the candidate the attempt took;
	// 0 when none executed (SelectNone).
	Winner int `json:"winner"`
	// Votes is the number of candidates in the winner's group; 0 when
	// none executed.
	Votes  int             `json:"votes"`
	Method SelectionMethod `json:"method"`
	// Reason says why the winner won, e.g. "2 of 3 candidates agree
	// (result group 1 of 2)".
	Reason string `json:"reason"`
}

// CandidateOutcome is one candidate of an attempt and what became of it.
type CandidateOutcome struct {
	// Variant is GenerateRequest.Variant: 0 for the usual prompt.
	Variant int `json:"variant"`
	// Candidate is the generator's answer; nil when it gave none.
	Candidate *Candidate `json:"candidate,omitempty"`
	// Result is the execution's result, its Error holding a refusal of
	// the guard, a failure of the deterministic checks or of the SQL; nil
	// when nothing was executed (declined, no candidate, an error).
	Result *Result `json:"result,omitempty"`
	// Group is the 1-based result group; 0 when the candidate has no
	// result without error: such a candidate never wins.
	Group int `json:"group"`
	// Verdict is the judge's review when it settled a tie, and Warnings
	// the deterministic checks' warnings it was shown.
	Verdict  *Verdict `json:"verdict,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
	// Error is why the candidate has no result: the generator's error
	// (an *OutputError, a *ModelError, ErrNilResult), the executor's, or
	// the judge's unusable answer in a tie. Not in this type's JSON;
	// package wire writes its message.
	Error error `json:"-"`
}

// DefaultSameResult is the result comparison of the candidates' vote when
// Config.SameResult is nil: two results are the same when both are
// non-nil without an Error, have as many columns, and hold the same rows
// as a multiset (row order and column names ignored, column order kept).
// Cells compare by value: numbers of any Go type by their float64 value
// (1 == 1.0), []byte as text, text never equal to a number, NULL equal
// to NULL. Package accuracy's SameResult compares as the Spider evaluator
// does (column permutations, 12 significant digits); the command line
// and the server use it.
func DefaultSameResult(a, b *Result) bool {
	if a == nil || b == nil || a.Error != nil || b.Error != nil || len(a.Rows) != len(b.Rows) || width(a) != width(b) {
		return false
	}
	count := map[string]int{}
	for _, row := range a.Rows {
		count[rowKey(row)]++
	}
	for _, row := range b.Rows {
		k := rowKey(row)
		if count[k] == 0 {
			return false
		}
		count[k]--
	}
	return true
}

// width is the number of columns of r: its column names, else its first row.
func width(r *Result) int {
	if len(r.Columns) > 0 || len(r.Rows) == 0 {
		return len(r.Columns)
	}
	return len(r.Rows[0])
}

// rowKey encodes a row for DefaultSameResult: each cell as a kind letter
// and its canonical text, quoted.
func rowKey(row []any) string {
	var b strings.Builder
	for _, v := range row {
		b.WriteString(strconv.Quote(cellKey(v)))
	}
	return b.String()
}

func cellKey(v any) string {
	var f float64
	switch x := v.(type) {
	case nil:
		return "N"
	case string:
		return "s" + x
	case []byte:
		return "s" + string(x)
	case bool:
		return "b" + strconv.FormatBool(x)
	case int:
		return "i" + strconv.FormatInt(int64(x), 10)
	case int8, int16, int32, int64:
		return "i" + fmt.Sprint(x)
	case uint, uint8, uint16, uint32, uint64:
		return "i" + fmt.Sprint(x)
	case float32:
		f = float64(x)
	case float64:
		f = x
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return "i" + strconv.FormatInt(i, 10)
		}
		var err error
		if f, err = x.Float64(); err != nil {
			return "s" + x.String()
		}
	default:
		return "o" + fmt.Sprint(x)
	}
	if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		return "i" + strconv.FormatInt(int64(f), 10)
	}
	return "f" + strconv.FormatFloat(f, 'g', -1, 64)
}

// more reports whether the first candidate a, checked and executed,
// calls for the others: Config.Candidates is above 1, and a failed, or
// Config.Hard finds the question hard, or Config.AllCandidates is set.
func (r *run) more(a *Attempt) bool {
	cfg := r.p.cfg
	return cfg.Candidates > 1 && (cfg.AllCandidates || a.Result.Error != nil || cfg.Hard(r.ans.Retrieval, a.Candidate.SQL))
}

// choose generates, checks and executes the other candidates of the
// attempt whose first candidate is first, in parallel, as many as the
// model-call budget leaves (one call each, and one for the judge when
// there is one), and returns the attempt of the winner with its
// Selection, and whether the judge has already reviewed it (in a tie).
// The error is ctx's when it ended, the selector's or the judge's.
func (r *run) choose(ctx context.Context, first *Attempt, hints []string) (*Attempt, bool, error) {
	left := r.maxCalls - r.trace.ModelCalls
	if r.p.cfg.Judge != nil {
		left-- // kept for the judge's review of the winner
	}
	n := min(r.p.cfg.Candidates-1, left)
	if n <= 0 {
		return first, false, nil
	}
	outs := make([]CandidateOutcome, n+1)
	outs[0] = CandidateOutcome{Candidate: first.Candidate, Result: first.Result}
	traces := make([]Trace, n+1)
	var wg sync.WaitGroup
	for k := 1; k <= n; k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[k] = r.candidate(ctx, &traces[k], k, hints)
		}()
	}
	wg.Wait()
	for k := 1; k <= n; k++ {
		r.trace.merge(&traces[k], fmt.Sprintf("candidate %d: ", k+1))
	}
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	start := time.Now()
	sel := &Selection{Candidates: outs}
	sizes := r.group(sel)
	// heads are the first candidates of the groups, largest group first,
	// in candidate order among equals.
	heads := make([]int, len(sizes))
	for g := range sizes {
		heads[g] = slices.IndexFunc(outs, func(c CandidateOutcome) bool { return c.Group == g+1 })
	}
	size := func(c int) int { return sizes[outs[c].Group-1] }
	slices.SortStableFunc(heads, func(a, b int) int { return cmp.Compare(size(b), size(a)) })
	executed := 0
	for _, n := range sizes {
		executed += n
	}
	judged := false
	switch {
	case len(heads) == 0:
		sel.Method, sel.Reason = SelectNone, "no candidate executed without error; the first candidate's outcome stands"
	case len(heads) > 1 && size(heads[1]) == size(heads[0]):
		k := 2
		for k < len(heads) && size(heads[k]) == size(heads[0]) {
			k++
		}
		tied := heads[:k]
		tie := fmt.Sprintf("result groups %s tie with %d of %d candidates each", groupList(outs, tied), size(heads[0]), len(outs))
		var err error
		if judged, err = r.tieBreak(ctx, sel, tied, tie, "the earliest"); err != nil {
			return nil, false, err
		}
	case len(heads) > 1 && r.p.cfg.CloseCalls && 2*size(heads[0]) <= executed:
		why := fmt.Sprintf("no majority: result group %d has %d of the %d candidates that executed; groups %s contend",
			outs[heads[0]].Group, size(heads[0]), executed, groupList(outs, heads))
		var err error
		if judged, err = r.tieBreak(ctx, sel, heads, why, "the largest group's"); err != nil {
			return nil, false, err
		}
	default:
		sel.Winner, sel.Method = heads[0], SelectVote
		sel.Reason = fmt.Sprintf("%d of %d candidates agree (result group %d of %d)", size(heads[0]), len(outs), outs[heads[0]].Group, len(sizes))
	}
	if len(heads) > 0 {
		sel.Votes = size(sel.Winner)
	}
	r.trace.add(StageSelection, first.N, start, nil, string(sel.Method)+": "+sel.Reason)
	w := outs[sel.Winner]
	a := &Attempt{N: first.N, Plan: first.Plan, Candidate: w.Candidate, Result: w.Result, Verdict: w.Verdict, Warnings: w.Warnings, Selection: sel}
	if sel.Method == SelectNone {
		a.Candidate, a.Result = first.Candidate, first.Result
	}
	return a, judged && a.Verdict != nil, nil
}

// group sets the result group of each candidate of sel that executed
// without error and returns the groups' sizes: a candidate joins the
// first group whose first candidate has the same result (Config.SameResult).
func (r *run) group(sel *Selection) []int {
	same := r.p.cfg.SameResult
	var sizes, firsts []int
	for i := range sel.Candidates {
		c := &sel.Candidates[i]
		if c.Error != nil || c.Result == nil || c.Result.Error != nil {
			continue
		}
		g := slices.IndexFunc(firsts, func(f int) bool { return same(sel.Candidates[f].Result, c.Result) })
		if g < 0 {
			g = len(sizes)
			sizes, firsts = append(sizes, 0), append(firsts, i)
		}
		sizes[g]++
		c.Group = g + 1
	}
	sel.Groups = len(sizes)
	return sizes
}

// groupList names the result groups of the candidates cs: "1, 3".
func groupList(outs []CandidateOutcome, cs []int) string {
	groups := make([]string, len(cs))
	for i, c := range cs {
		groups[i] = strconv.Itoa(outs[c].Group)
	}
	return strings.Join(groups, ", ")
}

// tieBreak decides between contenders, the first candidates of groups
// in a tie or a close call (described by tie), in order: the selector
// chooses when there is one; else the judge reviews them in turn and the
// first it accepts wins; with neither, with the budget spent or when the
// judge accepts none, contenders[0] (named by fallback, "the earliest")
// wins. It reports whether the judge reviewed the winner.
func (r *run) tieBreak(ctx context.Context, sel *Selection, tied []int, tie, fallback string) (bool, error) {
	sel.Winner = tied[0]
	earliest := fallback + ", candidate " + strconv.Itoa(tied[0]+1)
	if r.p.cfg.Selector != nil {
		chose, note, err := r.selector(ctx, sel, tied, tie)
		if chose || err != nil {
			return false, err
		}
		tie += "; " + note
	}
	if r.p.cfg.Judge == nil {
		sel.Method, sel.Reason = SelectOrder, tie+"; no judge: "+earliest+", wins"
		return false, nil
	}
	judged := false
	for _, i := range tied {
		if r.trace.ModelCalls >= r.maxCalls {
			break
		}
		c := &sel.Candidates[i]
		a := &Attempt{N: len(r.ans.Attempts) + 1, Plan: r.curPlan, Candidate: c.Candidate, Result: c.Result}
		r.warn(ctx, a)
		c.Warnings = a.Warnings
		v, err := r.judge(ctx, a)
		var outErr *OutputError
		if errors.As(err, &outErr) {
			c.Error = err
			continue
		}
		if err != nil {
			return false, err
		}
		c.Verdict, judged = v, true
		if v.OK {
			sel.Winner, sel.Method = i, SelectJudge
			sel.Reason = fmt.Sprintf("%s; the judge accepted candidate %d", tie, i+1)
			return true, nil
		}
	}
	if !judged {
		sel.Method, sel.Reason = SelectOrder, tie+"; the judge gave no verdict (an unusable answer or the model-call budget spent): "+earliest+", wins"
		return false, nil
	}
	sel.Method, sel.Reason = SelectJudge, tie+"; the judge accepted none: "+earliest+", stands"
	return true, nil
}

// selector asks Config.Selector to choose among the tied candidates,
// with the model calls the budget leaves (one kept for the judge when
// there is one). It reports whether it chose; when not, note says why:
// no call left, an unusable answer (an *OutputError) or a choice out of
// range. Any other error of the selector ends the run.
func (r *run) selector(ctx context.Context, sel *Selection, tied []int, tie string) (chose bool, note string, err error) {
	n := len(r.ans.Attempts) + 1
	left := r.maxCalls - r.trace.ModelCalls
	if r.p.cfg.Judge != nil {
		left--
	}
	if left < 1 {
		return false, "no model call left for the selector", nil
	}
	cands := make([]Attempt, len(tied))
	for j, i := range tied {
		cands[j] = Attempt{N: n, Plan: r.curPlan, Candidate: sel.Candidates[i].Candidate, Result: sel.Candidates[i].Result}
	}
	start := time.Now()
	ch, err := r.p.cfg.Selector.Select(ctx, SelectRequest{Question: r.ans.Question, Retrieval: r.ans.Retrieval, Plan: r.curPlan,
		Candidates: cands, MaxCalls: left})
	var calls []ModelCall
	if ch != nil {
		calls = ch.Calls
	} else if err == nil {
		err = ErrNilResult
	}
	var outErr *OutputError
	switch {
	case errors.As(err, &outErr):
		r.trace.add(StageSelection, n, start, calls, "selector error: "+err.Error())
		return false, "the selector gave no usable answer (" + err.Error() + ")", nil
	case err != nil:
		r.trace.add(StageSelection, n, start, calls, "selector error: "+err.Error())
		return false, "", fmt.Errorf("select: %w", err)
	case ch.Index < 0 || ch.Index >= len(tied):
		note = fmt.Sprintf("the selector chose candidate %d of %d, which does not exist", ch.Index, len(tied))
		r.trace.add(StageSelection, n, start, calls, "selector error: "+note)
		return false, note, nil
	}
	w := tied[ch.Index]
	r.trace.add(StageSelection, n, start, calls, fmt.Sprintf("selector: candidate %d: %s", w+1, ch.Reason))
	sel.Winner, sel.Method = w, SelectSelector
	sel.Reason = fmt.Sprintf("%s; the selector chose candidate %d", tie, w+1)
	if ch.Reason != "" {
		sel.Reason += ": " + ch.Reason
	}
	return true, "", nil
}

// candidate generates variant k of the current attempt, checks and
// executes it, recording its steps in t. It reads the run, never writes
// it, so candidates run in parallel.
func (r *run) candidate(ctx context.Context, t *Trace, k int, hints []string) CandidateOutcome {
	out := CandidateOutcome{Variant: k}
	a, err := r.gen(ctx, t, k, hints)
	if err != nil {
		out.Error = err
		return out
	}
	out.Candidate = a.Candidate
	if !a.Candidate.Answerable {
		return out
	}
	if !r.check(t, a) {
		if err := r.exec(ctx, t, a); err != nil {
			out.Error = err
			return out
		}
	}
	out.Result = a.Result
	return out
}

// merge adds the steps of u to t, each outcome prefixed with label.
func (t *Trace) merge(u *Trace, label string) {
	for _, s := range u.Steps {
		s.Outcome = label + s.Outcome
		t.Steps = append(t.Steps, s)
	}
	t.Usage = t.Usage.Add(u.Usage)
	t.ModelCalls += u.ModelCalls
}

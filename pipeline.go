package text2sql

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"
)

// DefaultMaxRepairs is the number of repairs Ask makes when Config.MaxRepairs
// is zero.
const DefaultMaxRepairs = 2

// Config assembles a Pipeline. Zero values mean the documented defaults.
type Config struct {
	Retriever Retriever // required
	Generator Generator // required
	// Executor runs the SQL; required by Ask and Execute, not by Generate.
	Executor Executor
	Planner  Planner // optional; nil skips planning
	Judge    Judge   // optional; nil skips judging
	// Selector, optional, decides a tie in the vote among an attempt's
	// candidates (see Candidates) before the judge does.
	Selector Selector
	// Narrator, optional, puts an answer Ask executed in words
	// (Answer.Words); package summary is one. Its failure leaves the
	// answer without words, never fails it.
	Narrator Narrator
	// MaxRepairs bounds the attempts after the first: an execution error or
	// a judge's rejection sends the run back at most this many times.
	// 0 means DefaultMaxRepairs; a negative value means no repair.
	MaxRepairs int
	// MaxRows caps the rows of each execution (the result is marked
	// truncated); 0 means the executor's default.
	MaxRows int
	// Timeout bounds each execution; 0 means the executor's default.
	Timeout time.Duration
	// DisableExampleReuse turns off answering with a verified example's SQL
	// (Retrieval.Match) without a model call.
	DisableExampleReuse bool
	// DisableNoProgress turns off no-progress detection: by default a repair
	// that returns the same SQL as an earlier failed attempt ends the run.
	DisableNoProgress bool
	// Checker runs deterministic checks before execution (failures are
	// repaired like execution errors) and after it (warnings go to the
	// judge). Optional; see package lint.
	Checker Checker
	// MaxModelCalls bounds the model calls of one run, over every stage;
	// 0 means DefaultMaxModelCalls, a negative value means no bound.
	MaxModelCalls int
	// PlanWhen and JudgeWhen decide when the planner and the judge run
	// (when set): the zero value WhenAlways, or WhenHard.
	PlanWhen, JudgeWhen When
	// Hard tells a hard question from an easy one for WhenHard; nil means
	// DefaultHard. sql is "" when asked before generation.
	Hard func(c *Retrieval, sql string) bool
	// Candidates is the number of SQL candidates Ask may generate for one
	// attempt, for self-consistency by execution result (DAIL-SQL, Gao et
	// al. 2023; after Wang et al. 2023, "Self-Consistency Improves Chain
	// of Thought Reasoning in Language Models"). The first candidate, the
	// usual prompt's, is checked and executed; then the others, prompt
	// variants (GenerateRequest.Variant), are generated, checked and
	// executed through the guard in parallel, as many as MaxModelCalls
	// leaves counting one call each (a generator's re-ask of a malformed
	// answer may go beyond) and keeping one for the judge, and the
	// attempt takes a candidate of the result group most candidates
	// share (Attempt.Selection says which and why; ties go to the
	// Selector, else the judge, see SelectSelector and SelectJudge). A
	// candidate that is refused, fails its checks or its execution never
	// wins. Cheap by default: no other candidate is generated when the
	// first executed without error and Hard finds the question easy. 0
	// and 1 mean one candidate; at most MaxCandidates. Generate always
	// makes one.
	Candidates int
	// AllCandidates generates the other candidates even when the first
	// executed without error on an easy question.
	AllCandidates bool
	// CloseCalls treats a vote without a majority — the largest result
	// group holds half the candidates that executed or fewer, as 2 of 5 —
	// like a tie: the Selector, else the judge, decides among the first
	// candidates of every group, largest group first.
	CloseCalls bool
	// SameResult reports whether two candidates' results (both without
	// Error) are the same answer, grouping them for the vote; nil means
	// DefaultSameResult. It is called from one goroutine at a time.
	// accuracy.SameResult compares as the Spider evaluator does.
	SameResult func(a, b *Result) bool
}

// DefaultMaxModelCalls is the model-call budget of one run when
// Config.MaxModelCalls is zero.
const DefaultMaxModelCalls = 16

// unbounded is a model-call budget no run reaches.
const unbounded = int(^uint(0) >> 1)

// When says when an optional stage runs.
type When int

// The stage policies.
const (
	WhenAlways When = iota // every run
	WhenHard               // only when Config.Hard says the question is hard
)

// DefaultHard is the default difficulty test: the retrieval is low
// confidence, or three or more tables are shown, or the SQL aggregates
// over a join. The shown tables are the retriever's budget, not the
// question's: on a schema of a few tables every question shows three or
// more, so WhenHard there runs the stage as often as WhenAlways; give Hard
// a test of your own for such schemas.
func DefaultHard(c *Retrieval, sql string) bool {
	if c != nil && (c.LowConfidence || len(c.Tables) >= 3) {
		return true
	}
	up := strings.ToUpper(sql)
	if !strings.Contains(up, "JOIN") {
		return false
	}
	for _, agg := range []string{"GROUP BY", "COUNT(", "SUM(", "AVG(", "MIN(", "MAX("} {
		if strings.Contains(up, agg) {
			return true
		}
	}
	return false
}

// Pipeline runs retrieve → plan → generate → execute → judge with repair.
// It is safe for concurrent use when its stages are.
type Pipeline struct {
	cfg Config
}

// New validates cfg and returns a Pipeline holding a copy of it. A missing
// Retriever or Generator, or a stage that is a typed nil (a nil
// *sqlite.Executor, say), is an error wrapping ErrInvalidConfig.
func New(cfg Config) (*Pipeline, error) {
	if cfg.Retriever == nil {
		return nil, invalidConfig("Retriever is required")
	}
	if cfg.Generator == nil {
		return nil, invalidConfig("Generator is required")
	}
	for name, stage := range map[string]any{"Retriever": cfg.Retriever, "Generator": cfg.Generator, "Executor": cfg.Executor,
		"Planner": cfg.Planner, "Judge": cfg.Judge, "Checker": cfg.Checker, "Selector": cfg.Selector, "Narrator": cfg.Narrator} {
		if typedNil(stage) {
			return nil, invalidConfig("%s is a nil %T (an interface holding a nil pointer is not an absent stage)", name, stage)
		}
	}
	if cfg.MaxRows < 0 {
		return nil, invalidConfig("MaxRows %d is negative", cfg.MaxRows)
	}
	if cfg.Timeout < 0 {
		return nil, invalidConfig("Timeout %v is negative", cfg.Timeout)
	}
	switch {
	case cfg.MaxRepairs == 0:
		cfg.MaxRepairs = DefaultMaxRepairs
	case cfg.MaxRepairs < 0:
		cfg.MaxRepairs = 0
	}
	switch {
	case cfg.MaxModelCalls == 0:
		cfg.MaxModelCalls = DefaultMaxModelCalls
	case cfg.MaxModelCalls < 0:
		cfg.MaxModelCalls = unbounded
	}
	for _, w := range []When{cfg.PlanWhen, cfg.JudgeWhen} {
		if w != WhenAlways && w != WhenHard {
			return nil, invalidConfig("unknown When %d", w)
		}
	}
	if cfg.Hard == nil {
		cfg.Hard = DefaultHard
	}
	if cfg.Candidates < 0 || cfg.Candidates > MaxCandidates {
		return nil, invalidConfig("Candidates %d is outside [0, %d]", cfg.Candidates, MaxCandidates)
	}
	if cfg.SameResult == nil {
		cfg.SameResult = DefaultSameResult
	}
	return &Pipeline{cfg: cfg}, nil
}

// typedNil reports whether v is a non-nil interface holding a nil
// pointer, map, slice, function or channel: a stage that would panic on
// its first call.
func typedNil(v any) bool {
	if v == nil {
		return false
	}
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan:
		return rv.IsNil()
	}
	return false
}

// Status is the outcome of a run.
type Status string

// The run outcomes.
const (
	// StatusAnswered: the SQL executed without error; no judge reviewed it.
	StatusAnswered Status = "answered"
	// StatusVerified: the SQL executed and the judge accepted the answer.
	StatusVerified Status = "verified"
	// StatusUnverified: the repair budget was spent with the judge still
	// rejecting; Answer holds the best attempt that executed.
	StatusUnverified Status = "unverified"
	// StatusDeclined: the generator marked the question not answerable from
	// this database. Not an error; nothing was executed.
	StatusDeclined Status = "declined"
	// StatusGenerated: Generate produced SQL; nothing was executed.
	StatusGenerated Status = "generated"
	// StatusFailed: no attempt produced a usable result; Ask also returns
	// an error.
	StatusFailed Status = "failed"
)

// Answer is the outcome of Ask or Generate. Its fields describe the final
// attempt; Attempts holds every attempt, oldest first.
type Answer struct {
	Question    string     `json:"question"`
	Status      Status     `json:"status"`
	SQL         string     `json:"sql"`
	Explanation string     `json:"explanation"`
	Result      *Result    `json:"result,omitempty"`
	Retrieval   *Retrieval `json:"context,omitempty"`
	Plan        *Plan      `json:"plan,omitempty"`
	Verdict     *Verdict   `json:"verdict,omitempty"`
	// ReusedExample is the ID of the verified example whose SQL was reused
	// without a model call, or "".
	ReusedExample string `json:"reused_example,omitempty"`
	// Selection is how the reported attempt's SQL was chosen among
	// several candidates (Config.Candidates), with every candidate; nil
	// when only one was generated.
	Selection *Selection `json:"selection,omitempty"`
	// Words is the answer in words (Config.Narrator), or "".
	Words    string    `json:"words,omitempty"`
	Attempts []Attempt `json:"attempts"`
	Trace    Trace     `json:"trace"`
}

// Trace records what each stage did.
type Trace struct {
	Steps      []Step        `json:"steps"`
	Usage      Usage         `json:"usage"`       // total over every model call
	ModelCalls int           `json:"model_calls"` // total
	Duration   time.Duration `json:"duration_ns"` // wall time of the whole run
	// Start is when the run began, for tracers that place the steps on a
	// timeline; not in JSON.
	Start time.Time `json:"-"`
}

// Step is one stage run in a trace.
type Step struct {
	Stage    Stage         `json:"stage"`
	Attempt  int           `json:"attempt"` // the attempt it belongs to; 0 before the first
	Duration time.Duration `json:"duration_ns"`
	Start    time.Time     `json:"-"` // when the stage began; not in JSON
	Usage    Usage         `json:"usage"`
	// Outcome is a short description: "ok", "reused example q3",
	// "error: …", "rejected: …", "declined".
	Outcome string      `json:"outcome"`
	Calls   []ModelCall `json:"calls,omitempty"`
}

func (t *Trace) add(stage Stage, attempt int, start time.Time, calls []ModelCall, outcome string) {
	s := Step{Stage: stage, Attempt: attempt, Start: start, Duration: time.Since(start), Outcome: outcome, Calls: calls}
	for _, c := range calls {
		s.Usage = s.Usage.Add(c.Usage)
	}
	t.Steps = append(t.Steps, s)
	t.Usage = t.Usage.Add(s.Usage)
	t.ModelCalls += len(calls)
}

// Generate retrieves context and generates SQL without executing it; it
// needs no Executor. The returned Answer is never nil, and the error is
// non-nil exactly when the status is StatusFailed. By status:
//
//   - StatusGenerated: SQL and Explanation are the candidate's. When the
//     context holds a reusable verified example (Retrieval.Match) and
//     Config.DisableExampleReuse is false, they are that example's, made
//     without a model call, and ReusedExample names it.
//   - StatusDeclined: the generator marked the question not answerable;
//     Explanation says why, SQL is the generator's (empty from package
//     generator).
//   - StatusFailed: SQL and Explanation are empty; the error is the
//     retrieval's (or ErrEmptyQuestion), the planner's or the generator's:
//     an *OutputError when the model's answer held no usable SQL, a
//     *ModelError (ErrModel) when a provider failed, the context's error
//     when cancelled.
//
// In every status Result and Verdict are nil, nothing having been executed
// or judged. Retrieval is nil only when retrieval failed. Plan is the plan
// the SQL was generated from: nil without a Planner, when PlanWhen skipped
// it or its answer was unusable, and for a reused example. Attempts holds
// the one attempt made (its Result nil), none when retrieval or planning
// failed or the generator failed with an error other than an *OutputError.
// Trace is always set.
func (p *Pipeline) Generate(ctx context.Context, question string) (*Answer, error) {
	r := p.newRun(AskRequest{Question: question})
	defer r.finish()
	if err := r.retrieve(ctx, RetrieveRequest{Question: question}); err != nil {
		return r.fail(err)
	}
	if a := r.reuse(); a != nil {
		r.ans.Attempts = append(r.ans.Attempts, *a)
		r.ans.Status = StatusGenerated
		return r.ans, nil
	}
	if err := r.plan(ctx, nil); err != nil {
		return r.fail(err)
	}
	a, err := r.generate(ctx, nil)
	if a != nil {
		r.ans.Attempts = append(r.ans.Attempts, *a)
	}
	if err != nil {
		return r.fail(err)
	}
	r.settle(a)
	r.ans.Status = StatusGenerated
	if !a.Candidate.Answerable {
		r.ans.Status = StatusDeclined
	}
	return r.ans, nil
}

// Ask answers a question: retrieve, plan (when a planner is set), generate,
// execute, judge (when a judge is set), repairing as described on Config.
//
// The returned Answer is nil only when the pipeline has no Executor (the
// error wraps ErrInvalidConfig). Otherwise it is never nil, and the error
// is non-nil exactly when the status is StatusFailed. By status:
//
//   - StatusAnswered, StatusVerified: SQL and Explanation are those of the
//     attempt that executed, and Result its result: non-nil, with a nil
//     Result.Error. Verdict is the judge's acceptance for StatusVerified,
//     nil for StatusAnswered (no judge ran). ReusedExample names the
//     verified example whose SQL ran without a model call, else "".
//   - StatusUnverified (a judge is set): the judge rejected every attempt
//     or gave an unusable answer, or MaxModelCalls was reached. SQL,
//     Explanation, Result (non-nil, Result.Error nil) and Verdict are those
//     of the latest attempt that executed; Verdict is its rejection, or nil
//     when the judge gave none for it.
//   - StatusDeclined: the generator marked the question not answerable;
//     nothing was executed. Result and Verdict are nil, Explanation says
//     why, SQL is the generator's (empty from package generator).
//   - StatusFailed: no usable result. Result and Verdict are nil; SQL and
//     Explanation are empty, except when a reused verified example failed
//     to run and no later attempt settled (they are then that example's,
//     and ReusedExample is ""). The error says why: ErrRepairsExhausted
//     when every attempt failed (wrapping the last error),
//     ErrBudgetExhausted when MaxModelCalls was reached with no attempt
//     executed, an *OutputError when the model's answer held no usable SQL,
//     a *ModelError (ErrModel) when a provider failed, ErrEmptyQuestion, or
//     the context's error when cancelled.
//
// In every status: Retrieval is the retrieval's result, nil only when the
// first retrieval failed (ErrEmptyQuestion, a retriever error). Plan is the
// plan of the attempt the answer reports: nil without a Planner, when
// PlanWhen skipped it or its answer was unusable, for a reused example, and
// in StatusFailed. Attempts holds every attempt, oldest first, including
// failed ones; an attempt's Result is nil when it was not executed
// (declined, no usable SQL, the same SQL as an earlier attempt, or the
// executor failed: then the attempt's Error is the executor's error) and
// holds the checker's or the executor's refusal in Result.Error when it
// failed. With Config.Candidates, an attempt that generated more than one
// candidate has a Selection listing them all, and its Candidate, Result
// and Verdict are the winner's; Answer.Selection is the reported
// attempt's. The error is the selector's (wrapped, "select: …") when it
// failed other than with an unusable answer, and ctx's when cancelled
// while the candidates ran (every one of them has then returned).
// Trace is always set.
func (p *Pipeline) Ask(ctx context.Context, question string) (*Answer, error) {
	return p.Do(ctx, AskRequest{Question: question})
}

// AskRequest is a question and the options of one call of Do. A zero
// option means the Config's; an option of a later version is a new field
// here.
type AskRequest struct {
	Question string
	// MaxRows caps the rows of each execution of this call (the result
	// is marked truncated); 0 means Config.MaxRows. Negative is an error
	// wrapping ErrInvalidConfig.
	MaxRows int
	// MaxModelCalls bounds the model calls of this call, over every
	// stage; 0 means Config.MaxModelCalls, a negative value means no
	// bound.
	MaxModelCalls int
}

// Do answers req.Question as Ask does, with req's options for this call
// only. Ask(ctx, q) is Do(ctx, AskRequest{Question: q}); the answer and
// the error are as documented there. A negative req.MaxRows returns a nil
// Answer and an error wrapping ErrInvalidConfig.
func (p *Pipeline) Do(ctx context.Context, req AskRequest) (*Answer, error) {
	if req.MaxRows < 0 {
		return nil, invalidConfig("AskRequest.MaxRows %d is negative", req.MaxRows)
	}
	ans, err := p.ask(ctx, req)
	if err == nil && ans != nil && p.cfg.Narrator != nil && ans.Result != nil && ans.Result.Error == nil {
		p.narrate(ctx, ans)
	}
	return ans, err
}

// narrate puts ans in words, as a StageWords step of its trace.
func (p *Pipeline) narrate(ctx context.Context, ans *Answer) {
	start := time.Now()
	n, err := p.cfg.Narrator.Narrate(ctx, NarrateRequest{Question: ans.Question, SQL: ans.SQL, Result: ans.Result})
	var calls []ModelCall
	outcome := "ok"
	switch {
	case err != nil:
		outcome = "no words: " + err.Error()
	case n == nil:
		outcome = "no words: " + ErrNilResult.Error()
	default:
		ans.Words, calls = n.Text, n.Calls
		if n.Source != "" {
			outcome = "ok (" + n.Source + ")"
		}
	}
	if err != nil && n != nil {
		calls = n.Calls
	}
	ans.Trace.add(StageWords, len(ans.Attempts), start, calls, outcome)
	ans.Trace.Duration = time.Since(ans.Trace.Start)
}

// ask is Do's run: retrieve, run a matched verified example, then
// rounds of repair until one ends the run.
func (p *Pipeline) ask(ctx context.Context, req AskRequest) (*Answer, error) {
	if p.cfg.Executor == nil {
		return nil, invalidConfig("Ask needs an Executor")
	}
	r := p.newRun(req)
	defer r.finish()
	if err := r.retrieve(ctx, RetrieveRequest{Question: req.Question}); err != nil {
		return r.fail(err)
	}
	if stop, err := r.tryExample(ctx); stop {
		return r.ans, err
	}
	for {
		if stop, err := r.round(ctx); stop {
			return r.ans, err
		}
	}
}

// retry is where the next round starts and what it is told.
type retry struct {
	from  Stage    // StagePlan, StageRetrieval (then plan) or StageSQL
	hints []string // a judge's hints for that stage
}

// stop ends the run with an end helper's (fail, exhausted, …) error:
// the answer is r.ans.
func (r *run) stop(_ *Answer, err error) (bool, error) { return true, err }

// tryExample runs the verified example the retrieval matched, when reuse
// is on. The run stops when it answered or the executor could not work;
// an example that no longer runs stays as a failed attempt the generator
// sees.
func (r *run) tryExample(ctx context.Context) (stop bool, err error) {
	a := r.reuse()
	if a == nil {
		return false, nil
	}
	if err := r.execute(ctx, a); err != nil {
		return r.stop(r.fail(err))
	}
	r.ans.Attempts = append(r.ans.Attempts, *a)
	if a.Result.Error == nil {
		r.settle(a)
		r.ans.Status = StatusAnswered
		return true, nil
	}
	r.ans.ReusedExample = ""
	return false, nil
}

// round makes one attempt: redo what the last verdict blamed upstream of
// the SQL, draft the SQL, run it, have it reviewed. It stops the run, or
// sets r.next for the next round.
func (r *run) round(ctx context.Context) (stop bool, err error) {
	if r.trace.ModelCalls >= r.maxCalls {
		return r.stop(r.budgetSpent())
	}
	next := r.next
	if err := r.redo(ctx, next); err != nil {
		return r.stop(r.fail(err))
	}
	a, stop, err := r.draft(ctx, next.hints)
	if stop {
		return true, err
	}
	a, judged, err := r.runAttempt(ctx, a, next.hints)
	if err != nil {
		return r.stop(r.fail(err))
	}
	if a.Result.Error != nil {
		r.ans.Attempts = append(r.ans.Attempts, *a)
		if !r.canRepair() {
			return r.stop(r.exhausted(a.Result.Error))
		}
		r.next = retry{from: StageSQL}
		return false, nil
	}
	return r.review(ctx, a, judged)
}

// redo runs again the stages before generation that next starts from:
// retrieval (with the last verdict's terms and tables), then the plan.
func (r *run) redo(ctx context.Context, next retry) error {
	if next.from == StageRetrieval {
		if err := r.retrieve(ctx, r.nextRetrieval()); err != nil {
			return err
		}
		next.from = StagePlan
	}
	if next.from == StagePlan {
		return r.plan(ctx, next.hints)
	}
	return nil
}

// draft generates the round's first candidate. The run stops on an
// unusable or failed generation, a declined question, or a repair that
// repeats an earlier attempt's SQL (unless Config.DisableNoProgress).
func (r *run) draft(ctx context.Context, hints []string) (a *Attempt, stop bool, err error) {
	a, err = r.generate(ctx, hints)
	var outErr *OutputError
	switch {
	case errors.As(err, &outErr):
		// The generator has already re-asked within its own bound.
		a.Error = err
		r.ans.Attempts = append(r.ans.Attempts, *a)
		_, err = r.fail(err)
		return nil, true, err
	case err != nil:
		_, err = r.fail(err)
		return nil, true, err
	}
	if !a.Candidate.Answerable {
		r.settle(a)
		r.ans.Attempts = append(r.ans.Attempts, *a)
		r.ans.Status = StatusDeclined
		return nil, true, nil
	}
	if prev := r.repeated(a.Candidate.SQL); prev != nil && !r.p.cfg.DisableNoProgress {
		a.Error = fmt.Errorf("no progress: same SQL as attempt %d", prev.N)
		r.ans.Attempts = append(r.ans.Attempts, *a)
		r.trace.add(StageSQL, a.N, time.Now(), nil, "stopped: "+a.Error.Error())
		var cause error = errors.New("rejected by the judge")
		if prev.Result != nil && prev.Result.Error != nil {
			cause = prev.Result.Error
		}
		_, err = r.exhausted(fmt.Errorf("%s: %w", a.Error.Error(), cause))
		return nil, true, err
	}
	return a, false, nil
}

// runAttempt checks and executes a's SQL and, with Config.Candidates,
// the other candidates, choosing among them (judged: the judge already
// reviewed the winner). The error is the executor's or the selector's.
func (r *run) runAttempt(ctx context.Context, a *Attempt, hints []string) (_ *Attempt, judged bool, err error) {
	if !r.check(r.trace, a) {
		if err := r.execute(ctx, a); err != nil {
			return nil, false, err
		}
	}
	if r.more(a) {
		return r.choose(ctx, a, hints)
	}
	return a, false, nil
}

// review ends the round of an attempt that executed: the checks' warnings,
// then the judge when it is to run (unless it already judged the winner
// among candidates). The run stops answered, verified or unverified, or
// goes on from the stage the verdict blames.
func (r *run) review(ctx context.Context, a *Attempt, judged bool) (stop bool, err error) {
	if !judged {
		r.warn(ctx, a)
		if r.p.cfg.Judge == nil || (r.p.cfg.JudgeWhen == WhenHard && !r.p.cfg.Hard(r.ans.Retrieval, a.Candidate.SQL)) {
			r.settle(a)
			r.ans.Attempts = append(r.ans.Attempts, *a)
			r.ans.Status = StatusAnswered
			return true, nil
		}
		v, err := r.judge(ctx, a)
		var outErr *OutputError
		if errors.As(err, &outErr) {
			// The judge's answer was unusable: the attempt executed but
			// stays unverified.
			a.Error = err
			r.ans.Attempts = append(r.ans.Attempts, *a)
			return r.stop(r.unverified())
		}
		if err != nil {
			return r.stop(r.fail(err))
		}
		a.Verdict = v
	}
	v := a.Verdict
	r.ans.Attempts = append(r.ans.Attempts, *a)
	if v.OK {
		r.settle(a)
		r.ans.Status = StatusVerified
		return true, nil
	}
	if !r.canRepair() {
		return r.stop(r.unverified())
	}
	r.next = retry{from: v.Stage, hints: v.Hints}
	if v.Stage != StageRetrieval && v.Stage != StagePlan {
		r.next.from = StageSQL
	}
	r.lastVerdict = v
	return false, nil
}

// Execute runs sql through the configured executor with the pipeline's row
// cap and timeout: the same guard Ask uses. A refusal or SQL error is in
// Result.Error; the error return is for an executor that cannot work
// (wrapped in ErrExecutor, the executor's own error kept: ErrForbidden,
// …), or ErrNilResult for one that returned neither a result nor an
// error.
func (p *Pipeline) Execute(ctx context.Context, sql string) (*Result, error) {
	if p.cfg.Executor == nil {
		return nil, invalidConfig("Execute needs an Executor")
	}
	return p.execute(ctx, sql, p.cfg.MaxRows)
}

// execute is Execute with a row cap of its own.
func (p *Pipeline) execute(ctx context.Context, sql string, maxRows int) (*Result, error) {
	res, err := p.cfg.Executor.Execute(ctx, ExecuteRequest{SQL: sql, MaxRows: maxRows, Timeout: p.cfg.Timeout})
	switch {
	case err != nil:
		return res, fmt.Errorf("%w: %w", ErrExecutor, err)
	case res == nil:
		return nil, ErrNilResult
	}
	return res, nil
}

// run is the state of one Ask or Generate call.
type run struct {
	p           *Pipeline
	ans         *Answer
	trace       *Trace
	start       time.Time
	curPlan     *Plan
	repairs     int
	lastVerdict *Verdict
	next        retry // where Ask's next round starts
	// maxRows and maxCalls are the call's row cap and model-call budget
	// (AskRequest over Config).
	maxRows, maxCalls int
}

func (p *Pipeline) newRun(req AskRequest) *run {
	ans := &Answer{Question: req.Question}
	now := time.Now()
	ans.Trace.Start = now
	r := &run{p: p, ans: ans, trace: &ans.Trace, start: now, next: retry{from: StagePlan},
		maxRows: p.cfg.MaxRows, maxCalls: p.cfg.MaxModelCalls}
	if req.MaxRows > 0 {
		r.maxRows = req.MaxRows
	}
	switch {
	case req.MaxModelCalls > 0:
		r.maxCalls = req.MaxModelCalls
	case req.MaxModelCalls < 0:
		r.maxCalls = unbounded
	}
	return r
}

func (r *run) finish() { r.trace.Duration = time.Since(r.start) }

func (r *run) fail(err error) (*Answer, error) {
	r.ans.Status = StatusFailed
	return r.ans, err
}

// exhausted ends a run whose every attempt failed.
func (r *run) exhausted(last error) (*Answer, error) {
	if a := r.bestExecuted(); a != nil && r.p.cfg.Judge != nil {
		return r.unverified()
	}
	return r.fail(fmt.Errorf("%w after %d attempts: %w", ErrRepairsExhausted, len(r.ans.Attempts), last))
}

// budgetSpent ends a run that reached MaxModelCalls.
func (r *run) budgetSpent() (*Answer, error) {
	if r.bestExecuted() != nil {
		return r.unverified()
	}
	return r.fail(fmt.Errorf("%w: %d calls", ErrBudgetExhausted, r.trace.ModelCalls))
}

// unverified ends a run whose budget is spent with no accepted attempt.
func (r *run) unverified() (*Answer, error) {
	a := r.bestExecuted()
	if a == nil {
		return r.fail(fmt.Errorf("%w: no attempt executed", ErrRepairsExhausted))
	}
	r.settle(a)
	r.ans.Status = StatusUnverified
	return r.ans, nil
}

// bestExecuted returns the latest attempt that executed without error.
func (r *run) bestExecuted() *Attempt {
	for i := len(r.ans.Attempts) - 1; i >= 0; i-- {
		a := &r.ans.Attempts[i]
		if a.Result != nil && a.Result.Error == nil {
			return a
		}
	}
	return nil
}

func (r *run) canRepair() bool {
	if r.repairs >= r.p.cfg.MaxRepairs {
		return false
	}
	r.repairs++
	return true
}

// settle copies attempt a's outcome onto the answer.
func (r *run) settle(a *Attempt) {
	if a.Candidate != nil {
		r.ans.SQL = a.Candidate.SQL
		r.ans.Explanation = a.Candidate.Explanation
	}
	r.ans.Result = a.Result
	r.ans.Plan = a.Plan
	r.ans.Verdict = a.Verdict
	r.ans.Selection = a.Selection
}

// repeated returns an earlier attempt with the same SQL (compared without
// white space differences), or nil.
func (r *run) repeated(sql string) *Attempt {
	norm := strings.Join(strings.Fields(sql), " ")
	for i := range r.ans.Attempts {
		a := &r.ans.Attempts[i]
		if a.Candidate != nil && strings.Join(strings.Fields(a.Candidate.SQL), " ") == norm {
			return a
		}
	}
	return nil
}

func (r *run) retrieve(ctx context.Context, req RetrieveRequest) error {
	if strings.TrimSpace(req.Question) == "" {
		return ErrEmptyQuestion
	}
	start := time.Now()
	c, err := r.p.cfg.Retriever.Retrieve(ctx, req)
	if err == nil && c == nil {
		err = ErrNilResult
	}
	if err != nil {
		r.trace.add(StageRetrieval, len(r.ans.Attempts), start, nil, "error: "+err.Error())
		return fmt.Errorf("retrieve: %w", err)
	}
	r.ans.Retrieval = c
	outcome := fmt.Sprintf("ok: %d items, %d tables", len(c.Items), len(c.Tables))
	if c.LowConfidence {
		outcome += ", low confidence"
	}
	var calls []ModelCall
	if rr := c.Rerank; rr != nil {
		calls = rr.Calls
		if len(rr.Tables) > 0 {
			outcome += fmt.Sprintf(", reranked: %d tables selected", len(rr.Tables))
		}
		if rr.Fallback != "" {
			outcome += ", rerank fallback: " + rr.Fallback
		}
	}
	if kr := c.Keywords; kr != nil {
		calls = append(slices.Clip(calls), kr.Calls...)
		if kr.Fallback != "" {
			outcome += ", keywords fallback: " + kr.Fallback
		} else {
			outcome += fmt.Sprintf(", %d keywords", len(kr.Keywords))
		}
	}
	r.trace.add(StageRetrieval, len(r.ans.Attempts), start, calls, outcome)
	return nil
}

// nextRetrieval is the request of a retrieval redone on a judge's verdict.
func (r *run) nextRetrieval() RetrieveRequest {
	req := RetrieveRequest{Question: r.ans.Question}
	if v := r.lastVerdict; v != nil {
		req.Terms, req.RequiredTables = v.Terms, v.Tables
	}
	return req
}

func (r *run) plan(ctx context.Context, hints []string) error {
	if r.p.cfg.Planner == nil || (r.p.cfg.PlanWhen == WhenHard && !r.p.cfg.Hard(r.ans.Retrieval, "")) {
		return nil
	}
	start := time.Now()
	pl, err := r.p.cfg.Planner.Plan(ctx, PlanRequest{Question: r.ans.Question, Retrieval: r.ans.Retrieval, Attempts: r.ans.Attempts, Hints: hints})
	if err == nil && pl == nil {
		err = ErrNilResult
	}
	if err != nil {
		var calls []ModelCall
		if pl != nil {
			calls = pl.Calls
		}
		var outErr *OutputError
		if errors.As(err, &outErr) {
			// An unusable plan is not fatal: generate from the question.
			r.curPlan = nil
			r.trace.add(StagePlan, len(r.ans.Attempts)+1, start, calls, "error: "+err.Error()+"; continuing without a plan")
			return nil
		}
		r.trace.add(StagePlan, len(r.ans.Attempts)+1, start, calls, "error: "+err.Error())
		return fmt.Errorf("plan: %w", err)
	}
	r.curPlan = pl
	r.trace.add(StagePlan, len(r.ans.Attempts)+1, start, pl.Calls, "ok")
	return nil
}

// generate makes the next attempt's first candidate (variant 0). On an
// *OutputError the attempt is returned with the error.
func (r *run) generate(ctx context.Context, hints []string) (*Attempt, error) {
	return r.gen(ctx, r.trace, 0, hints)
}

// gen makes variant v of the next attempt's candidate, recording its step
// in t. On an *OutputError the attempt is returned with the error.
func (r *run) gen(ctx context.Context, t *Trace, v int, hints []string) (*Attempt, error) {
	a := &Attempt{N: len(r.ans.Attempts) + 1, Plan: r.curPlan}
	start := time.Now()
	c, err := r.p.cfg.Generator.Generate(ctx, GenerateRequest{
		Question: r.ans.Question, Retrieval: r.ans.Retrieval, Plan: r.curPlan, Attempts: r.ans.Attempts, Hints: hints, Variant: v,
	})
	var calls []ModelCall
	if c != nil {
		calls = c.Calls
	} else if err == nil {
		err = ErrNilResult
	}
	if err != nil {
		t.add(StageSQL, a.N, start, calls, "error: "+err.Error())
		var outErr *OutputError
		if errors.As(err, &outErr) {
			return a, err
		}
		return nil, fmt.Errorf("generate: %w", err)
	}
	a.Candidate = c
	outcome := "ok"
	if !c.Answerable {
		outcome = "declined"
	}
	t.add(StageSQL, a.N, start, calls, outcome)
	return a, nil
}

// reuse makes an attempt from the verified example the retrieved context
// matched, without a model call; it returns nil when there is no match or
// reuse is disabled (Config.DisableExampleReuse).
func (r *run) reuse() *Attempt {
	m := r.ans.Retrieval.Match
	if m == nil || r.p.cfg.DisableExampleReuse {
		return nil
	}
	a := &Attempt{N: 1, Candidate: &Candidate{
		Answerable:  true,
		SQL:         m.SQL,
		Explanation: fmt.Sprintf("Reused verified example %s (%q, similarity %.2f).", m.ID, m.Question, m.Similarity),
	}}
	r.ans.ReusedExample = m.ID
	r.trace.add(StageSQL, a.N, time.Now(), nil, "reused example "+m.ID)
	r.settle(a)
	return a
}

// execute runs the attempt's SQL. When the executor fails the run ends:
// the attempt, with its SQL and the error, is added to the answer.
func (r *run) execute(ctx context.Context, a *Attempt) error {
	err := r.exec(ctx, r.trace, a)
	if err != nil {
		r.ans.Attempts = append(r.ans.Attempts, *a)
	}
	return err
}

// exec runs the attempt's SQL, recording the step in t: the result goes
// to a.Result; an executor that cannot work sets a.Error, also returned.
func (r *run) exec(ctx context.Context, t *Trace, a *Attempt) error {
	start := time.Now()
	res, err := r.p.execute(ctx, a.Candidate.SQL, r.maxRows)
	if err != nil {
		t.add(StageExecution, a.N, start, nil, "error: "+err.Error())
		a.Error = fmt.Errorf("execute: %w", err)
		return a.Error
	}
	a.Result = res
	outcome := fmt.Sprintf("ok: %d rows", res.RowCount)
	if res.Truncated {
		outcome += " (truncated)"
	}
	if res.Error != nil {
		outcome = "error: " + res.Error.Error()
	}
	t.add(StageExecution, a.N, start, nil, outcome)
	return nil
}

// check runs the checker before execution, recording the step in t. A
// failure becomes the attempt's result error, as an execution error would.
func (r *run) check(t *Trace, a *Attempt) (failed bool) {
	if r.p.cfg.Checker == nil {
		return false
	}
	start := time.Now()
	if e := r.p.cfg.Checker.Failure(a.Candidate.SQL); e != nil {
		a.Result = &Result{Error: e}
		t.add(StageCheck, a.N, start, nil, "failed: "+e.Error())
		return true
	}
	t.add(StageCheck, a.N, start, nil, "ok")
	return false
}

// warn collects the checker's warnings on an executed attempt.
func (r *run) warn(ctx context.Context, a *Attempt) {
	if r.p.cfg.Checker != nil {
		a.Warnings = r.p.cfg.Checker.Warn(ctx, a.Candidate.SQL, a.Result)
	}
}

func (r *run) judge(ctx context.Context, a *Attempt) (*Verdict, error) {
	start := time.Now()
	v, err := r.p.cfg.Judge.Judge(ctx, JudgeRequest{
		Question: r.ans.Question, Retrieval: r.ans.Retrieval, Plan: r.curPlan, Current: *a, Attempts: r.ans.Attempts,
		Warnings: a.Warnings,
	})
	if err == nil && v == nil {
		err = ErrNilResult
	}
	if err != nil {
		var calls []ModelCall
		if v != nil {
			calls = v.Calls
		}
		r.trace.add(StageJudge, a.N, start, calls, "error: "+err.Error())
		return nil, fmt.Errorf("judge: %w", err)
	}
	outcome := "ok"
	if !v.OK {
		outcome = fmt.Sprintf("rejected (%s): %s", v.Stage, v.Reason)
	}
	r.trace.add(StageJudge, a.N, start, v.Calls, outcome)
	return v, nil
}

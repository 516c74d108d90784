// Package judge is the default text2sql.Judge: a language model reviews a
// whole attempt — the question, what retrieval found and why, the plan,
// the SQL, a sample of the result cut to a token budget, the warnings of
// the deterministic checks and the earlier attempts with their reviews —
// and returns a verdict: the answer is right, or the stage at fault
// (retrieval, plan or sql) with the reason and hints for the redo.
//
// The judge is told to escalate: when an earlier review blamed the same
// stage and the fix did not help, it blames the stage before it. An
// optional deterministic rule (Options.EscalateAfter) enforces this.
//
// The model answers a JSON object (VerdictSchema); a malformed answer is
// re-asked a bounded number of times. Sample, the result sampler, is
// exported for services and evaluation that show results to a model.
package judge

import (
	"context"
	"fmt"
	"strings"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/defaults"
	"github.com/text2sql-go/text2sql/internal/stagekit"
)

// Options configure a Judge. The zero value is usable: SQLite (or the
// context's dialect), a 2,000-token result sample, temperature 0, one
// re-ask, no deterministic escalation.
type Options struct {
	// Dialect is the target dialect. Empty means the request context's,
	// else SQLite.
	Dialect text2sql.Dialect
	// ResultBudget bounds the result sample shown, in tokens (see
	// Sample): 0 means DefaultResultBudget. Earlier attempts show no rows.
	ResultBudget int
	// MaxReasks bounds the extra calls made when an answer is malformed:
	// 0 means the default, 1; a negative value means none.
	MaxReasks int
	// Temperature is the sampling temperature, in [0, 2].
	Temperature float64
	// EscalateAfter, when positive, moves a verdict one stage upstream
	// (sql → plan → retrieval; sql → retrieval when no planner ran) when
	// the EscalateAfter reviews just before it blamed the same stage.
	// 0 leaves escalation to the model, which is told to do it.
	EscalateAfter int
}

// Judge reviews attempts with a language model. It implements
// text2sql.Judge and is safe for concurrent use.
type Judge struct {
	model text2sql.Model
	opts  Options
}

var _ text2sql.Judge = (*Judge)(nil)

// New returns a Judge calling model. model may be nil for a Judge that
// only renders prompts; Judge then fails.
//
// Errors wrap text2sql.ErrInvalidConfig: an unknown Dialect, a negative
// ResultBudget or EscalateAfter, a Temperature outside [0, 2].
func New(model text2sql.Model, opts Options) (*Judge, error) {
	if err := stagekit.CheckDialect("judge", opts.Dialect); err != nil {
		return nil, err
	}
	if opts.ResultBudget < 0 || opts.EscalateAfter < 0 {
		return nil, fmt.Errorf("%w: judge: negative ResultBudget or EscalateAfter", text2sql.ErrInvalidConfig)
	}
	if err := stagekit.CheckTemperature("judge", opts.Temperature); err != nil {
		return nil, err
	}
	defaults.Positive(&opts.ResultBudget, DefaultResultBudget)
	opts.MaxReasks = stagekit.Reasks(opts.MaxReasks)
	return &Judge{model: model, opts: opts}, nil
}

// Prompt returns the system instruction and the user message Judge would
// send for req, without calling a model. Errors: text2sql.ErrEmptyQuestion
// when the question (req.Question, else req.Retrieval.Question) is blank.
func (j *Judge) Prompt(req text2sql.JudgeRequest) (system, user string, err error) {
	q := stagekit.Question(req.Question, req.Retrieval)
	if q == "" {
		return "", "", text2sql.ErrEmptyQuestion
	}
	planned := req.Plan != nil || req.Current.Plan != nil
	return systemInstruction(stagekit.ResolveDialect(j.opts.Dialect, req.Retrieval, ""), planned), j.userMessage(q, req), nil
}

// Judge asks the model to review req.Current and returns its verdict,
// with Verdict.Calls recording every model call (with its prompt).
//
// A rejection names a stage: StageRetrieval (with Terms and Tables to
// retrieve), StagePlan or StageSQL, a reason and hints. An accepted
// verdict has no stage, terms or tables. With Options.EscalateAfter, a
// verdict repeating the stage of the reviews just before it is moved
// upstream and its reason says so.
//
// When the answer is malformed (see ParseVerdict), the model is told what
// is wrong and asked again, at most Options.MaxReasks times.
//
// Errors:
//   - an *text2sql.OutputError wrapping text2sql.ErrInvalidOutput with
//     the last raw answer when no answer was usable; the returned Verdict
//     is then non-nil, not OK, and carries the Calls made;
//   - a model failure, wrapped (errors.As finds a *text2sql.ModelError
//     when the model returned one), with the calls made before it;
//   - text2sql.ErrEmptyQuestion; text2sql.ErrInvalidConfig without a
//     model; ctx's error when it ends between calls.
func (j *Judge) Judge(ctx context.Context, req text2sql.JudgeRequest) (*text2sql.Verdict, error) {
	system, user, err := j.Prompt(req)
	if err != nil {
		return nil, err
	}
	if j.model == nil {
		return nil, fmt.Errorf("%w: judge: no model", text2sql.ErrInvalidConfig)
	}
	var v *text2sql.Verdict
	calls, err := stagekit.Call{
		Model: j.model, System: system, User: user, Schema: VerdictSchema(),
		Temperature: j.opts.Temperature, MaxReasks: j.opts.MaxReasks,
		Parse: func(text string) error {
			got, err := ParseVerdict(text)
			if err != nil {
				return &stagekit.Retry{Note: reaskNote(err), Err: err}
			}
			v = got
			return nil
		},
	}.Run(ctx)
	if err != nil {
		return &text2sql.Verdict{Calls: calls}, stagekit.StageError(ctx, "judge", err)
	}
	j.escalate(v, req)
	v.Calls = calls
	return v, nil
}

// escalate applies Options.EscalateAfter.
func (j *Judge) escalate(v *text2sql.Verdict, req text2sql.JudgeRequest) {
	n := j.opts.EscalateAfter
	if n <= 0 || v.OK || v.Stage == text2sql.StageRetrieval {
		return
	}
	same := 0
	for i := len(req.Attempts) - 1; i >= 0; i-- {
		pv := req.Attempts[i].Verdict
		if pv == nil {
			continue // an execution error, not a review
		}
		if pv.OK || pv.Stage != v.Stage {
			break
		}
		same++
	}
	if same < n {
		return
	}
	from := v.Stage
	switch {
	case v.Stage == text2sql.StageSQL && (req.Plan != nil || req.Current.Plan != nil):
		v.Stage = text2sql.StagePlan
	default:
		v.Stage = text2sql.StageRetrieval
	}
	v.Reason = strings.TrimSpace(v.Reason + fmt.Sprintf(" (escalated from %s to %s: the %d reviews before this one blamed %s and their fixes did not help)", from, v.Stage, same, from))
}

// reaskNote tells the model what was wrong with its verdict.
func reaskNote(err error) string {
	d := strings.TrimPrefix(strings.TrimPrefix(err.Error(), text2sql.ErrInvalidOutput.Error()), ": ")
	return "Your last answer could not be read as a verdict (" + d + ").\n" +
		`Reply again with exactly one JSON object and nothing else — no prose, no code fences:
{"ok": true or false, "stage": "retrieval" | "plan" | "sql" | "", "reason": "…", "hints": ["…"], "terms": ["…"], "tables": ["…"]}`
}

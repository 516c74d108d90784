// Package selector is the default text2sql.Selector: a language model
// compares the tied candidates of a self-consistency vote two at a time
// and the candidate that wins the most comparisons is chosen — the
// pairwise selection of CHASE-SQL (Pourreza et al. 2024, "CHASE-SQL:
// Multi-Path Reasoning and Preference Optimized Candidate Selection in
// Text-to-SQL"), with a prompted model instead of a fine-tuned one.
//
// Each comparison shows the question, the retrieved context, the plan
// when there is one, and the two candidates, A and B, each with its SQL
// and a sample of its result (judge.Sample); the model answers a JSON
// object {"winner": "A" or "B", "reason": "…"} (ChoiceSchema). Pairs are
// compared in candidate order, (1,2), (1,3), …, (2,3), …, as many as
// SelectRequest.MaxCalls allows; a malformed answer is re-asked a
// bounded number of times.
package selector

import (
	"context"
	"errors"
	"fmt"
	"strings"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/defaults"
	"github.com/text2sql-go/text2sql/internal/stagekit"
	"github.com/text2sql-go/text2sql/judge"
)

// Options configure a Selector. The zero value is usable: SQLite (or the
// context's dialect), a 1,000-token sample per result, temperature 0,
// one re-ask.
type Options struct {
	// Dialect is the target dialect. Empty means the request context's,
	// else SQLite.
	Dialect text2sql.Dialect
	// ResultBudget bounds each candidate's result sample, in tokens (see
	// judge.Sample): 0 means DefaultResultBudget.
	ResultBudget int
	// MaxReasks bounds the extra calls made when an answer is malformed:
	// 0 means the default, 1; a negative value means none.
	MaxReasks int
	// Temperature is the sampling temperature, in [0, 2].
	Temperature float64
}

// DefaultResultBudget is the result sample of one candidate, in tokens,
// when Options.ResultBudget is 0: half the judge's, two being shown.
const DefaultResultBudget = judge.DefaultResultBudget / 2

// Selector chooses among candidates with a language model. It implements
// text2sql.Selector and is safe for concurrent use.
type Selector struct {
	model text2sql.Model
	opts  Options
}

var _ text2sql.Selector = (*Selector)(nil)

// New returns a Selector calling model. model may be nil for a Selector
// that only renders prompts (Prompt); Select then fails.
//
// Errors wrap text2sql.ErrInvalidConfig: an unknown Dialect, a negative
// ResultBudget, a Temperature outside [0, 2].
func New(model text2sql.Model, opts Options) (*Selector, error) {
	if err := stagekit.CheckDialect("selector", opts.Dialect); err != nil {
		return nil, err
	}
	if opts.ResultBudget < 0 {
		return nil, fmt.Errorf("%w: selector: negative ResultBudget %d", text2sql.ErrInvalidConfig, opts.ResultBudget)
	}
	if err := stagekit.CheckTemperature("selector", opts.Temperature); err != nil {
		return nil, err
	}
	defaults.Positive(&opts.ResultBudget, DefaultResultBudget)
	opts.MaxReasks = stagekit.Reasks(opts.MaxReasks)
	return &Selector{model: model, opts: opts}, nil
}

// Select compares the candidates of req two at a time and returns the
// index of the one that won the most comparisons, the earliest on equal
// wins, with a reason ("won 2 of 2 comparisons: …", the model's reason
// of its last win) and every model call made (with its prompt).
//
// Pairs are compared in order — (0,1), (0,2), …, (1,2), … — while the
// calls made stay within req.MaxCalls (a comparison's re-asks are cut to
// fit); the reason says how many pairs were left out. A comparison whose
// answer stays malformed counts for neither candidate.
//
// Errors:
//   - text2sql.ErrInvalidConfig: fewer than two candidates, a candidate
//     without SQL, req.MaxCalls below 1, no model;
//   - text2sql.ErrEmptyQuestion;
//   - an *text2sql.OutputError (wrapping text2sql.ErrInvalidOutput) when
//     no comparison gave a usable answer; the Choice is then non-nil and
//     carries the calls;
//   - a model failure, wrapped, or ctx's error, with the calls made.
func (s *Selector) Select(ctx context.Context, req text2sql.SelectRequest) (*text2sql.Choice, error) {
	if len(req.Candidates) < 2 {
		return nil, fmt.Errorf("%w: selector: %d candidates, want two or more", text2sql.ErrInvalidConfig, len(req.Candidates))
	}
	for i, c := range req.Candidates {
		if c.Candidate == nil || strings.TrimSpace(c.Candidate.SQL) == "" {
			return nil, fmt.Errorf("%w: selector: candidate %d has no SQL", text2sql.ErrInvalidConfig, i)
		}
	}
	if req.MaxCalls < 1 {
		return nil, fmt.Errorf("%w: selector: MaxCalls %d, want 1 or more", text2sql.ErrInvalidConfig, req.MaxCalls)
	}
	if stagekit.Question(req.Question, req.Retrieval) == "" {
		return nil, text2sql.ErrEmptyQuestion
	}
	if s.model == nil {
		return nil, fmt.Errorf("%w: selector: no model", text2sql.ErrInvalidConfig)
	}
	n := len(req.Candidates)
	wins := make([]int, n)
	reasons := make([]string, n)
	out := &text2sql.Choice{}
	var lastErr error
	pairs, compared := n*(n-1)/2, 0
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			left := req.MaxCalls - len(out.Calls)
			if left < 1 {
				continue
			}
			system, user, err := s.Prompt(req, i, j)
			if err != nil {
				return out, err
			}
			var winner string
			var reason string
			calls, err := stagekit.Call{
				Model: s.model, System: system, User: user, Schema: ChoiceSchema(),
				Temperature: s.opts.Temperature, MaxReasks: min(s.opts.MaxReasks, left-1),
				Parse: func(text string) error {
					w, r, err := ParseChoice(text)
					if err != nil {
						return &stagekit.Retry{Note: reaskNote(err), Err: err}
					}
					winner, reason = w, r
					return nil
				},
			}.Run(ctx)
			out.Calls = append(out.Calls, calls...)
			var oe *text2sql.OutputError
			switch {
			case errors.As(err, &oe):
				lastErr = err
				continue
			case err != nil:
				return out, stagekit.StageError(ctx, "selector", err)
			}
			compared++
			k := i
			if winner == "B" {
				k = j
			}
			wins[k]++
			reasons[k] = reason
		}
	}
	if compared == 0 {
		return out, lastErr
	}
	for k := range wins {
		if wins[k] > wins[out.Index] {
			out.Index = k
		}
	}
	out.Reason = fmt.Sprintf("won %d of %d comparisons", wins[out.Index], compared)
	if compared < pairs {
		out.Reason += fmt.Sprintf(" (%d of %d pairs not compared)", pairs-compared, pairs)
	}
	if r := strings.TrimSpace(reasons[out.Index]); r != "" {
		out.Reason += ": " + r
	}
	return out, nil
}

// reaskNote tells the model what was wrong with its answer.
func reaskNote(err error) string {
	d := strings.TrimPrefix(strings.TrimPrefix(err.Error(), text2sql.ErrInvalidOutput.Error()), ": ")
	return "Your last answer could not be read as a choice (" + d + ").\n" +
		`Reply again with exactly one JSON object and nothing else — no prose, no code fences:
{"winner": "A" or "B", "reason": "…"}`
}

package eval

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/retry"
	"github.com/text2sql-go/text2sql/schema"
)

// GeneratorFunc builds the generator that answers question q, whose
// database has schema sch. It may return one shared generator.
type GeneratorFunc func(ctx context.Context, q *Question, sch *schema.Database) (text2sql.Generator, error)

// OracleGenerator returns a GeneratorFunc that answers each question with
// an Oracle for its gold SQL, rendering prompts with prompter (nil: no
// prompt is built).
func OracleGenerator(prompter Prompter) GeneratorFunc {
	return func(_ context.Context, q *Question, sch *schema.Database) (text2sql.Generator, error) {
		if q.GoldSQL == "" {
			return nil, fmt.Errorf("%w: question %s has expected rows, no gold SQL for the oracle", ErrDataset, q.ID)
		}
		return &Oracle{Gold: q.GoldSQL, Schema: sch, Prompter: prompter}, nil
	}
}

// DefaultQuestionTimeout bounds the pipeline run of one question when
// PipelineOptions.QuestionTimeout is 0: room for a full repair loop with a
// planner and a judge on a slow model (about ten calls of 30 s), while one
// stuck question still cannot hold up a run for longer than this.
const DefaultQuestionTimeout = 5 * time.Minute

// errQuestionTimeout is the cause of a question's context ending at
// PipelineOptions.QuestionTimeout.
var errQuestionTimeout = errors.New("eval: question time limit")

// PipelineOptions configure RunPipeline.
type PipelineOptions struct {
	Options
	// Generator builds each question's generator. Required.
	Generator GeneratorFunc
	// Retriever builds each database's retriever (once per database);
	// nil means DefaultRetriever.
	Retriever RetrieverFunc
	// Name names the system in the report (Report.Predictions), e.g.
	// "oracle" or the model.
	Name string
	// Configure, when set, adjusts the pipeline configuration of question
	// q, whose database has schema sch, before text2sql.New: a Checker (for
	// instance one built from sch probing through cfg.Executor), a
	// Planner, a Judge, MaxRepairs… Retriever, Generator, Executor, MaxRows
	// and Timeout are set already.
	Configure func(cfg *text2sql.Config, q *Question, sch *schema.Database)
	// OracleCheck adds Report.Oracle: EX against strict table recall,
	// question by question. Use it with OracleGenerator.
	OracleCheck bool
	// QuestionTimeout bounds the pipeline run of one question (retrieval,
	// every model call, repairs and executions; not its gold query): when
	// it passes, the question is recorded as OutcomeNoSQL with Kind
	// "timeout" and the run goes on. 0 means DefaultQuestionTimeout; a
	// negative value means no limit.
	QuestionTimeout time.Duration
}

func (o PipelineOptions) questionTimeout() time.Duration {
	return retry.Setting(o.QuestionTimeout, DefaultQuestionTimeout)
}

// ask runs p on question within the question time limit d (none when 0).
func ask(ctx context.Context, p *text2sql.Pipeline, question string, d time.Duration) (*text2sql.Answer, error) {
	if d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, d, errQuestionTimeout)
		defer cancel()
	}
	ans, err := p.Ask(ctx, question)
	if err != nil && context.Cause(ctx) == errQuestionTimeout {
		err = fmt.Errorf("%w: no answer within %v (QuestionTimeout): %w", errQuestionTimeout, d, err)
	}
	return ans, err
}

// RunPipeline answers every question of ds with a text2sql.Pipeline —
// the database's retriever, the question's generator, the database's
// guarded executor — and scores the SQL it answers with as Score scores a
// predictions file. The question text given to the pipeline is
// Question.Prompt (BIRD evidence included). The report adds, from the
// answers' traces, retrieval recall (from the context each answer was
// generated from), latency per stage and token usage per stage.
//
// A question the pipeline declines or fails has OutcomeNoSQL with the
// reason as Kind ("declined", "repairs_exhausted", "timeout" — the
// question's time limit or a model call's —, "model", "invalid_output",
// "no_sql", "schema_too_large", "error"); when it failed
// after producing SQL, that SQL is scored (and fails). Errors: a nil
// Generator (text2sql.ErrInvalidConfig), a retriever that cannot be built,
// an executor that cannot work, ctx's error; ErrNotComparable (with the
// report) when no question could be scored; an error wrapping
// text2sql.ErrModel (with the report) when every question failed on a
// model provider error, so an outage is not mistaken for an EX of 0.
func RunPipeline(ctx context.Context, ds *Dataset, opts PipelineOptions) (*Report, error) {
	if opts.Generator == nil {
		return nil, fmt.Errorf("%w: eval: RunPipeline needs a Generator", text2sql.ErrInvalidConfig)
	}
	s, err := newScorer(ds, opts.Options)
	if err != nil {
		return nil, err
	}
	defer s.dbs.Close()
	mk := opts.Retriever
	if mk == nil {
		mk = DefaultRetriever
	}
	run := &pipelineRun{s: s, rs: &retrievers{dbs: s.dbs, make: mk, m: map[string]*retrieverEntry{}}, opts: opts}
	start := time.Now()
	recs := make([]Record, len(ds.Questions))
	err = forEach(ctx, len(ds.Questions), opts.parallel(), opts.Progress, func(ctx context.Context, i int) error {
		var err error
		recs[i], err = run.question(ctx, &ds.Questions[i])
		return err
	})
	if err != nil {
		return nil, err
	}
	rep := buildReport(ds, s.cmp.Mode, s.rewrite, recs)
	rep.Predictions = opts.Name
	rep.WallMS = ms(time.Since(start))
	addPipelineStats(rep, ds)
	if opts.OracleCheck {
		rep.Oracle = oracleCheck(recs)
	}
	if !rep.Comparable {
		return rep, fmt.Errorf("%w: %s", ErrNotComparable, rep.Note)
	}
	if f := rep.Failures; len(f) == 1 && f[0].Kind == "model" && f[0].Count == rep.Total {
		first := ""
		for _, rec := range recs {
			if rec.Kind == "model" {
				first = rec.Error
				break
			}
		}
		rep.Note = "every question failed with a model provider error: " + first
		return rep, fmt.Errorf("eval: every question failed with a model provider error (%w): %s", text2sql.ErrModel, first)
	}
	return rep, nil
}

// pipelineRun is one RunPipeline: its scorer, the retrievers built so
// far (one per database) and its options.
type pipelineRun struct {
	s    *scorer
	rs   *retrievers
	opts PipelineOptions
}

// question answers q with a pipeline and scores the SQL it answers with.
func (run *pipelineRun) question(ctx context.Context, q *Question) (Record, error) {
	rec := newRecord(q)
	why, err := run.s.notComparable(ctx, q)
	if err != nil {
		return rec, err
	}
	if why != "" {
		rec.Outcome, rec.Error = OutcomeExcluded, why
		return rec, nil
	}
	p, sch, err := run.pipeline(ctx, q)
	if err != nil {
		return rec, err
	}
	ans, askErr := ask(ctx, p, q.Prompt(), run.opts.questionTimeout())
	if ctx.Err() != nil {
		return rec, ctx.Err()
	}
	if ans != nil {
		fillTrace(&rec, ans)
		if ans.Retrieval != nil && q.GoldSQL != "" {
			rr := RecallOf(sch, q.GoldSQL, ans.Retrieval)
			rec.Recall = &rr
		}
	}
	predSQL := answeredSQL(ans)
	if predSQL == "" {
		rec.Outcome, rec.Kind = OutcomeNoSQL, noSQLKind(ans, askErr)
		if askErr != nil {
			rec.Error = askErr.Error()
		} else if ans != nil {
			rec.Error = ans.Explanation
		}
		return rec, nil
	}
	g, err := run.s.runGold(ctx, q)
	if err != nil {
		return rec, err
	}
	return rec, run.s.score(ctx, q, g, predSQL, &rec)
}

// pipeline returns the pipeline for q, from its database's retriever
// and guarded executor and the generator for q, and the database's
// schema.
func (run *pipelineRun) pipeline(ctx context.Context, q *Question) (*text2sql.Pipeline, *schema.Database, error) {
	r, sch, err := run.rs.get(ctx, q.DB)
	if err != nil {
		return nil, nil, err
	}
	gen, err := run.opts.Generator(ctx, q, sch)
	if err != nil {
		return nil, nil, err
	}
	ex, err := run.s.dbs.Executor(ctx, q.DB)
	if err != nil {
		return nil, nil, err
	}
	cfg := text2sql.Config{Retriever: r, Generator: gen, Executor: ex, MaxRows: run.s.opts.maxRows(), Timeout: run.s.opts.timeout()}
	if run.opts.Configure != nil {
		run.opts.Configure(&cfg, q, sch)
	}
	p, err := text2sql.New(cfg)
	return p, sch, err
}

// answeredSQL returns the SQL ans answers with; when it has none, that
// of its last answerable candidate (a failed answer's SQL is scored and
// fails); "" without either.
func answeredSQL(ans *text2sql.Answer) string {
	if ans == nil {
		return ""
	}
	if ans.SQL != "" {
		return ans.SQL
	}
	for k := len(ans.Attempts) - 1; k >= 0; k-- {
		if c := ans.Attempts[k].Candidate; c != nil && c.Answerable && c.SQL != "" {
			return c.SQL
		}
	}
	return ""
}

func noSQLKind(ans *text2sql.Answer, err error) string {
	switch {
	case ans != nil && ans.Status == text2sql.StatusDeclined:
		return "declined"
	case errors.Is(err, text2sql.ErrRepairsExhausted):
		return "repairs_exhausted"
	case errors.Is(err, errQuestionTimeout), errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, text2sql.ErrModel):
		return "model"
	case errors.Is(err, text2sql.ErrInvalidOutput):
		return "invalid_output"
	case errors.Is(err, text2sql.ErrNoSQL):
		return "no_sql"
	case errors.Is(err, text2sql.ErrSchemaTooLarge):
		return "schema_too_large"
	}
	return "error"
}

// fillTrace copies an answer's trace onto rec: stages summed per stage.
func fillTrace(rec *Record, ans *text2sql.Answer) {
	rec.Status, rec.Attempts = ans.Status, len(ans.Attempts)
	if s := ans.Selection; s != nil {
		rec.Candidates, rec.Selection = len(s.Candidates), s.Method
	}
	rec.ModelCalls = ans.Trace.ModelCalls
	rec.PipelineMS = ms(ans.Trace.Duration)
	rec.InputTokens, rec.OutputTokens = ans.Trace.Usage.InputTokens, ans.Trace.Usage.OutputTokens
	idx := map[text2sql.Stage]int{}
	for _, st := range ans.Trace.Steps {
		i, ok := idx[st.Stage]
		if !ok {
			i = len(rec.Stages)
			idx[st.Stage] = i
			rec.Stages = append(rec.Stages, StageRecord{Stage: st.Stage})
		}
		rec.Stages[i].MS += ms(st.Duration)
		rec.Stages[i].InputTokens += st.Usage.InputTokens
		rec.Stages[i].OutputTokens += st.Usage.OutputTokens
	}
}

// addPipelineStats adds per-stage latency and tokens and the recall
// report to rep from its records.
func addPipelineStats(rep *Report, ds *Dataset) {
	lat := map[string][]float64{}
	in, out := map[string][]int{}, map[string][]int{}
	var recall []RecallRecord
	for _, rec := range rep.Records {
		if rec.Outcome == OutcomeExcluded {
			continue
		}
		if rec.PipelineMS > 0 {
			lat["pipeline"] = append(lat["pipeline"], rec.PipelineMS)
		}
		for _, st := range rec.Stages {
			k := string(st.Stage)
			lat[k] = append(lat[k], st.MS)
			if st.InputTokens+st.OutputTokens > 0 {
				in[k] = append(in[k], st.InputTokens)
				out[k] = append(out[k], st.OutputTokens)
			}
		}
		if rec.Recall != nil {
			r := *rec.Recall
			r.ID, r.DB, r.Difficulty = rec.ID, rec.DB, rec.Difficulty
			recall = append(recall, r)
		}
	}
	for k, xs := range lat {
		rep.Latency[k] = percentiles(xs)
	}
	if len(in) > 0 {
		rep.Tokens = map[string]TokenStats{}
		for k := range in {
			is, os := append([]int(nil), in[k]...), append([]int(nil), out[k]...)
			ts := TokenStats{N: len(is)}
			for i := range is {
				ts.Input += is[i]
				ts.Output += os[i]
			}
			sort.Ints(is)
			sort.Ints(os)
			ts.InputP50, ts.InputP95 = intRank(is, 0.5), intRank(is, 0.95)
			ts.OutputP50, ts.OutputP95 = intRank(os, 0.5), intRank(os, 0.95)
			rep.Tokens[k] = ts
		}
	}
	if len(recall) > 0 {
		rep.Recall = RecallReportOf(ds, recall)
	}
}

// oracleCheck compares, question by question, an oracle run's outcome
// with the strict table recall of its retrieval.
func oracleCheck(recs []Record) *OracleCheck {
	c := &OracleCheck{}
	n, correct, strict := 0, 0, 0
	for _, rec := range recs {
		if rec.Outcome == OutcomeExcluded {
			continue
		}
		n++
		ok := rec.Outcome == OutcomeCorrect
		recalled := rec.Recall != nil && rec.Recall.Strict
		if ok {
			correct++
		}
		if recalled {
			strict++
		}
		switch {
		case recalled && !ok:
			why := string(rec.Outcome)
			if rec.Kind != "" {
				why += " " + rec.Kind
			}
			if rec.Error != "" {
				why += ": " + rec.Error
			} else if rec.Diff != "" {
				why += ": " + rec.Diff
			}
			c.RecalledNotCorrect = append(c.RecalledNotCorrect, rec.ID+" ("+why+")")
		case ok && !recalled:
			c.NotRecalledCorrect = append(c.NotRecalledCorrect, rec.ID)
		}
	}
	c.EX, c.StrictTableRecall = frac(correct, n), frac(strict, n)
	return c
}

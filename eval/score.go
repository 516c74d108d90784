package eval

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/accuracy"
)

// Options configure Score and RunPipeline. Zero values mean the defaults.
type Options struct {
	// Mode is the comparison mode; "" means the dataset's (Dataset.Mode).
	Mode accuracy.Mode
	// Digits is the numeric tolerance of Comparison.Digits; 0 (exact) is
	// what both official scorers do.
	Digits int
	// NoRewrite turns off SpiderRewrite on a Spider dataset.
	NoRewrite bool
	// KeepDistinct keeps DISTINCT in SpiderRewrite, like the Spider
	// evaluator's --keep_distinct.
	KeepDistinct bool
	// TopLevelOrder decides whether rows are compared in sequence by the
	// gold's top-level ORDER BY (TopLevelOrderBy) instead of the Spider
	// evaluator's substring rule (SpiderOrderMatters), which also orders
	// the comparison when "order by" appears only in a subquery. It only
	// matters for a Spider dataset with its rewrites on; other datasets
	// always use TopLevelOrderBy.
	TopLevelOrder bool
	// NoOrderCheck skips OrderCheck on gold queries (no nondeterminism
	// detection, no ordering warnings, one query less per ordered gold).
	NoOrderCheck bool
	// Parallel is the number of questions worked on at once; 0 means
	// 2 × GOMAXPROCS.
	Parallel int
	// Timeout bounds each query; 0 means DefaultTimeout.
	Timeout time.Duration
	// MaxRows caps the rows of each query; 0 means DefaultMaxRows.
	MaxRows int
	// MaxOpenConns is the connection pool per database; 0 means
	// DefaultMaxOpenConns.
	MaxOpenConns int
	// Progress, when set, is called after each question with the number
	// done and the total, from one goroutine at a time.
	Progress func(done, total int)
}

func (o *Options) parallel() int {
	if o.Parallel > 0 {
		return o.Parallel
	}
	return 2 * runtime.GOMAXPROCS(0)
}

func (o *Options) timeout() time.Duration {
	if o.Timeout > 0 {
		return o.Timeout
	}
	return DefaultTimeout
}

func (o *Options) maxRows() int {
	if o.MaxRows > 0 {
		return o.MaxRows
	}
	return DefaultMaxRows
}

// Outcome is how one question scored.
type Outcome string

// The outcomes. Only OutcomeCorrect counts towards EX; OutcomeExcluded
// questions are not in the total.
const (
	OutcomeCorrect   Outcome = "correct"    // the results match
	OutcomeWrong     Outcome = "wrong"      // the prediction ran, the results differ
	OutcomeError     Outcome = "error"      // the prediction was refused or failed
	OutcomeGoldError Outcome = "gold_error" // the gold query failed: scored 0
	OutcomeNoSQL     Outcome = "no_sql"     // the system gave no SQL (declined or failed)
	OutcomeExcluded  Outcome = "excluded"   // not scored (see Record.Error)
)

// Record is one question's result: the unit of the JSONL per-question
// output used to diff two runs. Durations are in milliseconds.
type Record struct {
	ID         string  `json:"id"`                  // Question.ID
	SourceID   string  `json:"source_id,omitempty"` // Question.SourceID
	Index      int     `json:"index"`               // position in the question file
	DB         string  `json:"db"`                  // database ID
	Difficulty string  `json:"difficulty"`          // Question.Difficulty
	Question   string  `json:"question"`            // the question text
	GoldSQL    string  `json:"gold_sql,omitempty"`  // as in the dataset (before rewrites)
	PredSQL    string  `json:"pred_sql"`            // as predicted (before rewrites)
	Outcome    Outcome `json:"outcome"`             // how it scored
	// Kind classifies a failure: the text2sql.ErrorKind of a failed
	// prediction or gold query, "wrong_<reason>" for a wrong result (see
	// the Reason constants), a pipeline status for OutcomeNoSQL.
	Kind  string `json:"kind,omitempty"`
	Error string `json:"error,omitempty"` // the error message, or why the question was excluded
	// Diff summarises a wrong result (Diff.Summary).
	Diff    string `json:"diff,omitempty"`
	Ordered bool   `json:"ordered"` // rows were compared in sequence
	// Nondeterministic: the gold's LIMIT cuts through tied rows
	// (OrderCheck); Tie says where.
	Nondeterministic bool     `json:"nondeterministic,omitempty"`
	Tie              string   `json:"tie,omitempty"`      // accuracy.OrderReport.Detail
	Warnings         []string `json:"warnings,omitempty"` // accuracy.OrderCheck's warnings on the gold
	GoldRows         int      `json:"gold_rows"`          // rows of the gold result
	PredRows         int      `json:"pred_rows"`          // rows of the predicted result
	GoldMS           float64  `json:"gold_ms"`            // gold execution time
	PredMS           float64  `json:"pred_ms"`            // prediction execution time

	// Pipeline runs only.
	Status   text2sql.Status `json:"status,omitempty"`   // the answer's status
	Attempts int             `json:"attempts,omitempty"` // attempts made
	// Candidates and Selection are the number of candidates of the
	// reported attempt and how its SQL was chosen among them, with
	// text2sql.Config.Candidates; absent with one candidate.
	Candidates int                      `json:"candidates,omitempty"`
	Selection  text2sql.SelectionMethod `json:"selection,omitempty"`
	Recall     *RecallRecord            `json:"recall,omitempty"`      // recall of the retrieval the answer used
	Stages     []StageRecord            `json:"stages,omitempty"`      // time and tokens per stage
	ModelCalls int                      `json:"model_calls,omitempty"` // model calls made
	PipelineMS float64                  `json:"pipeline_ms,omitempty"` // wall time of the run
	// InputTokens and OutputTokens total the run's model calls.
	InputTokens  int `json:"input_tokens,omitempty"`
	OutputTokens int `json:"output_tokens,omitempty"` // see InputTokens
}

// StageRecord is one stage's time and tokens in a question's pipeline
// run, summed over its attempts.
type StageRecord struct {
	Stage        text2sql.Stage `json:"stage"`         // the stage
	MS           float64        `json:"ms"`            // its time, milliseconds
	InputTokens  int            `json:"input_tokens"`  // tokens sent to models
	OutputTokens int            `json:"output_tokens"` // tokens models returned
}

// gold is a gold query's outcome, shared by every prediction set.
type gold struct {
	sql     string // as executed
	res     *text2sql.Result
	err     *text2sql.SQLError
	ordered bool
	order   *accuracy.OrderReport
	ms      float64
}

// scorer holds what Score and RunPipeline share.
type scorer struct {
	ds      *Dataset
	dbs     *Databases
	cmp     accuracy.Comparison
	rewrite bool
	opts    Options
}

func newScorer(ds *Dataset, opts Options) (*scorer, error) {
	mode := opts.Mode
	if mode == "" {
		mode = ds.Mode
	}
	if mode == "" {
		mode = accuracy.ModeSpider
	}
	if _, err := accuracy.ParseMode(string(mode)); err != nil {
		return nil, err
	}
	if opts.Digits < 0 {
		return nil, fmt.Errorf("%w: eval: negative Digits %d", text2sql.ErrInvalidConfig, opts.Digits)
	}
	s := &scorer{ds: ds, opts: opts, rewrite: ds.Rewrite && !opts.NoRewrite,
		cmp: accuracy.Comparison{Mode: mode, Digits: opts.Digits, ValidUTF8: mode == accuracy.ModeSpider}}
	s.dbs = OpenDatabases(ds, DatabaseOptions{MaxRows: opts.maxRows(), Timeout: opts.timeout(), MaxOpenConns: opts.MaxOpenConns})
	return s, nil
}

// notComparable returns why question q cannot be scored (excluded, its
// database cannot be opened or has no rows), or "".
func (s *scorer) notComparable(ctx context.Context, q *Question) (string, error) {
	if q.Excluded != "" {
		return q.Excluded, nil
	}
	empty, err := s.dbs.Empty(ctx, q.DB)
	if err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		// A file that cannot be opened as a SQLite database: its
		// questions cannot be scored.
		return "cannot open database " + q.DB + ": " + err.Error(), nil
	}
	if empty {
		return "database " + q.DB + " has tables but no rows (schema only): results cannot be compared", nil
	}
	return "", nil
}

// runGold executes q's gold query (or takes its expected rows) and checks
// its ordering.
func (s *scorer) runGold(ctx context.Context, q *Question) (*gold, error) {
	if q.Expected != nil {
		return &gold{res: q.Expected.Result(), ordered: q.Expected.Ordered}, nil
	}
	ex, err := s.dbs.Executor(ctx, q.DB)
	if err != nil {
		return nil, err
	}
	g := &gold{sql: q.GoldSQL}
	if s.rewrite {
		g.sql = accuracy.SpiderRewrite(q.GoldSQL, false, s.opts.KeepDistinct)
	}
	if s.rewrite && !s.opts.TopLevelOrder {
		g.ordered = accuracy.SpiderOrderMatters(g.sql)
	} else {
		g.ordered = accuracy.TopLevelOrderBy(g.sql)
	}
	res, err := ex.Execute(ctx, text2sql.ExecuteRequest{SQL: g.sql, MaxRows: s.opts.maxRows(), Timeout: s.opts.timeout()})
	if err != nil {
		return nil, err
	}
	g.ms = ms(res.Duration)
	switch {
	case res.Error != nil:
		g.err = res.Error
	case res.Truncated:
		g.err = &text2sql.SQLError{Kind: text2sql.KindTooLarge,
			Message: fmt.Sprintf("the gold result has more than %d rows (the row cap): it cannot be compared", s.opts.maxRows())}
	default:
		g.res = res
		if !s.opts.NoOrderCheck {
			if g.order, err = accuracy.OrderCheck(ctx, ex, g.sql, res); err != nil {
				return nil, err
			}
		}
	}
	return g, nil
}

// score executes predSQL for q and compares it with g into rec.
func (s *scorer) score(ctx context.Context, q *Question, g *gold, predSQL string, rec *Record) error {
	rec.PredSQL = predSQL
	rec.Ordered = g.ordered
	rec.GoldMS = g.ms
	if g.order != nil {
		rec.Nondeterministic, rec.Tie, rec.Warnings = g.order.Nondeterministic, g.order.Detail, g.order.Warnings
	}
	if g.err != nil {
		rec.Outcome, rec.Kind, rec.Error = OutcomeGoldError, string(g.err.Kind), "gold: "+g.err.Error()
		return nil
	}
	rec.GoldRows = len(g.res.Rows)
	ex, err := s.dbs.Executor(ctx, q.DB)
	if err != nil {
		return err
	}
	sql := predSQL
	if s.rewrite {
		sql = accuracy.SpiderRewrite(predSQL, true, s.opts.KeepDistinct)
	}
	res, err := ex.Execute(ctx, text2sql.ExecuteRequest{SQL: sql, MaxRows: s.opts.maxRows(), Timeout: s.opts.timeout()})
	if err != nil {
		return err
	}
	rec.PredMS = ms(res.Duration)
	if res.Error != nil {
		rec.Outcome, rec.Kind, rec.Error = OutcomeError, string(res.Error.Kind), res.Error.Error()
		return nil
	}
	rec.PredRows = len(res.Rows)
	c := s.cmp
	c.Ordered = g.ordered
	d := accuracy.Compare(g.res, res, c)
	if d.Match {
		rec.Outcome = OutcomeCorrect
		return nil
	}
	rec.Outcome, rec.Kind, rec.Diff = OutcomeWrong, "wrong_"+d.Reason, d.Summary()
	if res.Truncated {
		rec.Diff += fmt.Sprintf(" (prediction cut at the row cap of %d)", s.opts.maxRows())
	}
	return nil
}

func newRecord(q *Question) Record {
	return Record{ID: q.ID, SourceID: q.SourceID, Index: q.Index, DB: q.DB, Difficulty: q.Difficulty, Question: q.Question, GoldSQL: q.GoldSQL}
}

// Score executes each predictions set against ds and returns one Report
// per set, in order, with its per-question Records. Gold queries run once
// and are shared by the sets.
//
// Every set must pair one to one with the questions (Predictions.Pair);
// otherwise Score returns an error wrapping ErrPredictions before running
// anything. Questions are scored in parallel (Options.Parallel), each query
// through the guarded executor of its database with Options.Timeout and
// Options.MaxRows. A failing prediction scores 0 with its error kind; a
// failing gold scores 0 as OutcomeGoldError. When no question can be
// scored (every database missing or empty), the reports have a nil EX and
// Comparable false, and the error wraps ErrNotComparable. Other errors:
// an executor that cannot work, or ctx's error.
func Score(ctx context.Context, ds *Dataset, preds []*Predictions, opts Options) ([]*Report, error) {
	if len(preds) == 0 {
		return nil, fmt.Errorf("%w: no predictions given", ErrPredictions)
	}
	paired := make([][]string, len(preds))
	for i, p := range preds {
		sqls, err := p.Pair(ds)
		if err != nil {
			return nil, err
		}
		paired[i] = sqls
	}
	s, err := newScorer(ds, opts)
	if err != nil {
		return nil, err
	}
	defer s.dbs.Close()
	start := time.Now()
	records := make([][]Record, len(preds))
	for i := range records {
		records[i] = make([]Record, len(ds.Questions))
	}
	err = forEach(ctx, len(ds.Questions), opts.parallel(), opts.Progress, func(ctx context.Context, i int) error {
		q := &ds.Questions[i]
		why, err := s.notComparable(ctx, q)
		if err != nil {
			return err
		}
		if why != "" {
			for k := range preds {
				rec := newRecord(q)
				rec.PredSQL, rec.Outcome, rec.Error = paired[k][i], OutcomeExcluded, why
				records[k][i] = rec
			}
			return nil
		}
		g, err := s.runGold(ctx, q)
		if err != nil {
			return err
		}
		for k := range preds {
			rec := newRecord(q)
			if err := s.score(ctx, q, g, paired[k][i], &rec); err != nil {
				return err
			}
			records[k][i] = rec
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	wall := time.Since(start)
	var reports []*Report
	for k, p := range preds {
		r := buildReport(ds, s.cmp.Mode, s.rewrite, records[k])
		r.Predictions = p.Name
		r.WallMS = ms(wall)
		reports = append(reports, r)
	}
	if !reports[0].Comparable {
		return reports, fmt.Errorf("%w: %s", ErrNotComparable, reports[0].Note)
	}
	return reports, nil
}

// forEach runs f(i) for i in [0, n) on up to par goroutines, stopping at
// the first error, and reports progress.
func forEach(ctx context.Context, n, par int, progress func(done, total int), f func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		next     atomic.Int64
		done     int
		mu       sync.Mutex
		firstErr error
		wg       sync.WaitGroup
	)
	if par > n {
		par = n
	}
	for w := 0; w < par; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				if err := f(ctx, i); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					cancel()
					return
				}
				mu.Lock()
				done++
				if progress != nil {
					progress(done, n)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	return ctx.Err()
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

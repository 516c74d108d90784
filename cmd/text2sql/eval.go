package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/accuracy"
	"github.com/text2sql-go/text2sql/eval"
	"github.com/text2sql-go/text2sql/generator"
	"github.com/text2sql-go/text2sql/schema"
	"github.com/text2sql-go/text2sql/wire"
)

// evalFlags are the flags of the eval command.
type evalFlags struct {
	spider, bird, dataset                        string
	questions, tables, dbDir                     string
	predictions                                  []string
	oracle, recall, schemasOnly, catalog, noKeys bool
	separate                                     bool // --separate: the catalog's namespaces are separate databases
	mode                                         string
	digits                                       int
	keepDistinct, noRewrite                      bool
	noOrderCheck, topLevelOrder                  bool
	parallel, limit                              int
	report, markdown, records                    string
	questionTimeout                              time.Duration
}

func evalCmd(o *options) *cobra.Command {
	f := &evalFlags{}
	c := &cobra.Command{
		Use:   "eval",
		Short: "Score a system on a question set: execution accuracy, retrieval recall",
		Long: `Score a text-to-SQL system on a Spider-format, BIRD-format or own (YAML/JSON)
question set, by execution accuracy (EX): gold and predicted SQL run through
the guarded executor and their results are compared in an explicit mode.

  text2sql eval --spider DIR --predictions FILE [--predictions FILE2]
  text2sql eval --bird DIR --db-dir DATABASES --predictions predict.json
  text2sql eval --dataset questions.yaml --predictions preds.txt
  text2sql eval --spider DIR --oracle          # pipeline with the gold-SQL oracle
  text2sql eval --spider DIR --provider gemini # pipeline with a real model
  text2sql eval --bird DIR --recall            # retrieval recall only

Predictions are one SQL per line in question order, or a JSON object keyed
by question id (BIRD: "0": "SQL\t----- bird -----\tdb_id"). A missing or
extra id is an error. Modes: spider (multiset, any column order, ordered
when the gold says "order by"; the official rewrites on Spider), bird (set,
column order fixed), strict (sequence, column order fixed).

Each query runs through the guard with a 30s time limit and a 100000-row cap
(--timeout and --max-rows change them), several questions at once. In a
pipeline run each model call has --model-timeout and each question
--question-timeout (5m); a question past its limit is a failure of kind
timeout, and the run goes on.

--json prints the report (an array of reports for several predictions
files) with at least ex (0-1, null when nothing could be scored), correct,
total and excluded. Exit status 1 when no question could be scored.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runEval(cmd, o, f) },
	}
	fl := c.Flags()
	fl.StringVar(&f.spider, "spider", "", "Spider-format folder: dev.json, tables.json, database/<db>/<db>.sqlite")
	fl.StringVar(&f.bird, "bird", "", "BIRD-format folder: mini_dev_sqlite.json or dev.json, dev_tables.json, dev_databases/")
	fl.StringVar(&f.dataset, "dataset", "", "own question set (YAML or JSON): question, gold sql or expected rows, database")
	fl.StringVar(&f.questions, "questions", "", "questions file, instead of the folder's default")
	fl.StringVar(&f.tables, "tables", "", "tables.json file, instead of the folder's default")
	fl.StringVar(&f.dbDir, "db-dir", "", "database folder (<db>/<db>.sqlite), instead of the folder's default")
	fl.StringArrayVar(&f.predictions, "predictions", nil, "predictions file to score (repeatable: gold queries run once)")
	fl.BoolVar(&f.oracle, "oracle", false, "run the pipeline with the ORACLE generator (returns the gold SQL when retrieval showed every table it reads)")
	fl.BoolVar(&f.recall, "recall", false, "measure the retrieval recall of the default retriever")
	fl.BoolVar(&f.catalog, "catalog", false, "for recall, retrieve over one schema holding every database of tables.json (db_id.table names): schema linking in a big catalog")
	fl.BoolVar(&f.separate, "separate", false, "with --catalog, retrieve as over a catalog of separate databases (--db NAME=… repeated): the routed database shown, others' tables only when named")
	fl.BoolVar(&f.noKeys, "no-foreign-keys", false, "for recall, remove the schemas' declared foreign keys first, as in schemas that declare none")
	fl.BoolVar(&f.schemasOnly, "schemas-only", false, "for recall, build empty databases from tables.json where database files are missing (automatic when none exists)")
	fl.StringVar(&f.mode, "mode", "", "comparison mode: spider, bird or strict (default: the dataset's)")
	fl.IntVar(&f.digits, "digits", 0, "numeric tolerance in significant digits (0: exact, as the official scorers)")
	fl.BoolVar(&f.keepDistinct, "keep-distinct", false, "Spider: keep DISTINCT (the official evaluator drops it by default)")
	fl.BoolVar(&f.noRewrite, "no-rewrite", false, "Spider: do not apply the official evaluator's rewrites")
	fl.BoolVar(&f.topLevelOrder, "top-level-order", false, "Spider: compare rows in sequence only when the gold's outermost query has ORDER BY (the official evaluator also does when a subquery has one)")
	fl.BoolVar(&f.noOrderCheck, "no-order-check", false, "skip the check of gold ORDER BY/LIMIT ties (nondeterministic gold)")
	fl.IntVar(&f.parallel, "parallel", 0, "questions at once (default 2 × CPUs)")
	fl.IntVar(&f.limit, "limit", 0, "pipeline and recall runs: only the first N questions")
	fl.StringVar(&f.report, "report", "", "write the JSON report to this file")
	fl.StringVar(&f.markdown, "markdown", "", "write the Markdown report to this file")
	fl.StringVar(&f.records, "records", "", "write per-question records (JSON lines) to this file, for diffing runs (with only --recall: the recall records)")
	fl.DurationVar(&f.questionTimeout, "question-timeout", eval.DefaultQuestionTimeout, "pipeline runs: time limit of one question, every model call and repair included; a question past it is a failure of kind timeout and the run goes on (0: the default)")
	return c
}

func runEval(cmd *cobra.Command, o *options, f *evalFlags) error {
	ctx := cmd.Context()
	provider := cmd.Flags().Changed("provider")
	if err := f.validate(o, provider); err != nil {
		return err
	}
	ds, err := loadDataset(f)
	if err != nil {
		return err
	}
	if f.limit > 0 && f.limit < len(ds.Questions) {
		ds.Questions = ds.Questions[:f.limit]
	}
	opts, err := evalOptions(cmd, o, f)
	if err != nil {
		return err
	}
	bar := newBar(cmd.ErrOrStderr(), o.json, len(ds.Questions))
	opts.Progress = bar.progress

	var reports []*eval.Report
	var runErr error
	switch {
	case len(f.predictions) > 0:
		var preds []*eval.Predictions
		for _, p := range f.predictions {
			pr, err := eval.ReadPredictions(p)
			if err != nil {
				return err
			}
			preds = append(preds, pr)
		}
		bar.describe("scoring")
		reports, runErr = eval.Score(ctx, ds, preds, opts)
	case f.oracle || provider:
		po, err := pipelineOptions(ctx, o, f, ds, opts)
		if err != nil {
			return err
		}
		bar.describe("answering")
		var rep *eval.Report
		rep, runErr = eval.RunPipeline(ctx, ds, po)
		if rep != nil {
			reports = []*eval.Report{rep}
		}
	}
	bar.finish()
	if runErr != nil && reports == nil {
		return runErr
	}

	var recall *eval.RecallReport
	if f.recall {
		if recall, err = runRecall(cmd, o, f, ds); err != nil {
			return err
		}
	}
	if err := writeEvalOutputs(cmd.OutOrStdout(), o.json, f, reports, recall); err != nil {
		return err
	}
	if runErr != nil {
		return &exitErr{code: exitError, err: runErr}
	}
	return nil
}

// usageError is a command-line usage error (exit status exitUsage).
func usageError(format string, args ...any) error {
	return &exitErr{code: exitUsage, err: fmt.Errorf(format, args...)}
}

// validate checks the eval flags and the global options: one question
// set, at most one of predictions, oracle and model provider (provider:
// --provider was given), something to do.
func (f *evalFlags) validate(o *options, provider bool) error {
	n := 0
	for _, s := range []string{f.spider, f.bird, f.dataset} {
		if s != "" {
			n++
		}
	}
	if n != 1 {
		return usageError("give exactly one of --spider DIR, --bird DIR or --dataset FILE")
	}
	modes := 0
	for _, b := range []bool{len(f.predictions) > 0, f.oracle, provider} {
		if b {
			modes++
		}
	}
	if modes > 1 {
		return usageError("give one of --predictions, --oracle or --provider")
	}
	if modes == 0 && !f.recall {
		return usageError("nothing to do: give --predictions FILE, --oracle, --provider NAME or --recall")
	}
	if err := o.validate(); err != nil {
		return err
	}
	if f.limit < 0 || f.parallel < 0 || f.digits < 0 || f.questionTimeout < 0 {
		return usageError("--limit, --parallel, --digits and --question-timeout must not be negative")
	}
	if f.limit > 0 && len(f.predictions) > 0 {
		return usageError("--limit applies to pipeline and recall runs, not to scoring a predictions file (which must cover every question)")
	}
	return nil
}

// evalOptions returns the scoring options the flags give.
func evalOptions(cmd *cobra.Command, o *options, f *evalFlags) (eval.Options, error) {
	opts := eval.Options{Digits: f.digits, KeepDistinct: f.keepDistinct, NoRewrite: f.noRewrite, NoOrderCheck: f.noOrderCheck, TopLevelOrder: f.topLevelOrder, Parallel: f.parallel}
	if f.mode != "" {
		var err error
		if opts.Mode, err = accuracy.ParseMode(f.mode); err != nil {
			return opts, usageError("%v", err)
		}
	}
	// The global --timeout and --max-rows defaults suit ask and run; eval
	// has its own unless they are given.
	if cmd.Flags().Changed("timeout") {
		opts.Timeout = o.timeout
	}
	if cmd.Flags().Changed("max-rows") {
		opts.MaxRows = o.maxRows
	}
	return opts, nil
}

// pipelineOptions returns the options of a pipeline run: with the oracle
// generator (--oracle), or with the configured model and the stages the
// flags turn on.
func pipelineOptions(ctx context.Context, o *options, f *evalFlags, ds *eval.Dataset, opts eval.Options) (eval.PipelineOptions, error) {
	po := eval.PipelineOptions{Options: opts, QuestionTimeout: f.questionTimeout}
	po.Retriever = o.evalRetrieverFor(ds, false)
	if f.oracle {
		prompter, err := generator.New(nil, generator.Options{Dialect: text2sql.DialectSQLite})
		if err != nil {
			return po, err
		}
		po.Generator, po.Name, po.OracleCheck = eval.OracleGenerator(prompter), "oracle", true
		return po, nil
	}
	model, err := o.newModel(ctx)
	if err != nil {
		return po, err
	}
	if model == nil {
		return po, usageError("no model provider configured")
	}
	gen, err := generator.New(model, generator.Options{Dialect: text2sql.DialectSQLite})
	if err != nil {
		return po, err
	}
	po.Generator = func(context.Context, *eval.Question, *schema.Database) (text2sql.Generator, error) { return gen, nil }
	po.Name = o.provider
	if o.model != "" {
		po.Name += "/" + o.model
	}
	// The pipeline ask runs: checks, planner and judge as the flags say.
	// Their options depend only on the flags and the dialect, so an error
	// shows on the first call, before any question.
	if err := o.stages(&text2sql.Config{}, &schema.Database{Dialect: text2sql.DialectSQLite}, nil, model); err != nil {
		return po, err
	}
	po.Configure = func(cfg *text2sql.Config, _ *eval.Question, sch *schema.Database) {
		_ = o.stages(cfg, sch, cfg.Executor, model) // checked above
	}
	return po, nil
}

// runRecall measures the retrieval recall of ds (--recall), on empty
// databases built from tables.json when --schemas-only or no database
// file exists.
func runRecall(cmd *cobra.Command, o *options, f *evalFlags, ds *eval.Dataset) (*eval.RecallReport, error) {
	materialize := f.schemasOnly || noDatabaseFile(ds)
	bar := newBar(cmd.ErrOrStderr(), o.json, len(ds.Questions))
	bar.describe("retrieving")
	recall, err := eval.Recall(cmd.Context(), ds, eval.RecallOptions{Materialize: materialize, Catalog: f.catalog, NoForeignKeys: f.noKeys, Parallel: f.parallel, Progress: bar.progress, Retriever: o.evalRetrieverFor(ds, f.catalog && f.separate)})
	bar.finish()
	if err != nil {
		return nil, err
	}
	if materialize && len(recall.Materialized) > 0 && !o.json {
		fmt.Fprintf(cmd.ErrOrStderr(), "note: recall measured on %d empty databases built from %s (schemas only)\n", len(recall.Materialized), ds.Tables)
	}
	return recall, nil
}

func loadDataset(f *evalFlags) (*eval.Dataset, error) {
	switch {
	case f.spider != "":
		return eval.LoadSpider(eval.SpiderPaths{Dir: f.spider, Questions: f.questions, Tables: f.tables, DBDir: f.dbDir})
	case f.bird != "":
		return eval.LoadBIRD(eval.BIRDPaths{Dir: f.bird, Questions: f.questions, Tables: f.tables, DBDir: f.dbDir})
	}
	if f.questions != "" || f.tables != "" || f.dbDir != "" {
		return nil, &exitErr{code: exitUsage, err: errors.New("--questions, --tables and --db-dir go with --spider or --bird")}
	}
	return eval.LoadFile(f.dataset)
}

// noDatabaseFile reports whether no database of ds exists.
func noDatabaseFile(ds *eval.Dataset) bool {
	for _, db := range ds.Databases {
		if db.Missing == "" {
			return false
		}
	}
	return true
}

func writeEvalOutputs(out io.Writer, asJSON bool, f *evalFlags, reports []*eval.Report, recall *eval.RecallReport) error {
	if len(reports) > 0 && recall != nil {
		for _, r := range reports {
			if r.Recall == nil {
				r.Recall = recall
			}
		}
	}
	for i, r := range reports {
		if f.records != "" {
			if err := writeFile(suffixed(f.records, r, i, len(reports)), r.WriteRecords); err != nil {
				return err
			}
		}
		if f.markdown != "" {
			if err := writeFile(suffixed(f.markdown, r, i, len(reports)), r.WriteMarkdown); err != nil {
				return err
			}
		}
	}
	if len(reports) == 0 && recall != nil && f.records != "" {
		if err := writeFile(f.records, recall.WriteRecords); err != nil {
			return err
		}
	}
	var doc any
	switch {
	case len(reports) == 1:
		doc = reports[0]
	case len(reports) > 1:
		doc = reports
	default:
		doc = recall
	}
	if f.report != "" {
		if err := writeFile(f.report, func(w io.Writer) error { return writeJSON(w, doc) }); err != nil {
			return err
		}
	}
	if asJSON {
		return writeJSON(out, doc)
	}
	for _, r := range reports {
		if err := r.WriteMarkdown(out); err != nil {
			return err
		}
	}
	if len(reports) == 0 && recall != nil {
		return recall.WriteMarkdown(out)
	}
	return nil
}

// suffixed inserts the predictions name into path when there are several
// reports: records.jsonl → records.<name>.jsonl.
func suffixed(path string, r *eval.Report, i, n int) string {
	if n <= 1 {
		return path
	}
	name := r.Predictions
	if name == "" {
		name = fmt.Sprint(i + 1)
	}
	name = strings.TrimSuffix(name, filepath.Ext(name))
	ext := filepath.Ext(path)
	return strings.TrimSuffix(path, ext) + "." + name + ext
}

func writeFile(path string, write func(io.Writer) error) error {
	fh, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(fh); err != nil {
		fh.Close()
		return err
	}
	return fh.Close()
}

// bar is a progress bar on stderr, or nothing when stderr is not a
// terminal or the output is JSON.
type bar struct{ pb *progressbar.ProgressBar }

func newBar(w io.Writer, asJSON bool, total int) *bar {
	fh, ok := w.(*os.File)
	if asJSON || !ok || !term.IsTerminal(int(fh.Fd())) || total == 0 {
		return &bar{}
	}
	return &bar{pb: progressbar.NewOptions(total, progressbar.OptionSetWriter(w), progressbar.OptionShowCount(),
		progressbar.OptionSetPredictTime(true), progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionClearOnFinish())}
}

func (b *bar) describe(s string) {
	if b.pb != nil {
		b.pb.Describe(s)
	}
}

func (b *bar) progress(done, _ int) {
	if b.pb != nil {
		_ = b.pb.Set(done)
	}
}

func (b *bar) finish() {
	if b.pb != nil {
		_ = b.pb.Finish()
	}
}

// Answer keys (run --answer-key).

// answerKeyFlags are run's answer-key flags.
type answerKeyFlags struct {
	key  string
	mode string
}

func (a *answerKeyFlags) bind(c *cobra.Command) {
	c.Flags().StringVar(&a.key, "answer-key", "", "check the result against an answer key: SQL, or a file holding it (exit status 5 when it does not match)")
	c.Flags().StringVar(&a.mode, "answer-mode", "spider", "answer-key comparison: spider (any column and row order, ordered when the key has ORDER BY), bird or strict")
}

// answerKeySQL returns the answer key's SQL: the file's content when
// a.key names a file, else a.key.
func (a *answerKeyFlags) answerKeySQL() (string, error) {
	if st, err := os.Stat(a.key); err == nil && st.Mode().IsRegular() {
		b, err := os.ReadFile(a.key)
		if err != nil {
			return "", err
		}
		return string(b), nil
	}
	return a.key, nil
}

type answerCheckJSON struct {
	Matched bool                  `json:"matched"`
	Mode    accuracy.Mode         `json:"mode"`
	Ordered bool                  `json:"ordered"`
	Summary string                `json:"summary"`
	Diff    *accuracy.Diff        `json:"diff,omitempty"`
	Order   *accuracy.OrderReport `json:"order,omitempty"`
}

// check compares sql's result with the answer key and prints the
// outcome; res is sql's result as run printed it. It returns the
// command's error: exitMismatch when they differ.
func (a *answerKeyFlags) check(ctx context.Context, out io.Writer, asJSON bool, exec text2sql.Executor, sql string, res *text2sql.Result) error {
	mode, err := accuracy.ParseMode(a.mode)
	if err != nil {
		return &exitErr{code: exitUsage, err: err}
	}
	key, err := a.answerKeySQL()
	if err != nil {
		return err
	}
	chk, err := accuracy.CheckAnswer(ctx, exec, sql, key, mode)
	if err != nil {
		return err
	}
	if asJSON {
		doc := struct {
			*wire.Result
			AnswerCheck answerCheckJSON `json:"answer_check"`
		}{wire.NewResult(res, wire.Full), answerCheckJSON{Matched: chk.Matched, Mode: chk.Mode, Ordered: chk.Ordered, Summary: chk.Summary, Diff: chk.Diff, Order: chk.Order}}
		if err := writeJSON(out, doc); err != nil {
			return err
		}
	} else {
		printResult(out, res)
		verdict := "matches the answer key"
		if !chk.Matched {
			verdict = "does NOT match the answer key"
		}
		if chk.Matched {
			fmt.Fprintf(out, "\nanswer key (%s mode): %s\n", chk.Mode, verdict)
		} else {
			fmt.Fprintf(out, "\nanswer key (%s mode): %s: %s\n", chk.Mode, verdict, chk.Summary)
		}
		if d := chk.Diff; d != nil && !d.Match {
			for _, r := range d.Missing {
				fmt.Fprintf(out, "  missing: %s\n", rowText(r))
			}
			for _, r := range d.Extra {
				fmt.Fprintf(out, "  extra:   %s\n", rowText(r))
			}
		}
	}
	if res.Error != nil {
		return &exitErr{code: exitSQL, err: fmt.Errorf("%s: %s", res.Error.Kind, res.Error.Message)}
	}
	if !chk.Matched {
		return &exitErr{code: exitMismatch, err: errors.New("the result does not match the answer key: " + chk.Summary)}
	}
	return nil
}

func rowText(r []any) string {
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Sprint(r)
	}
	return string(b)
}

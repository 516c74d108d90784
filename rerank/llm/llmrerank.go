// Package llmrerank is a retriever.Reranker that asks a language model
// which of the retrieved candidate tables a question needs: LLM schema
// selection in the manner of CHESS's schema selector (Talaei et al.,
// "CHESS: Contextual Harnessing for Efficient SQL Synthesis", 2024,
// arXiv:2405.16755), table selection then, optionally, column selection.
//
// The model sees the question, the candidate tables' DDL from the schema
// model and the retrieved notes (column notes, rules, verified examples,
// cell values) within a token budget, and answers JSON naming the tables
// (and in a second call the columns) the SQL needs. The answer is checked
// against the candidates: names that are not among them are ignored and
// recorded, never shown. The selected tables' items move to the front;
// every other item follows in the fused order, so the retriever's quotas
// still fill from the fused ranking and a table the model missed keeps
// its chance (see Reranker.RerankReport for the policy).
//
// Any failure — a provider error, a malformed or empty answer, the time
// limit — falls back to the fused order: not an error for the caller, but
// recorded in text2sql.RerankReport.Fallback, which the retriever puts in
// Retrieval.Rerank and the pipeline in the trace's retrieval step, with
// the model calls.
//
// The package lives in rerank/llm but is named llmrerank, so call sites
// read llmrerank.New rather than llm.New, which would read as a model
// provider next to the llm/… packages.
package llmrerank

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/stagekit"
	"github.com/text2sql-go/text2sql/knowledge"
	"github.com/text2sql-go/text2sql/retriever"
	"github.com/text2sql-go/text2sql/schema"
)

// Name is the RerankReport.Reranker of this package's reports.
const Name = "llm"

// Defaults of Options.
const (
	// DefaultBudget is the default bound, in estimated tokens
	// (stagekit.EstimateTokens: a token per four characters), on the user
	// message of a selection call. With its default table quota of 5 the
	// retriever passes a reranker at most 15 table items (three times the
	// quota); the DDL of a 20-column table is about 200 tokens, so 4000
	// shows 15 such tables whole (3000) and leaves a quarter for notes.
	DefaultBudget = 4000
	// DefaultMaxTables is the default number of selected tables kept; the
	// rest of an answer is treated as not selected. It is one less than
	// the retriever's default of 6 tables shown
	// (retriever.DefaultMaxTables), so the fused ranking's best table,
	// when the model left it out, still has a slot.
	DefaultMaxTables = retriever.DefaultMaxTables - 1
	// DefaultTimeout is the default time limit of one Rerank, every model
	// call and re-ask included. It is half the CLI's default time limit of
	// one model call (60 s): selection is an optional refinement, so a
	// slow provider costs the fused order, not the question.
	DefaultTimeout = 30 * time.Second
)

// Errors of New, both wrapping text2sql.ErrInvalidConfig.
var (
	// ErrNoModel: New was given a nil Model.
	ErrNoModel = fmt.Errorf("%w: llmrerank: no model", text2sql.ErrInvalidConfig)
	// ErrNoSchema: Options.Schema is nil.
	ErrNoSchema = fmt.Errorf("%w: llmrerank: Options.Schema is required", text2sql.ErrInvalidConfig)
)

// Options configure a Reranker. Zero values mean the documented defaults;
// only Schema is required.
type Options struct {
	// Schema is the schema model the candidate tables are rendered from
	// (DDL with keys and foreign keys) and the model's answer is checked
	// against: the retriever's HybridOptions.Schema. Required.
	Schema *schema.Database
	// Knowledge is the knowledge base the retriever indexes
	// (HybridOptions.Knowledge). The prompt shows each item as the
	// retriever's context does, by its document's note: a table item
	// only with what its DDL does not say (the note's description,
	// synonyms, joins and questions), and not at all when nothing is
	// left. Nil means an empty base: table items are then left out, their
	// DDL says it all.
	Knowledge *knowledge.Base
	// Budget bounds the user message of each call, in estimated tokens
	// (stagekit.EstimateTokens). The question and the names of every
	// candidate table are always sent; the candidates' DDL, best fused
	// first, then the notes, best first, are added while they fit, and a
	// table whose DDL does not fit is listed by name. 0 means
	// DefaultBudget (4000); negative is an error.
	Budget int
	// MaxTables is how many of the model's tables are kept as selected,
	// in its order; 0 means DefaultMaxTables (5); negative is an error.
	// Keep it below the retriever's table quota and MaxTables, so the
	// fused ranking keeps at least one slot for a table the model missed.
	MaxTables int
	// SelectColumns adds CHESS's column selection: a second call, shown
	// only the selected tables, names the columns the SQL needs. Their
	// column and value items then lead their table's items, and
	// RerankReport.Columns lists them. Off by default: the prompt shows
	// the chosen tables whole, so column selection only orders column
	// notes and values, at the cost of a call.
	SelectColumns bool
	// Timeout is the time limit of one Rerank, every call and re-ask
	// included; past it the fused order is kept (RerankReport.Fallback
	// says so). 0 means DefaultTimeout (30 s); negative is an error. The
	// limit reaches the model through its context: models must honour
	// it, as the providers in llm/… do.
	Timeout time.Duration
	// MaxReasks bounds the extra calls made when an answer is malformed
	// (no JSON object with the expected field), as in the planner and the
	// judge: 0 means the default, 1; a negative value means none.
	MaxReasks int
	// Temperature is the sampling temperature, in [0, 2]; 0 by default.
	Temperature float64
}

// Reranker selects tables with a language model. It implements
// retriever.Reranker and retriever.ReportingReranker, and is immutable
// and safe for concurrent use when its Model is.
type Reranker struct {
	model text2sql.Model
	opts  Options
	notes map[string]string // document ID → its note (knowledge.Document.Note)
}

var (
	_ retriever.Reranker          = (*Reranker)(nil)
	_ retriever.ReportingReranker = (*Reranker)(nil)
)

// New returns a Reranker calling model.
//
// Errors wrap text2sql.ErrInvalidConfig: ErrNoModel, ErrNoSchema, a
// negative Budget, MaxTables or Timeout, or a Temperature outside [0, 2].
func New(model text2sql.Model, opts Options) (*Reranker, error) {
	if model == nil {
		return nil, ErrNoModel
	}
	if opts.Schema == nil {
		return nil, ErrNoSchema
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: llmrerank: "+format, append([]any{text2sql.ErrInvalidConfig}, args...)...)
	}
	switch {
	case opts.Budget < 0:
		return nil, bad("Budget %d is negative", opts.Budget)
	case opts.MaxTables < 0:
		return nil, bad("MaxTables %d is negative", opts.MaxTables)
	case opts.Timeout < 0:
		return nil, bad("Timeout %v is negative", opts.Timeout)
	}
	if err := stagekit.CheckTemperature("llmrerank", opts.Temperature); err != nil {
		return nil, err
	}
	if opts.Budget == 0 {
		opts.Budget = DefaultBudget
	}
	if opts.MaxTables == 0 {
		opts.MaxTables = DefaultMaxTables
	}
	if opts.Timeout == 0 {
		opts.Timeout = DefaultTimeout
	}
	opts.MaxReasks = stagekit.Reasks(opts.MaxReasks)
	docs := opts.Knowledge.Documents(opts.Schema)
	notes := make(map[string]string, len(docs))
	for _, d := range docs {
		notes[d.ID] = d.Note
	}
	return &Reranker{model: model, opts: opts, notes: notes}, nil
}

// shown returns items as the prompt shows them: each with its document's
// note as Text, without those whose note is empty. Items of no document
// keep their Text.
func (r *Reranker) shown(items []text2sql.Item) []text2sql.Item {
	out := make([]text2sql.Item, 0, len(items))
	for _, it := range items {
		if note, ok := r.notes[it.ID]; ok {
			if it.Text = note; note == "" {
				continue
			}
		}
		out = append(out, it)
	}
	return out
}

// Name returns Name, the reranker's name in reports and /health.
func (r *Reranker) Name() string { return Name }

// Rerank implements retriever.Reranker: RerankReport without the report.
func (r *Reranker) Rerank(ctx context.Context, question string, items []text2sql.Item) ([]text2sql.Item, error) {
	out, _, err := r.RerankReport(ctx, question, items)
	return out, err
}

// RerankReport implements retriever.ReportingReranker.
//
// The candidate tables are the schema tables of the items (the Table of
// table, column and value items), in the items' order — the fused order
// when the retriever calls. One call (System, TablesPrompt) asks for the
// tables the SQL needs; with Options.SelectColumns a second (ColumnsPrompt)
// asks for their columns. Names the schema lacks or that are not among the
// candidates are left out and listed in the report's Ignored.
//
// The returned items are all of items, reordered, none added or dropped:
// first the items of the selected tables (at most MaxTables), in the
// model's order, each table's own item first, then its selected columns'
// items, then its other items in the order given; then every other item
// in the order given. Rules and examples keep their order among
// themselves, so the retriever's per-kind quotas keep the same ones as
// without a reranker. Score is set from the position so that order and
// Score agree: the i-th of n items (from 0) scores (n-i)/n, in (0, 1].
//
// The model only promotes, it never removes: a table it left out stays
// among the candidates in the fused order, and with MaxTables below the
// retriever's table quota (the defaults: 4 and 5) the best of them still
// comes within the quota, so a table the question plainly names is not
// dropped because the model missed it. Recall errors cost more than an
// extra table in the prompt (a missing table makes the SQL wrong; an
// extra one is read past).
//
// On a fallback — an empty question, no candidate table (both without a
// call), a model error, a malformed answer after the re-asks, an answer
// naming no candidate, or Options.Timeout — the items are returned as
// given and Fallback says why; the error is nil.
// A failed column selection keeps the table selection and is recorded
// as a Fallback starting "column selection: ".
//
// The error is non-nil only when ctx itself ends (it is ctx.Err(), and
// the items are nil): the caller gave up, the retrieval should too. The
// report is never nil and always holds the calls made.
func (r *Reranker) RerankReport(ctx context.Context, question string, items []text2sql.Item) ([]text2sql.Item, *text2sql.RerankReport, error) {
	rep := &text2sql.RerankReport{Reranker: Name}
	if err := ctx.Err(); err != nil {
		return nil, rep, err
	}
	cands := r.candidates(items)
	switch {
	case strings.TrimSpace(question) == "":
		rep.Fallback = "empty question"
		return items, rep, nil
	case len(cands) == 0:
		rep.Fallback = "no candidate table"
		return items, rep, nil
	}
	tctx, cancel := context.WithTimeout(ctx, r.opts.Timeout)
	defer cancel()

	sel, err := r.selectTables(tctx, question, items, cands, rep)
	if err != nil {
		if ctx.Err() != nil {
			return nil, rep, ctx.Err()
		}
		rep.Fallback = r.why(tctx, err)
		return items, rep, nil
	}
	var cols map[*schema.Table]map[string]bool
	if r.opts.SelectColumns {
		if cols, err = r.selectColumns(tctx, question, items, sel, rep); err != nil {
			if ctx.Err() != nil {
				return nil, rep, ctx.Err()
			}
			rep.Fallback = "column selection: " + r.why(tctx, err)
		}
	}
	return order(items, sel, cols, r.opts.Schema), rep, nil
}

// errNoSelection is a usable answer that selects no candidate table.
var errNoSelection = errors.New("empty selection")

// why describes a selection failure for RerankReport.Fallback.
func (r *Reranker) why(tctx context.Context, err error) string {
	var oe *text2sql.OutputError
	switch {
	case errors.Is(tctx.Err(), context.DeadlineExceeded):
		return fmt.Sprintf("timeout after %v", r.opts.Timeout)
	case errors.Is(err, errNoSelection):
		return err.Error()
	case errors.As(err, &oe):
		return "malformed answer: " + stagekit.Cut(stagekit.OneLine(oe.Error()), maxReason)
	}
	return "model error: " + stagekit.Cut(stagekit.OneLine(err.Error()), maxReason)
}

// maxReason bounds the error text kept in a Fallback, in runes: enough for
// a provider's message, not a whole echoed answer.
const maxReason = 300

// candidates returns the schema tables of items, in the items' order,
// each once.
func (r *Reranker) candidates(items []text2sql.Item) []*schema.Table {
	var out []*schema.Table
	seen := map[*schema.Table]bool{}
	for _, it := range items {
		if it.Table == "" {
			continue
		}
		if t := r.opts.Schema.Lookup(it.Table); t != nil && !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

// ask makes one selection call of the prompt user, the answer held to the
// JSON Schema answer: parse reads each answer's names, a failure re-asks
// (up to MaxReasks) for the field list, and use takes the names of a
// usable answer. The model calls made are added to rep.Calls whatever the
// outcome; the error is stagekit.Call.Run's.
func (r *Reranker) ask(ctx context.Context, rep *text2sql.RerankReport, user string, answer json.RawMessage, field string, parse func(text string) ([]string, error), use func(names []string)) error {
	calls, err := stagekit.Call{
		Model: r.model, System: System(r.opts.Schema.Dialect), User: user,
		Schema: answer, Temperature: r.opts.Temperature, MaxReasks: r.opts.MaxReasks,
		Parse: func(text string) error {
			names, err := parse(text)
			if err != nil {
				return &stagekit.Retry{Note: reask(field), Err: err}
			}
			use(names)
			return nil
		},
	}.Run(ctx)
	rep.Calls = append(rep.Calls, calls...)
	return err
}

// selectTables makes the table-selection call and returns the selected
// candidates, at most MaxTables, in the model's order.
func (r *Reranker) selectTables(ctx context.Context, question string, items []text2sql.Item, cands []*schema.Table, rep *text2sql.RerankReport) ([]*schema.Table, error) {
	var sel []*schema.Table
	err := r.ask(ctx, rep, TablesPrompt(question, r.opts.Schema, cands, r.shown(items), r.opts.Budget), TablesSchema(), "tables", ParseTables, func(names []string) {
		sel, rep.Ignored = r.resolveTables(names, cands)
	})
	if err != nil {
		return nil, err
	}
	if len(sel) == 0 {
		return nil, errNoSelection
	}
	for _, t := range sel {
		rep.Tables = append(rep.Tables, t.QualifiedName())
	}
	return sel, nil
}

// resolveTables maps the model's names to candidates: the first MaxTables
// distinct ones, and the names that are no candidate (as written).
func (r *Reranker) resolveTables(names []string, cands []*schema.Table) (sel []*schema.Table, ignored []string) {
	for _, n := range names {
		t := r.opts.Schema.Lookup(unquote(n))
		switch {
		case t == nil || !slices.Contains(cands, t):
			ignored = append(ignored, n)
		case !slices.Contains(sel, t) && len(sel) < r.opts.MaxTables:
			sel = append(sel, t)
		}
	}
	return sel, ignored
}

// selectColumns makes the column-selection call over the selected tables
// and returns, per table, the selected columns (lower case).
func (r *Reranker) selectColumns(ctx context.Context, question string, items []text2sql.Item, sel []*schema.Table, rep *text2sql.RerankReport) (map[*schema.Table]map[string]bool, error) {
	var cols map[*schema.Table]map[string]bool
	err := r.ask(ctx, rep, ColumnsPrompt(question, r.opts.Schema, sel, r.shown(items), r.opts.Budget), ColumnsSchema(), "columns", ParseColumns, func(names []string) {
		var ignored []string
		cols, ignored = resolveColumns(r.opts.Schema, names, sel)
		rep.Ignored = append(rep.Ignored, ignored...)
	})
	if err != nil {
		return nil, err
	}
	if len(cols) == 0 {
		return nil, errNoSelection
	}
	for _, t := range sel {
		for _, c := range t.Columns {
			if cols[t][lower(c.Name)] {
				rep.Columns = append(rep.Columns, t.QualifiedName()+"."+c.Name)
			}
		}
	}
	return cols, nil
}

// order reorders items as RerankReport documents and sets their Score.
func order(items []text2sql.Item, sel []*schema.Table, cols map[*schema.Table]map[string]bool, db *schema.Database) []text2sql.Item {
	group := make(map[*schema.Table]int, len(sel))
	for i, t := range sel {
		group[t] = i
	}
	// An item sorts by (group, tier), stably: group is the position of
	// its table in sel, len(sel) for the rest; tier is 0 for a selected
	// table's own item, 1 for its selected columns' items, 2 for its other
	// items (0 for the rest).
	type ranked struct {
		it          text2sql.Item
		group, tier int
	}
	rs := make([]ranked, len(items))
	for i, it := range items {
		rs[i] = ranked{it: it, group: len(sel)}
		var t *schema.Table
		if it.Table != "" {
			t = db.Lookup(it.Table)
		}
		g, ok := group[t]
		if !ok {
			continue
		}
		rs[i].group, rs[i].tier = g, 2
		switch {
		case it.Kind == text2sql.ItemTable:
			rs[i].tier = 0
		case it.Column != "" && cols[t][lower(it.Column)]:
			rs[i].tier = 1
		}
	}
	slices.SortStableFunc(rs, func(a, b ranked) int {
		return cmp.Or(cmp.Compare(a.group, b.group), cmp.Compare(a.tier, b.tier))
	})
	out := make([]text2sql.Item, len(rs))
	for i, r := range rs {
		out[i] = r.it
	}
	n := float64(len(out))
	for i := range out {
		out[i].Score = (n - float64(i)) / n
	}
	return out
}

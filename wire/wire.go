// Package wire is the JSON form of an answer and its parts (result, SQL,
// explanation, context, attempts, checks' warnings, selection, trace),
// the one form the HTTP service, its MCP tools and the command line
// write. A field is added here once and every output has it.
//
// The form has two levels of detail. Public is what a service returns to
// its clients, described by the service's /openapi.json: no prompt, no
// knowledge text, no example SQL, no schema. Full adds them, with the
// plans, the model calls and the trace's steps, for the host's own eyes
// (the command line). Prompts are in neither. Fields are only ever
// added; durations are milliseconds (float); a float that is NaN or
// infinite is written as a string ("NaN", "Infinity", "-Infinity") in a
// row and as 0 in a score.
package wire

import (
	"errors"
	"math"
	"strings"
	"time"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/chart"
)

// Detail is how much of an answer its JSON form shows: Public or Full.
type Detail int

// The levels of detail.
const (
	// Public: what a service's client may see (the HTTP API, MCP).
	Public Detail = iota
	// Full adds knowledge texts, example SQL, the schema shown, plans,
	// model calls and the trace's steps (the command line).
	Full
)

// Answer is an answer of text2sql.Pipeline's Ask or Generate.
type Answer struct {
	// RequestID identifies the service request; absent outside a service.
	RequestID string `json:"request_id,omitempty"`
	Question  string `json:"question"`
	// Status is "generated" (Generate), "answered", "verified",
	// "unverified" (Ask), "declined", or "failed" with Error set.
	Status text2sql.Status `json:"status"`
	// Answerable is true when the answer has SQL and did not fail.
	Answerable  bool   `json:"answerable"`
	SQL         string `json:"sql"`
	Explanation string `json:"explanation"`
	// ReusedExample is the id of the verified example whose SQL was used
	// without a model call.
	ReusedExample string   `json:"reused_example,omitempty"`
	LowConfidence bool     `json:"low_confidence"`
	Context       *Context `json:"context,omitempty"`
	Result        *Result  `json:"result,omitempty"`
	// Words is the answer in words (the pipeline's Narrator), or absent.
	Words string `json:"words,omitempty"`
	// Chart is a Vega-Lite v5 chart of Result when one suits its shape
	// (package chart), or absent.
	Chart *chart.Spec `json:"chart,omitempty"`
	// Selection is how the reported attempt's SQL was chosen among its
	// candidates (text2sql.Config.Candidates); absent with one candidate.
	Selection *Selection `json:"selection,omitempty"`
	// Attempts is the repair trail, oldest first.
	Attempts   []Attempt      `json:"attempts"`
	Model      string         `json:"model"` // the model of the last call; "" when none was made
	Usage      text2sql.Usage `json:"usage"`
	ModelCalls int            `json:"model_calls"`
	Timings    Timings        `json:"timings"`
	// Steps are the trace's steps, in order (Full only).
	Steps []Step `json:"steps,omitempty"`
	// DurationMS is the run's wall time, Timings.TotalMS (Full only).
	DurationMS float64 `json:"duration_ms,omitempty"`
	// Error is why the answer failed (status "failed").
	Error *Error `json:"error,omitempty"`
	// Cached is true when a service answered from its answer cache: no
	// model was called and no statement run for this request; Usage,
	// ModelCalls and Timings are then zero.
	Cached bool `json:"cached,omitempty"`
}

// Error is a failure's code and a human-readable message. Messages may
// change; programs should test the code.
type Error struct {
	// Code is one of the Failure codes for an answer's failure; a service
	// uses its own codes for its error responses. Absent for an answer
	// failure of no known kind (a provider's failure reaching the command
	// line, for one).
	Code    string `json:"code,omitempty"`
	Message string `json:"message"`
}

// The failure codes of an answer (Error.Code of an answer whose status is
// "failed" because the pipeline ran but produced no usable SQL).
const (
	FailureRepairsExhausted = "repairs_exhausted" // every attempt failed; see attempts
	FailureBudgetExhausted  = "budget_exhausted"  // the model-call budget is spent
	FailureNoSQL            = "no_sql"            // the model's answer held no SQL
	FailureInvalidOutput    = "invalid_output"    // the model's answer was malformed
)

// FailureCode returns the failure code of err, an error Ask or Generate
// returned, or "" when err is not an answer failure: no usable SQL after
// the pipeline ran.
func FailureCode(err error) string {
	var oe *text2sql.OutputError
	switch {
	case errors.Is(err, text2sql.ErrRepairsExhausted):
		return FailureRepairsExhausted
	case errors.Is(err, text2sql.ErrBudgetExhausted):
		return FailureBudgetExhausted
	case errors.As(err, &oe) && errors.Is(err, text2sql.ErrNoSQL):
		return FailureNoSQL
	case errors.As(err, &oe):
		return FailureInvalidOutput
	}
	return ""
}

// Timings are the wall times of a run, in milliseconds, summed per stage.
type Timings struct {
	TotalMS     float64 `json:"total_ms"`
	RetrievalMS float64 `json:"retrieval_ms"`
	PlanMS      float64 `json:"plan_ms"`
	SQLMS       float64 `json:"sql_ms"` // generation, including model calls
	CheckMS     float64 `json:"check_ms"`
	ExecutionMS float64 `json:"execution_ms"`
	JudgeMS     float64 `json:"judge_ms"`
	// SelectionMS is the choice among candidates, a selector's calls
	// included; the candidates' own stages, run in parallel, are summed
	// in SQLMS, CheckMS and ExecutionMS.
	SelectionMS float64 `json:"selection_ms"`
}

// Step is one stage run of the trace (Full only).
type Step struct {
	Stage        text2sql.Stage `json:"stage"`
	Attempt      int            `json:"attempt"`
	DurationMS   float64        `json:"duration_ms"`
	InputTokens  int            `json:"input_tokens"`
	OutputTokens int            `json:"output_tokens"`
	ModelCalls   int            `json:"model_calls"`
	Outcome      string         `json:"outcome"`
}

// Result is an execution result.
type Result struct {
	// OK is true when the statement ran; false when it was refused or
	// failed, with Error saying why.
	OK      bool     `json:"ok"`
	Columns []string `json:"columns"`
	// Rows are the result rows, each with one value per column: JSON
	// null, number, string, boolean, or base64 text for binary values.
	// Floating-point NaN and infinities are the strings "NaN",
	// "Infinity" and "-Infinity".
	Rows       [][]any   `json:"rows"`
	RowCount   int       `json:"row_count"`
	Truncated  bool      `json:"truncated"` // more rows existed than the row cap
	DurationMS float64   `json:"duration_ms"`
	Error      *SQLError `json:"error,omitempty"`
	// Steps are the statements run on the databases of a catalog for
	// this result (text2sql.Result.Steps); absent for one database.
	Steps []ResultStep `json:"steps,omitempty"`
}

// ResultStep is one statement a catalog of databases ran for a result:
// the database ("merge" for the private database the steps were combined
// in), the CTE whose rows it gave, the statement as that database ran it,
// its rows and milliseconds.
type ResultStep struct {
	Database   string  `json:"database"`
	Name       string  `json:"name,omitempty"`
	SQL        string  `json:"sql"`
	RowCount   int     `json:"row_count"`
	DurationMS float64 `json:"duration_ms"`
}

// SQLError is a refused or failing statement. Kind is a
// text2sql.ErrorKind: "not_read_only", "multiple_statements",
// "forbidden_function", "forbidden_statement", "forbidden_table", "empty",
// "dialect", "cross_database", "syntax", "unknown_table",
// "unknown_column", "timeout", "too_large", "runtime". Refused is true
// when the statement never reached the engine.
type SQLError struct {
	Kind    text2sql.ErrorKind `json:"kind"`
	Message string             `json:"message"`
	Hint    string             `json:"hint,omitempty"`
	Refused bool               `json:"refused"`
	// SQLState is the engine's SQLSTATE code where it has one (Full only).
	SQLState string `json:"sqlstate,omitempty"`
}

// Context is what retrieval found; in Public detail without the texts,
// the example SQL and the schema.
type Context struct {
	Question       string  `json:"question,omitempty"` // Full only
	Tables         []Table `json:"tables"`
	Items          []Item  `json:"items"`
	LowConfidence  bool    `json:"low_confidence"`
	BestSimilarity float64 `json:"best_similarity"`
	// Match is the verified example close enough to reuse, or absent.
	Match *Match `json:"match,omitempty"`
	// Schema is the DDL shown to the model (Full only).
	Schema string `json:"schema,omitempty"`
	// Rerank is what a reporting reranker (LLM schema selection) did, or
	// absent.
	Rerank *Rerank `json:"rerank,omitempty"`
	// Keywords is what a keyword expansion did (Full only), or absent.
	Keywords *Keywords `json:"keywords,omitempty"`
}

// Table is a table shown to the model and why: "retrieved",
// "via example <id>", "join path", "required", "whole schema" or "value
// match".
type Table struct {
	Name   string  `json:"name"`
	Reason string  `json:"reason"`
	Score  float64 `json:"score"`
	// Columns are the columns shown when a wide table is shown with only
	// its keys and the columns the question touches; absent when all are.
	Columns []string `json:"columns,omitempty"`
}

// Item is one retrieved knowledge item.
type Item struct {
	ID         string            `json:"id"`
	Kind       text2sql.ItemKind `json:"kind"`
	Name       string            `json:"name"`             // the table, "table.column", or the rule's or example's id
	Text       string            `json:"text,omitempty"`   // Full only
	Table      string            `json:"table,omitempty"`  // the table a table, column or value item is about (Full only)
	Column     string            `json:"column,omitempty"` // the column a column or value item is about (Full only)
	SQL        string            `json:"sql,omitempty"`    // an example's SQL, Full only
	Score      float64           `json:"score"`
	Similarity float64           `json:"similarity"`
	// Provenance is "bm25", "vector", "bm25+vector" or "value index".
	Provenance string `json:"provenance"`
}

// Match is a reusable verified example.
type Match struct {
	ID         string  `json:"id"`
	Question   string  `json:"question,omitempty"` // Full only
	SQL        string  `json:"sql,omitempty"`      // Full only
	Similarity float64 `json:"similarity"`
}

// Rerank is a reranker's report: its name, the model calls it made, why
// it fell back to the fused order ("" when it did not), and the tables
// and columns it selected and the names it ignored.
type Rerank struct {
	Reranker   string      `json:"reranker"`
	ModelCalls int         `json:"model_calls"`
	Calls      []ModelCall `json:"calls,omitempty"` // Full only
	Fallback   string      `json:"fallback,omitempty"`
	Tables     []string    `json:"tables,omitempty"`
	Columns    []string    `json:"columns,omitempty"`
	Ignored    []string    `json:"ignored,omitempty"`
}

// Keywords is a keyword expansion's report: the terms it added, its
// model calls, and why it added none ("" when it did).
type Keywords struct {
	Keywords []string    `json:"keywords,omitempty"`
	Calls    []ModelCall `json:"calls,omitempty"`
	Fallback string      `json:"fallback,omitempty"`
}

// ModelCall is one model call (Full only): the model, its tokens, its
// wall time with retries, and the requests sent (absent when unknown).
type ModelCall struct {
	Model      string         `json:"model"`
	Usage      text2sql.Usage `json:"usage"`
	DurationMS float64        `json:"duration_ms"`
	Attempts   int            `json:"attempts,omitempty"`
}

// Attempt is one pass through generation and, when it got that far,
// execution and judging.
type Attempt struct {
	N           int      `json:"n"`
	SQL         string   `json:"sql"`
	Explanation string   `json:"explanation"`
	Result      *Result  `json:"result,omitempty"`
	Verdict     *Verdict `json:"verdict,omitempty"`
	// Warnings are the deterministic checks' doubts on the executed SQL.
	Warnings []string `json:"warnings,omitempty"`
	// Plan is the plan the SQL was generated from (Full only).
	Plan *Plan `json:"plan,omitempty"`
	// Selection is how the attempt's SQL was chosen among its candidates;
	// absent with one candidate.
	Selection *Selection `json:"selection,omitempty"`
	// Error is why the attempt failed before a result (an unusable model
	// answer, no progress).
	Error string `json:"error,omitempty"`
}

// Plan is a planner's decomposition of the question (Full only).
type Plan struct {
	Database    string                `json:"database"`
	Objects     []text2sql.PlanObject `json:"objects"`
	Instruction []string              `json:"instruction"`
	Output      string                `json:"output"`
	Calls       []ModelCall           `json:"calls,omitempty"`
}

// Verdict is a judge's review.
type Verdict struct {
	OK     bool           `json:"ok"`
	Stage  text2sql.Stage `json:"stage,omitempty"` // the faulty stage: "retrieval", "plan" or "sql"
	Reason string         `json:"reason,omitempty"`
	Hints  []string       `json:"hints,omitempty"`
	// Terms and Tables guide a new retrieval (Full only).
	Terms  []string    `json:"terms,omitempty"`
	Tables []string    `json:"tables,omitempty"`
	Calls  []ModelCall `json:"calls,omitempty"` // Full only
}

// Selection is how an attempt's SQL was chosen among several candidates:
// by execution-result vote ("vote"), by the selector or the judge in a
// tie ("selector", "judge"), the earliest in a tie ("order"), or the
// first when none executed ("none").
type Selection struct {
	Method text2sql.SelectionMethod `json:"method"`
	Reason string                   `json:"reason"` // why the winner won
	Winner int                      `json:"winner"` // index in Candidates
	Votes  int                      `json:"votes"`  // candidates in the winner's result group
	Groups int                      `json:"groups"` // distinct results
	// Candidates are in generation order, the usual prompt's first.
	Candidates []Candidate `json:"candidates"`
}

// Candidate is one candidate of an attempt and its outcome.
type Candidate struct {
	Variant     int      `json:"variant"` // 0: the usual prompt
	Group       int      `json:"group"`   // 1-based result group; 0: no result without error
	Answerable  bool     `json:"answerable"`
	SQL         string   `json:"sql"`
	Explanation string   `json:"explanation"`
	Result      *Result  `json:"result,omitempty"`
	Verdict     *Verdict `json:"verdict,omitempty"` // the judge's, when it settled a tie
	Error       string   `json:"error,omitempty"`
}

// NewAnswer returns the JSON form of a, with err the error Ask or
// Generate returned with it (nil, or the answer's failure) and d the
// detail shown. a must not be nil.
func NewAnswer(a *text2sql.Answer, err error, d Detail) *Answer {
	b := &Answer{
		Question: a.Question, Status: a.Status, SQL: a.SQL, Explanation: a.Explanation,
		ReusedExample: a.ReusedExample, Context: NewContext(a.Retrieval, d), Result: NewResult(a.Result, d),
		Words: a.Words, Chart: chart.For(a.Result, chart.Options{}), Selection: newSelection(a.Selection, d),
		Attempts: []Attempt{}, Usage: a.Trace.Usage, ModelCalls: a.Trace.ModelCalls,
	}
	if a.Retrieval != nil {
		b.LowConfidence = a.Retrieval.LowConfidence
	}
	b.Answerable = a.Status != text2sql.StatusDeclined && a.Status != text2sql.StatusFailed && a.SQL != "" && err == nil
	for i := range a.Attempts {
		b.Attempts = append(b.Attempts, newAttempt(&a.Attempts[i], d))
	}
	b.Timings, b.Model = timings(a.Trace)
	if d == Full {
		b.DurationMS = b.Timings.TotalMS
		b.Steps = []Step{}
		for _, s := range a.Trace.Steps {
			b.Steps = append(b.Steps, Step{Stage: s.Stage, Attempt: s.Attempt, DurationMS: ms(s.Duration),
				InputTokens: s.Usage.InputTokens, OutputTokens: s.Usage.OutputTokens, ModelCalls: len(s.Calls), Outcome: s.Outcome})
		}
	}
	if err != nil {
		b.Error = &Error{Code: FailureCode(err), Message: err.Error()}
	}
	return b
}

// timings sums the trace's step durations per stage and names the model
// of its last call.
func timings(t text2sql.Trace) (Timings, string) {
	out := Timings{TotalMS: ms(t.Duration)}
	model := ""
	for _, s := range t.Steps {
		d := ms(s.Duration)
		switch s.Stage {
		case text2sql.StageRetrieval:
			out.RetrievalMS += d
		case text2sql.StagePlan:
			out.PlanMS += d
		case text2sql.StageSQL:
			out.SQLMS += d
		case text2sql.StageCheck:
			out.CheckMS += d
		case text2sql.StageExecution:
			out.ExecutionMS += d
		case text2sql.StageJudge:
			out.JudgeMS += d
		case text2sql.StageSelection:
			out.SelectionMS += d
		}
		for _, c := range s.Calls {
			model = c.Model
		}
	}
	return out, model
}

func newAttempt(at *text2sql.Attempt, d Detail) Attempt {
	b := Attempt{N: at.N, Result: NewResult(at.Result, d), Warnings: at.Warnings, Verdict: newVerdict(at.Verdict, d),
		Selection: newSelection(at.Selection, d)}
	if at.Error != nil {
		b.Error = at.Error.Error()
	}
	if c := at.Candidate; c != nil {
		b.SQL, b.Explanation = c.SQL, c.Explanation
	}
	if p := at.Plan; p != nil && d == Full {
		b.Plan = &Plan{Database: p.Database, Objects: p.Objects, Instruction: p.Instruction, Output: p.Output, Calls: newCalls(p.Calls)}
	}
	return b
}

func newSelection(s *text2sql.Selection, d Detail) *Selection {
	if s == nil {
		return nil
	}
	b := &Selection{Method: s.Method, Reason: s.Reason, Winner: s.Winner, Votes: s.Votes, Groups: s.Groups, Candidates: []Candidate{}}
	for _, c := range s.Candidates {
		cb := Candidate{Variant: c.Variant, Group: c.Group, Result: NewResult(c.Result, d), Verdict: newVerdict(c.Verdict, d)}
		if c.Candidate != nil {
			cb.Answerable, cb.SQL, cb.Explanation = c.Candidate.Answerable, c.Candidate.SQL, c.Candidate.Explanation
		}
		if c.Error != nil {
			cb.Error = c.Error.Error()
		}
		b.Candidates = append(b.Candidates, cb)
	}
	return b
}

func newVerdict(v *text2sql.Verdict, d Detail) *Verdict {
	if v == nil {
		return nil
	}
	b := &Verdict{OK: v.OK, Stage: v.Stage, Reason: v.Reason, Hints: v.Hints}
	if d == Full {
		b.Terms, b.Tables, b.Calls = v.Terms, v.Tables, newCalls(v.Calls)
	}
	return b
}

// newCalls returns the JSON form of calls; nil for none.
func newCalls(calls []text2sql.ModelCall) []ModelCall {
	var out []ModelCall
	for _, c := range calls {
		out = append(out, ModelCall{Model: c.Model, Usage: c.Usage, DurationMS: ms(c.Duration), Attempts: c.Attempts})
	}
	return out
}

// NewResult returns the JSON form of r, nil for nil; d decides whether
// an error's SQLSTATE is shown.
func NewResult(r *text2sql.Result, d Detail) *Result {
	if r == nil {
		return nil
	}
	b := &Result{OK: r.Error == nil, Columns: r.Columns, RowCount: r.RowCount, Truncated: r.Truncated, DurationMS: ms(r.Duration)}
	for _, st := range r.Steps {
		b.Steps = append(b.Steps, ResultStep{Database: st.Database, Name: st.Name, SQL: st.SQL, RowCount: st.RowCount, DurationMS: ms(st.Duration)})
	}
	if b.Columns == nil {
		b.Columns = []string{}
	}
	b.Rows = make([][]any, len(r.Rows))
	for i, row := range r.Rows {
		out := make([]any, len(row))
		for j, v := range row {
			out[j] = jsonValue(v)
		}
		b.Rows[i] = out
	}
	if e := r.Error; e != nil {
		b.Error = &SQLError{Kind: e.Kind, Message: e.Message, Hint: e.Hint, Refused: e.Kind.Refusal()}
		if d == Full {
			b.Error.SQLState = e.SQLState
		}
	}
	return b
}

// jsonValue makes v encodable: NaN and infinities become strings.
func jsonValue(v any) any {
	var f float64
	switch x := v.(type) {
	case float64:
		f = x
	case float32:
		f = float64(x)
	default:
		return v
	}
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return v
}

// NewContext returns the JSON form of a retrieval, nil for nil.
func NewContext(c *text2sql.Retrieval, d Detail) *Context {
	if c == nil {
		return nil
	}
	b := &Context{Tables: []Table{}, Items: []Item{}, LowConfidence: c.LowConfidence, BestSimilarity: finite(c.BestSimilarity)}
	for _, t := range c.Tables {
		b.Tables = append(b.Tables, Table{Name: t.Name, Reason: t.Why(), Score: finite(t.Score), Columns: t.Columns})
	}
	for _, it := range c.Items {
		ib := Item{ID: it.ID, Kind: it.Kind, Name: itemName(it), Score: finite(it.Score), Similarity: finite(it.Similarity), Provenance: string(it.Provenance)}
		if d == Full {
			ib.Text, ib.Table, ib.Column, ib.SQL = it.Text, it.Table, it.Column, it.SQL
		}
		b.Items = append(b.Items, ib)
	}
	if m := c.Match; m != nil {
		b.Match = &Match{ID: m.ID, Similarity: finite(m.Similarity)}
		if d == Full {
			b.Match.Question, b.Match.SQL = m.Question, m.SQL
		}
	}
	if r := c.Rerank; r != nil {
		b.Rerank = &Rerank{Reranker: r.Reranker, ModelCalls: len(r.Calls), Fallback: r.Fallback, Tables: r.Tables, Columns: r.Columns, Ignored: r.Ignored}
	}
	if d == Full {
		b.Question, b.Schema = c.Question, c.Schema
		if b.Rerank != nil {
			b.Rerank.Calls = newCalls(c.Rerank.Calls)
		}
		if k := c.Keywords; k != nil {
			b.Keywords = &Keywords{Keywords: k.Keywords, Calls: newCalls(k.Calls), Fallback: k.Fallback}
		}
	}
	return b
}

func finite(f float64) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return f
}

// itemName is what an item is about: "table.column", the table, or the
// id after its kind ("q3" of "example:q3").
func itemName(it text2sql.Item) string {
	switch {
	case it.Table != "" && it.Column != "":
		return it.Table + "." + it.Column
	case it.Table != "":
		return it.Table
	}
	if _, rest, ok := strings.Cut(it.ID, ":"); ok {
		return rest
	}
	return it.ID
}

// ms is d in milliseconds, to the microsecond.
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/chart"
	"github.com/text2sql-go/text2sql/executor"
)

// The request and response bodies of the HTTP API (and the structured
// outputs of the MCP tools). They are part of the service's contract,
// described by /openapi.json: fields are only ever added. Durations are in
// milliseconds (float). Prompts, knowledge texts and example SQL are never
// part of them.

// HealthResponse is the body of GET /health for an authenticated caller;
// without valid credentials only Status and Checks are sent.
type HealthResponse struct {
	// Status is "ok", or "unavailable" (with 503) when a readiness probe
	// fails.
	Status  string           `json:"status"`
	Version string           `json:"version,omitempty"`
	Models  []string         `json:"models"`  // the configured model names; empty without a provider
	Dialect text2sql.Dialect `json:"dialect"` // the target database's dialect
	Index   IndexInfo        `json:"index"`
	// Knowledge counts the indexed documents per kind ("table", "column",
	// "rule", "example", "value").
	Knowledge map[string]int `json:"knowledge"`
	// Auth is the authentication method: "static", "supabase", "jwt",
	// "none" or "custom".
	Auth string `json:"auth"`
	MCP  bool   `json:"mcp"` // whether /mcp is served
	// Login is the database login's standing; absent when the executor
	// cannot tell (SQLite has no logins).
	Login *Login `json:"login,omitempty"`
	// Checks are the readiness probes' results by name ("database",
	// "redis"): "ok" or "unreachable". Absent without probes.
	Checks map[string]string `json:"checks,omitempty"`
}

// LiveResponse is the body of GET /health/live.
type LiveResponse struct {
	Status string `json:"status"` // "ok"
}

// Login describes the database login the service runs queries as.
type Login struct {
	// Elevated is true when the login holds powers beyond reading data (a
	// PostgreSQL superuser or server-file role, FILE or SUPER on
	// MySQL/MariaDB…): what a statement slipping past the guard could use.
	// The service still runs; text2sql grant prints the SQL for a
	// read-only login.
	Elevated bool `json:"elevated"`
	// Privileges names the powers found, e.g. "superuser"; empty when not
	// elevated.
	Privileges []string `json:"privileges"`
}

// LoginOf returns the login of an executor that can tell
// (executor.Privileged), for Info.Login; nil when it cannot.
func LoginOf(ex any) *Login {
	p, ok := ex.(executor.Privileged)
	if !ok {
		return nil
	}
	privs := p.ElevatedPrivileges()
	return &Login{Elevated: len(privs) > 0, Privileges: append([]string{}, privs...)}
}

// IndexInfo describes the retrieval index.
type IndexInfo struct {
	// Fingerprint is the index fingerprint (hex SHA-256 of the knowledge,
	// schema, embedder and index layout); any change rebuilds the index.
	Fingerprint string `json:"fingerprint"`
	Embedder    string `json:"embedder"`
	// Reranker names the reranker of the fused candidates, e.g.
	// "cross-encoder/ms-marco-MiniLM-L-6-v2"; "none" without one.
	Reranker  string `json:"reranker"`
	Documents int    `json:"documents"`
}

// QuestionRequest is the body of POST /v1/generate and POST /v1/ask.
type QuestionRequest struct {
	Question string `json:"question"`
}

// RunRequest is the body of POST /v1/run.
type RunRequest struct {
	SQL string `json:"sql"`
	// QuestionID, when set and known to Config.AnswerKeys, asks for the
	// result to be checked against that question's answer key. A JSON
	// number is accepted too.
	QuestionID QuestionID `json:"question_id,omitempty"`
}

// QuestionID is a question identifier: a JSON string, or a JSON integer
// read as its decimal text.
type QuestionID string

// UnmarshalJSON accepts a string or an integer.
func (q *QuestionID) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, []byte("null")) {
		*q = ""
		return nil
	}
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*q = QuestionID(s)
		return nil
	}
	if _, err := strconv.ParseInt(string(b), 10, 64); err != nil {
		return errors.New("question_id must be a string or an integer")
	}
	*q = QuestionID(b)
	return nil
}

// ResultBody is an execution result.
type ResultBody struct {
	// OK is true when the statement ran; false when it was refused or
	// failed, with Error saying why.
	OK      bool     `json:"ok"`
	Columns []string `json:"columns"`
	// Rows are the result rows, each with one value per column: JSON
	// null, number, string, boolean, or base64 text for binary values.
	// Floating-point NaN and infinities are the strings "NaN",
	// "Infinity" and "-Infinity".
	Rows       [][]any       `json:"rows"`
	RowCount   int           `json:"row_count"`
	Truncated  bool          `json:"truncated"` // more rows existed than the row cap
	DurationMS float64       `json:"duration_ms"`
	Error      *SQLErrorBody `json:"error,omitempty"`
	// Steps are the statements run on the databases of a catalog for
	// this result (text2sql.Result.Steps); absent for one database.
	Steps []ResultStepBody `json:"steps,omitempty"`
}

// ResultStepBody is one statement a catalog of databases ran for a
// result: the database ("merge" for the private database the steps were
// combined in), the CTE whose rows it gave, the statement as that
// database ran it, its rows and milliseconds.
type ResultStepBody struct {
	Database   string  `json:"database"`
	Name       string  `json:"name,omitempty"`
	SQL        string  `json:"sql"`
	RowCount   int     `json:"row_count"`
	DurationMS float64 `json:"duration_ms"`
}

// SQLErrorBody is a refused or failing statement. Kind is a
// text2sql.ErrorKind: "not_read_only", "multiple_statements",
// "forbidden_function", "forbidden_statement", "forbidden_table", "empty", "dialect", "cross_database",
// "syntax", "unknown_table", "unknown_column", "timeout", "too_large",
// "runtime". Refused is true when the statement never reached the engine.
type SQLErrorBody struct {
	Kind    text2sql.ErrorKind `json:"kind"`
	Message string             `json:"message"`
	Hint    string             `json:"hint,omitempty"`
	Refused bool               `json:"refused"`
}

// RunResponse is the body of POST /v1/run.
type RunResponse struct {
	RequestID string `json:"request_id"`
	ResultBody
	// Matched is whether the result equals the answer key's, present only
	// when a question_id with an answer key was given and the key could be
	// run.
	Matched *bool `json:"matched,omitempty"`
	// MatchSummary says how the results differ ("match", "2 missing
	// rows", …); present with Matched.
	MatchSummary string `json:"match_summary,omitempty"`
	// Chart is a Vega-Lite v5 chart of the result when one suits its
	// shape (package chart), or absent.
	Chart *chart.Spec `json:"chart,omitempty"`
}

// FeedbackRequest is the body of POST /v1/feedback: a verdict ("up" or
// "down") on an answer's SQL for a question, with an optional note.
type FeedbackRequest struct {
	Question string `json:"question"`
	SQL      string `json:"sql"`
	Verdict  string `json:"verdict"`
	Note     string `json:"note,omitempty"`
}

// FeedbackResponse says what the feedback did: the example an up-vote
// added (Added) or counted toward, with its Status ("pending": it serves
// only its author until a reviewer approves it; "trusted": everyone;
// "rejected"), the examples a down-vote flagged for review ("example:"
// IDs are the knowledge file's).
type FeedbackResponse struct {
	RequestID string `json:"request_id"`
	Verdict   string `json:"verdict"`
	ExampleID string `json:"example_id,omitempty"`
	Status    string `json:"status,omitempty"`
	Added     bool   `json:"added"`
	// Conflict is true when the question's example is another
	// principal's with other SQL: it stays, flagged for review.
	Conflict bool     `json:"conflict,omitempty"`
	Flagged  []string `json:"flagged,omitempty"`
}

// ContextBody is what retrieval found, without the texts and the prompt.
type ContextBody struct {
	Tables         []TableBody `json:"tables"`
	Items          []ItemBody  `json:"items"`
	LowConfidence  bool        `json:"low_confidence"`
	BestSimilarity float64     `json:"best_similarity"`
	// Match is the verified example close enough to reuse, or absent.
	Match *MatchBody `json:"match,omitempty"`
	// Rerank is what a reporting reranker (LLM schema selection) did, or
	// absent.
	Rerank *RerankBody `json:"rerank,omitempty"`
}

// RerankBody is a reranker's report: its name, the model calls it made,
// why it fell back to the fused order ("" when it did not), and the
// tables and columns it selected and the names it ignored. The calls'
// prompts are not included.
type RerankBody struct {
	Reranker   string   `json:"reranker"`
	ModelCalls int      `json:"model_calls"`
	Fallback   string   `json:"fallback,omitempty"`
	Tables     []string `json:"tables,omitempty"`
	Columns    []string `json:"columns,omitempty"`
	Ignored    []string `json:"ignored,omitempty"`
}

// TableBody is a table shown to the model and why: "retrieved",
// "via example <id>", "join path", "required", "whole schema" or "value
// match".
type TableBody struct {
	Name   string  `json:"name"`
	Reason string  `json:"reason"`
	Score  float64 `json:"score"`
}

// ItemBody is one retrieved knowledge item.
type ItemBody struct {
	ID         string            `json:"id"`
	Kind       text2sql.ItemKind `json:"kind"`
	Name       string            `json:"name"` // the table, "table.column", or the rule's or example's id
	Score      float64           `json:"score"`
	Similarity float64           `json:"similarity"`
	Provenance string            `json:"provenance"` // "bm25", "vector" or "bm25+vector"
}

// MatchBody is a reusable verified example.
type MatchBody struct {
	ID         string  `json:"id"`
	Similarity float64 `json:"similarity"`
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

// AnswerBody is the body of POST /v1/generate (without Result and with
// one attempt at most) and of POST /v1/ask.
type AnswerBody struct {
	RequestID string `json:"request_id"`
	Question  string `json:"question"`
	// Status is "generated" (generate), "answered", "verified",
	// "unverified" (ask), "declined", or "failed" with Error set.
	Status      text2sql.Status `json:"status"`
	Answerable  bool            `json:"answerable"`
	SQL         string          `json:"sql"`
	Explanation string          `json:"explanation"`
	// ReusedExample is the id of the verified example whose SQL was used
	// without a model call.
	ReusedExample string       `json:"reused_example,omitempty"`
	LowConfidence bool         `json:"low_confidence"`
	Context       *ContextBody `json:"context,omitempty"`
	Result        *ResultBody  `json:"result,omitempty"`
	// Words is the answer in words (the pipeline's Narrator), or absent.
	Words string `json:"words,omitempty"`
	// Chart is a Vega-Lite v5 chart of Result when one suits its shape
	// (package chart), or absent.
	Chart *chart.Spec `json:"chart,omitempty"`
	// Selection is how the reported attempt's SQL was chosen among its
	// candidates (text2sql.Config.Candidates); absent with one candidate.
	Selection *SelectionBody `json:"selection,omitempty"`
	// Attempts is the repair trail, oldest first.
	Attempts   []AttemptBody  `json:"attempts"`
	Model      string         `json:"model"` // the model of the last call; "" when none was made
	Usage      text2sql.Usage `json:"usage"`
	ModelCalls int            `json:"model_calls"`
	Timings    Timings        `json:"timings"`
	Error      *ErrorDetail   `json:"error,omitempty"`
	// Cached is true when the answer came from the answer cache: no model
	// was called and no statement run for this request; Usage, ModelCalls
	// and Timings are then zero.
	Cached bool `json:"cached,omitempty"`
}

// AttemptBody is one pass through generation and, when it got that far,
// execution and judging.
type AttemptBody struct {
	N           int          `json:"n"`
	SQL         string       `json:"sql"`
	Explanation string       `json:"explanation"`
	Result      *ResultBody  `json:"result,omitempty"`
	Verdict     *VerdictBody `json:"verdict,omitempty"`
	Warnings    []string     `json:"warnings,omitempty"`
	// Selection is how the attempt's SQL was chosen among its candidates;
	// absent with one candidate.
	Selection *SelectionBody `json:"selection,omitempty"`
	// Error is why the attempt failed before a result (an unusable model
	// answer, no progress).
	Error string `json:"error,omitempty"`
}

// SelectionBody is how an attempt's SQL was chosen among several
// candidates: by execution-result vote ("vote"), by the selector or the
// judge in a tie ("selector", "judge"), the earliest in a tie ("order"),
// or the first when none executed ("none").
type SelectionBody struct {
	Method text2sql.SelectionMethod `json:"method"`
	Reason string                   `json:"reason"` // why the winner won
	Winner int                      `json:"winner"` // index in Candidates
	Votes  int                      `json:"votes"`  // candidates in the winner's result group
	Groups int                      `json:"groups"` // distinct results
	// Candidates are in generation order, the usual prompt's first.
	Candidates []CandidateBody `json:"candidates"`
}

// CandidateBody is one candidate of an attempt and its outcome.
type CandidateBody struct {
	Variant     int          `json:"variant"` // 0: the usual prompt
	Group       int          `json:"group"`   // 1-based result group; 0: no result without error
	Answerable  bool         `json:"answerable"`
	SQL         string       `json:"sql"`
	Explanation string       `json:"explanation"`
	Result      *ResultBody  `json:"result,omitempty"`
	Verdict     *VerdictBody `json:"verdict,omitempty"` // the judge's, when it settled a tie
	Error       string       `json:"error,omitempty"`
}

func newSelectionBody(s *text2sql.Selection) *SelectionBody {
	if s == nil {
		return nil
	}
	b := &SelectionBody{Method: s.Method, Reason: s.Reason, Winner: s.Winner, Votes: s.Votes, Groups: s.Groups, Candidates: []CandidateBody{}}
	for _, c := range s.Candidates {
		cb := CandidateBody{Variant: c.Variant, Group: c.Group, Result: newResultBody(c.Result), Verdict: newVerdictBody(c.Verdict)}
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

func newVerdictBody(v *text2sql.Verdict) *VerdictBody {
	if v == nil {
		return nil
	}
	return &VerdictBody{OK: v.OK, Stage: v.Stage, Reason: v.Reason, Hints: v.Hints}
}

// VerdictBody is a judge's review.
type VerdictBody struct {
	OK     bool           `json:"ok"`
	Stage  text2sql.Stage `json:"stage,omitempty"` // the faulty stage: "retrieval", "plan" or "sql"
	Reason string         `json:"reason,omitempty"`
	Hints  []string       `json:"hints,omitempty"`
}

func newResultBody(r *text2sql.Result) *ResultBody {
	if r == nil {
		return nil
	}
	b := &ResultBody{OK: r.Error == nil, Columns: r.Columns, RowCount: r.RowCount, Truncated: r.Truncated, DurationMS: ms(r.Duration)}
	for _, st := range r.Steps {
		b.Steps = append(b.Steps, ResultStepBody{Database: st.Database, Name: st.Name, SQL: st.SQL, RowCount: st.RowCount, DurationMS: ms(st.Duration)})
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
		b.Error = &SQLErrorBody{Kind: e.Kind, Message: e.Message, Hint: e.Hint, Refused: e.Kind.Refusal()}
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

func newContextBody(c *text2sql.Retrieval) *ContextBody {
	if c == nil {
		return nil
	}
	b := &ContextBody{Tables: []TableBody{}, Items: []ItemBody{}, LowConfidence: c.LowConfidence, BestSimilarity: finite(c.BestSimilarity)}
	for _, t := range c.Tables {
		b.Tables = append(b.Tables, TableBody{Name: t.Name, Reason: t.Why(), Score: finite(t.Score)})
	}
	for _, it := range c.Items {
		b.Items = append(b.Items, ItemBody{ID: it.ID, Kind: it.Kind, Name: itemName(it), Score: finite(it.Score),
			Similarity: finite(it.Similarity), Provenance: string(it.Provenance)})
	}
	if m := c.Match; m != nil {
		b.Match = &MatchBody{ID: m.ID, Similarity: finite(m.Similarity)}
	}
	if r := c.Rerank; r != nil {
		b.Rerank = &RerankBody{Reranker: r.Reranker, ModelCalls: len(r.Calls), Fallback: r.Fallback, Tables: r.Tables, Columns: r.Columns, Ignored: r.Ignored}
	}
	return b
}

func finite(f float64) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return f
}

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

// newAnswerBody converts an answer for a client. err is the error Ask or
// Generate returned with it, already known to be an answer failure (or
// nil).
func newAnswerBody(reqID string, a *text2sql.Answer, err error) *AnswerBody {
	b := &AnswerBody{
		RequestID: reqID, Question: a.Question, Status: a.Status, SQL: a.SQL, Explanation: a.Explanation,
		ReusedExample: a.ReusedExample, Context: newContextBody(a.Retrieval), Result: newResultBody(a.Result),
		Words: a.Words, Chart: chart.For(a.Result, chart.Options{}), Selection: newSelectionBody(a.Selection),
		Attempts: []AttemptBody{}, Usage: a.Trace.Usage, ModelCalls: a.Trace.ModelCalls,
	}
	if a.Retrieval != nil {
		b.LowConfidence = a.Retrieval.LowConfidence
	}
	b.Answerable = a.Status != text2sql.StatusDeclined && a.Status != text2sql.StatusFailed && a.SQL != ""
	for _, at := range a.Attempts {
		ab := AttemptBody{N: at.N, Result: newResultBody(at.Result), Warnings: at.Warnings, Verdict: newVerdictBody(at.Verdict),
			Selection: newSelectionBody(at.Selection)}
		if at.Error != nil {
			ab.Error = at.Error.Error()
		}
		if c := at.Candidate; c != nil {
			ab.SQL, ab.Explanation = c.SQL, c.Explanation
		}
		b.Attempts = append(b.Attempts, ab)
	}
	b.Timings.TotalMS = ms(a.Trace.Duration)
	for _, s := range a.Trace.Steps {
		d := ms(s.Duration)
		switch s.Stage {
		case text2sql.StageRetrieval:
			b.Timings.RetrievalMS += d
		case text2sql.StagePlan:
			b.Timings.PlanMS += d
		case text2sql.StageSQL:
			b.Timings.SQLMS += d
		case text2sql.StageCheck:
			b.Timings.CheckMS += d
		case text2sql.StageExecution:
			b.Timings.ExecutionMS += d
		case text2sql.StageJudge:
			b.Timings.JudgeMS += d
		case text2sql.StageSelection:
			b.Timings.SelectionMS += d
		}
		for _, c := range s.Calls {
			b.Model = c.Model
		}
	}
	if err != nil {
		b.Error = &ErrorDetail{Code: failureCode(err), Message: err.Error()}
		b.Answerable = false
	}
	return b
}

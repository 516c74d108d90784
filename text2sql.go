package text2sql

import (
	"context"
	"encoding/json"
	"time"
)

// Dialect names the SQL dialect of the target database. It decides identifier
// quoting, the functions a prompt may mention and the checks applied.
type Dialect string

// The dialects this module knows.
const (
	DialectSQLite   Dialect = "sqlite"
	DialectPostgres Dialect = "postgres"
	DialectMySQL    Dialect = "mysql"
)

// ItemKind is the kind of a knowledge item: ItemTable, ItemColumn,
// ItemRule, ItemExample or ItemValue. It comes from the knowledge file (the
// section an entry is in, or its "kind" field) and from the schema and data
// (table, column and value items), and is written as "table", "column",
// "rule", "example" or "value" in JSON and YAML. Not to be confused with
// ErrorKind, the kind of an SQL failure.
type ItemKind string

// The knowledge item kinds. Only the question of an example is indexed; its
// SQL travels with the item.
const (
	ItemTable   ItemKind = "table"   // what a table stores, its joins, the questions it answers, synonyms
	ItemColumn  ItemKind = "column"  // meaning, units and range of a column
	ItemRule    ItemKind = "rule"    // a business rule
	ItemExample ItemKind = "example" // a verified question → SQL pair
	ItemValue   ItemKind = "value"   // distinct text values of a low-cardinality column, or the values of a column the question names
)

// Provenance says which searches of the retriever found an item:
// ProvenanceBM25 (the keyword search only), ProvenanceVector (the vector
// search only), ProvenanceBoth (both) or ProvenanceValue (the value
// index). The retriever sets it when it fuses the rankings; in JSON it is
// "bm25", "vector", "bm25+vector" or "value index".
type Provenance string

// The provenances of a retrieved item.
const (
	ProvenanceBM25   Provenance = "bm25"        // found by the BM25 keyword search only
	ProvenanceVector Provenance = "vector"      // found by the vector search only
	ProvenanceBoth   Provenance = "bm25+vector" // found by both searches
	// ProvenanceValue: found by matching the question's words against
	// the cell values of a value index; the item lists the matched values.
	ProvenanceValue Provenance = "value index"
)

// TableReason is why a table is shown to the model: ReasonRetrieved,
// ReasonExample, ReasonJoinPath, ReasonRequired, ReasonWholeSchema or
// ReasonValue. The retriever sets it on each TableRef. In JSON it is
// "retrieved", "join path", "required", "whole schema" or "value match",
// and "via example <id>" for ReasonExample, the id being TableRef.Example.
type TableReason string

// The reasons a table is shown.
const (
	// ReasonRetrieved: an item about the table (the table, one of its
	// columns or values) was retrieved.
	ReasonRetrieved TableReason = "retrieved"
	// ReasonExample: a retrieved verified example's SQL uses the table;
	// TableRef.Example names the example.
	ReasonExample TableReason = "via example"
	// ReasonJoinPath: the table links two shown tables by foreign keys.
	ReasonJoinPath TableReason = "join path"
	// ReasonRequired: the caller asked for it (RetrieveRequest.RequiredTables),
	// e.g. a table a judge found missing.
	ReasonRequired TableReason = "required"
	// ReasonWholeSchema: the whole schema fits the context's budget, so
	// the table is shown though nothing retrieved pointed to it.
	ReasonWholeSchema TableReason = "whole schema"
	// ReasonValue: a cell value of the table matches words of the
	// question (a value index, retriever/valueindex), and that match
	// brought the table in; the matched values are items of kind
	// ItemValue with Provenance ProvenanceValue.
	ReasonValue TableReason = "value match"
)

// ObjectKind is the kind of a PlanObject: ObjectTable, ObjectColumn or
// ObjectValue. The planner reads it from the model's plan (normalising case
// and plurals) or infers it from the object's shape; in JSON it is "table",
// "column" or "value".
type ObjectKind string

// The kinds of a plan object.
const (
	ObjectTable  ObjectKind = "table"
	ObjectColumn ObjectKind = "column"
	ObjectValue  ObjectKind = "value"
)

// Stage names a step of the pipeline. A judge's verdict names one of
// StageRetrieval, StagePlan or StageSQL as the faulty stage.
type Stage string

// The pipeline stages, in order.
const (
	StageRetrieval Stage = "retrieval"
	StagePlan      Stage = "plan"
	StageSQL       Stage = "sql"   // generation of the SQL
	StageCheck     Stage = "check" // deterministic checks of the SQL
	StageExecution Stage = "execution"
	StageJudge     Stage = "judge"
	// StageSelection: the choice among an attempt's candidates
	// (Config.Candidates), after they executed.
	StageSelection Stage = "selection"
	// StageWords: the answer put in words (Config.Narrator).
	StageWords Stage = "words"
)

// Narrator puts an executed answer in words: a short natural-language
// answer beside its rows and SQL. Package summary is the default: words
// without a model for a single value or a small table, a model for the
// rest only when the host lets rows reach it.
//
// Implementations must be safe for concurrent use: a Pipeline shared by
// goroutines (a service) calls it from concurrent runs.
type Narrator interface {
	Narrate(ctx context.Context, req NarrateRequest) (*Narration, error)
}

// NarrateRequest is an answer to put in words.
type NarrateRequest struct {
	Question string
	SQL      string
	Result   *Result // executed, without error
}

// Narration is an answer in words.
type Narration struct {
	Text string
	// Source says how: "deterministic", "model" or "shape" (package summary).
	Source string
	Calls  []ModelCall // the model calls made
}

// NarratorFunc adapts a function to Narrator.
type NarratorFunc func(ctx context.Context, req NarrateRequest) (*Narration, error)

// Narrate calls f.
func (f NarratorFunc) Narrate(ctx context.Context, req NarrateRequest) (*Narration, error) {
	return f(ctx, req)
}

// Retriever finds what a question needs from the knowledge base.
//
// Implementations must be safe for concurrent use: a Pipeline shared by
// goroutines (a service) calls it from concurrent runs.
type Retriever interface {
	Retrieve(ctx context.Context, req RetrieveRequest) (*Retrieval, error)
}

// Planner decomposes a question into a structured plan before SQL is written.
//
// Implementations must be safe for concurrent use: a Pipeline shared by
// goroutines (a service) calls it from concurrent runs.
type Planner interface {
	Plan(ctx context.Context, req PlanRequest) (*Plan, error)
}

// Generator writes SQL for a question from the retrieved context.
//
// Implementations must be safe for concurrent use: a Pipeline shared by
// goroutines (a service) calls it from concurrent runs, and one run calls
// it in parallel for its candidates (Config.Candidates).
type Generator interface {
	Generate(ctx context.Context, req GenerateRequest) (*Candidate, error)
}

// Executor runs one statement as untrusted input. A refused or failing
// statement is data in Result.Error; a Go error means the executor itself
// cannot work (database unreachable, context cancelled).
//
// Implementations must be safe for concurrent use: a Pipeline shared by
// goroutines (a service) calls it from concurrent runs, and one run calls
// it in parallel for its candidates (Config.Candidates).
type Executor interface {
	Execute(ctx context.Context, req ExecuteRequest) (*Result, error)
}

// Guard checks a statement the way an Executor would, without running it.
// It returns nil or a *SQLError with the refusal kind. Knowledge bases use
// it to check verified examples when they are added.
//
// Implementations must be safe for concurrent use: knowledge bases and
// services check statements from several goroutines.
type Guard interface {
	Check(ctx context.Context, sql string) error
}

// Checker runs deterministic checks (no model) on generated SQL. Failure
// runs before execution: a non-nil error goes back to the generator like an
// execution error. Warn runs after a successful execution: its warnings go
// to the judge. The default implementation is package lint.
//
// Implementations must be safe for concurrent use: a Pipeline shared by
// goroutines (a service) calls it from concurrent runs, and one run calls
// it in parallel for its candidates (Config.Candidates).
type Checker interface {
	// Failure returns nil, or one error standing for every reason the SQL
	// cannot be right: unknown tables or columns (with a hint), constructs
	// of another dialect.
	Failure(sql string) *SQLError
	// Warn returns doubts about an executed statement, each "kind: message":
	// integer division in a ratio, NULLs in ORDER BY, an empty result, a
	// LIMIT cutting through ties.
	Warn(ctx context.Context, sql string, res *Result) []string
}

// Judge reviews a whole attempt and says whether it answers the question,
// and if not, which stage is at fault.
//
// Implementations must be safe for concurrent use: a Pipeline shared by
// goroutines (a service) calls it from concurrent runs.
type Judge interface {
	Judge(ctx context.Context, req JudgeRequest) (*Verdict, error)
}

// Selector picks one of several candidates whose results differ, when
// the vote among an attempt's candidates ties (Config.Selector). The
// default implementation, package selector, has a model compare the
// candidates two at a time (pairwise selection, as in CHASE-SQL,
// Pourreza et al. 2024).
//
// Implementations must be safe for concurrent use: a Pipeline shared by
// goroutines (a service) calls it from concurrent runs.
type Selector interface {
	Select(ctx context.Context, req SelectRequest) (*Choice, error)
}

// Model is one chat/completion call to a language model.
//
// Implementations must be safe for concurrent use: every stage that
// holds one calls it from concurrent runs, and a run's candidates call
// it in parallel.
type Model interface {
	Complete(ctx context.Context, req ModelRequest) (*ModelResponse, error)
}

// Embedder turns text into vectors. Name and Dimension identify the vector
// space; both enter the index fingerprint, so changing either rebuilds it.
//
// Implementations must be safe for concurrent use: a retriever embeds
// the queries of concurrent runs.
type Embedder interface {
	// EmbedDocuments returns one vector per text, each of length Dimension().
	EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error)
	// EmbedQuery returns the vector of a search query.
	EmbedQuery(ctx context.Context, text string) ([]float32, error)
	Name() string
	Dimension() int
}

// RetrieverFunc lets a plain function serve as a Retriever.
type RetrieverFunc func(ctx context.Context, req RetrieveRequest) (*Retrieval, error)

// Retrieve calls f.
func (f RetrieverFunc) Retrieve(ctx context.Context, req RetrieveRequest) (*Retrieval, error) {
	return f(ctx, req)
}

// PlannerFunc lets a plain function serve as a Planner.
type PlannerFunc func(ctx context.Context, req PlanRequest) (*Plan, error)

// Plan calls f.
func (f PlannerFunc) Plan(ctx context.Context, req PlanRequest) (*Plan, error) { return f(ctx, req) }

// GeneratorFunc lets a plain function serve as a Generator.
type GeneratorFunc func(ctx context.Context, req GenerateRequest) (*Candidate, error)

// Generate calls f.
func (f GeneratorFunc) Generate(ctx context.Context, req GenerateRequest) (*Candidate, error) {
	return f(ctx, req)
}

// ExecutorFunc lets a plain function serve as an Executor.
type ExecutorFunc func(ctx context.Context, req ExecuteRequest) (*Result, error)

// Execute calls f.
func (f ExecutorFunc) Execute(ctx context.Context, req ExecuteRequest) (*Result, error) {
	return f(ctx, req)
}

// JudgeFunc lets a plain function serve as a Judge.
type JudgeFunc func(ctx context.Context, req JudgeRequest) (*Verdict, error)

// Judge calls f.
func (f JudgeFunc) Judge(ctx context.Context, req JudgeRequest) (*Verdict, error) { return f(ctx, req) }

// SelectorFunc lets a plain function serve as a Selector.
type SelectorFunc func(ctx context.Context, req SelectRequest) (*Choice, error)

// Select calls f.
func (f SelectorFunc) Select(ctx context.Context, req SelectRequest) (*Choice, error) {
	return f(ctx, req)
}

// ModelFunc lets a plain function serve as a Model.
type ModelFunc func(ctx context.Context, req ModelRequest) (*ModelResponse, error)

// Complete calls f.
func (f ModelFunc) Complete(ctx context.Context, req ModelRequest) (*ModelResponse, error) {
	return f(ctx, req)
}

// RetrieveRequest asks for the context of one question.
type RetrieveRequest struct {
	Question string
	// Terms are extra search terms, e.g. a judge's hints on a retry.
	Terms []string
	// RequiredTables are always shown, e.g. tables a judge found missing.
	RequiredTables []string
}

// Item is one retrieved knowledge item.
type Item struct {
	ID     string   `json:"id"` // stable, e.g. "table:students", "example:q3"
	Kind   ItemKind `json:"kind"`
	Text   string   `json:"text"`
	Table  string   `json:"table,omitempty"`  // the table a table/column/value item is about
	Column string   `json:"column,omitempty"` // the column a column/value item is about
	SQL    string   `json:"sql,omitempty"`    // an example's SQL
	// Score is the fused Reciprocal Rank Fusion score: sum of 1/(k+rank) over
	// the rankings that found the item (k=60 by default), so at most 2/61;
	// a reranker, when configured, replaces it with its own relevance.
	Score float64 `json:"score"`
	// Similarity is the cosine similarity of the query and item vectors,
	// in [-1, 1]; 0 when the vector search did not return the item.
	Similarity float64 `json:"similarity"`
	// Provenance says which searches found the item.
	Provenance Provenance `json:"provenance"`
}

// TableRef is a table shown to the model, with why it is shown.
type TableRef struct {
	Name   string      `json:"name"` // as in the schema model, schema-qualified when not in the default schema
	Reason TableReason `json:"reason"`
	// Example is the id of the verified example whose SQL uses the table
	// when Reason is ReasonExample, else empty.
	Example string  `json:"example,omitempty"`
	Score   float64 `json:"score"` // best fused score of an item about this table; 0 when linked
	// Columns are the columns shown when not all are (a wide table shown
	// with its keys and the columns the question touches), as the schema
	// spells them; nil when every column is shown.
	Columns []string `json:"columns,omitempty"`
}

// Why returns the reason as text: "retrieved", "join path", "required",
// "whole schema", "value match", or "via example <id>".
func (t TableRef) Why() string {
	if t.Reason == ReasonExample && t.Example != "" {
		return string(ReasonExample) + " " + t.Example
	}
	return string(t.Reason)
}

// ExampleMatch is a verified example that matches the question closely
// enough for its SQL to be reused without a model call.
type ExampleMatch struct {
	ID       string `json:"id"`
	Question string `json:"question"`
	SQL      string `json:"sql"`
	// Similarity is 1 for a match of the normalised text, else the cosine
	// similarity of the two questions' vectors.
	Similarity float64 `json:"similarity"`
}

// Retrieval is what the retriever found for a question: the retrieved
// context of the prompt. Fields holding it are named Retrieval (not
// Context, which reads as a context.Context); in JSON they stay "context".
type Retrieval struct {
	Question string     `json:"question"`
	Dialect  Dialect    `json:"dialect"`
	Items    []Item     `json:"items"`  // ranked by Score, highest first, within per-kind quotas
	Tables   []TableRef `json:"tables"` // the tables shown, in rank order
	// Schema is the DDL of Tables rendered from the schema model (full
	// column lists, keys and foreign keys), ready for a prompt.
	Schema string `json:"schema"`
	// LowConfidence is set when the best match is weak: the question may
	// not be about this database.
	LowConfidence bool `json:"low_confidence"`
	// BestSimilarity is the highest cosine similarity of any item, in [-1, 1].
	BestSimilarity float64 `json:"best_similarity"`
	// Match is a verified example close enough to reuse, or nil.
	Match *ExampleMatch `json:"match,omitempty"`
	// Rerank is what the retriever's reranker reported about this
	// retrieval: its model calls, whether it fell back to the fused order
	// and what it selected. Nil when no reranker ran or the reranker does
	// not report (see retriever.ReportingReranker).
	Rerank *RerankReport `json:"rerank,omitempty"`
	// Keywords is what a keyword expansion (package retriever/keywords)
	// reported: the terms a model added to the search and its calls. Nil
	// when none ran.
	Keywords *KeywordReport `json:"keywords,omitempty"`
}

// KeywordReport is one keyword expansion run, for the trace. As with
// RerankReport, the pipeline adds Calls to the retrieval step.
type KeywordReport struct {
	// Keywords are the terms added to the search: the question's key
	// phrases and likely synonyms or database words ("churn" →
	// "attrition rate"), as the model wrote them.
	Keywords []string    `json:"keywords,omitempty"`
	Calls    []ModelCall `json:"calls,omitempty"`
	// Fallback is why no keywords were added ("model error: …",
	// "malformed answer: …"), or "". A fallback is not an error: the
	// search goes on with the question alone.
	Fallback string `json:"fallback,omitempty"`
}

// RerankReport is one reranker run, for the trace. The pipeline adds Calls
// to the retrieval step of Answer.Trace, so they count in its usage, in
// ModelCalls and against Config.MaxModelCalls.
type RerankReport struct {
	// Reranker names the implementation, e.g. "llm".
	Reranker string `json:"reranker"`
	// Calls are the model calls made, re-asks included, oldest first.
	Calls []ModelCall `json:"calls,omitempty"`
	// Fallback is why the reranker kept the fused order instead of its
	// own ("malformed answer: …", "model error: …", "timeout after 30s",
	// "empty selection"), or "" when its order was used. A fallback is
	// not an error: the retrieval goes on with the fused order. A
	// reranker working in steps may fall back in a later one only
	// ("column selection: …"): Tables then holds what the earlier steps
	// selected, and their order is used.
	Fallback string `json:"fallback,omitempty"`
	// Tables are the tables the reranker selected, best first, as the
	// candidates spell them. The default retriever shows them first.
	Tables []string `json:"tables,omitempty"`
	// Columns are the columns it selected, "table.column", as the schema
	// spells them.
	Columns []string `json:"columns,omitempty"`
	// Ignored are names the reranker's model answered that are not among
	// the candidates (unknown or misspelt tables and columns), as written;
	// they are never shown.
	Ignored []string `json:"ignored,omitempty"`
}

// Plan is a structured decomposition of a question.
type Plan struct {
	Database    string       `json:"database"`
	Objects     []PlanObject `json:"objects"`
	Instruction []string     `json:"instruction"` // ordered steps: joins, filters, grouping, ordering
	Output      string       `json:"output"`      // the columns and shape of the answer
	Calls       []ModelCall  `json:"calls,omitempty"`
}

// PlanObject is a table, column or value a plan uses.
type PlanObject struct {
	Kind  ObjectKind `json:"kind"`
	Name  string     `json:"name"` // "table" or "table.column"; for a value, the column it filters
	Value string     `json:"value,omitempty"`
}

// PlanRequest asks for a plan.
type PlanRequest struct {
	Question  string
	Retrieval *Retrieval
	Attempts  []Attempt // earlier attempts, oldest first
	Hints     []string  // a judge's hints for this stage
}

// GenerateRequest asks for SQL.
type GenerateRequest struct {
	Question  string
	Retrieval *Retrieval
	Plan      *Plan     // nil when no planner ran
	Attempts  []Attempt // earlier attempts with their errors and verdicts, oldest first
	Hints     []string  // a judge's hints for this stage
	// Variant asks for another version of the same prompt, so that the
	// candidates of one attempt (Config.Candidates) differ: 0 is the usual
	// prompt, k > 0 the k-th other one. A generator should make each
	// variant deterministic; package generator rotates the verified
	// examples by k, asks for another way of working (divide and
	// conquer, for one) and samples at a higher temperature. Never
	// negative.
	Variant int
}

// Candidate is what a generator returns.
type Candidate struct {
	Answerable  bool   `json:"answerable"`
	SQL         string `json:"sql"`
	Explanation string `json:"explanation"`
	// Calls are the model calls made to produce this candidate (one, or two
	// when a malformed answer was re-asked); none when an example was reused.
	Calls []ModelCall `json:"calls,omitempty"`
}

// ExecuteRequest asks an executor to run one statement.
type ExecuteRequest struct {
	SQL string
	// MaxRows caps the rows read; 0 means the executor's default. Reading
	// stops at MaxRows+1 and the result is marked truncated.
	MaxRows int
	// Timeout bounds this one execution; 0 means the executor's default.
	Timeout time.Duration
}

// Result is the outcome of one execution. Error is nil on success.
type Result struct {
	Columns   []string      `json:"columns"`
	Rows      [][]any       `json:"rows"`
	RowCount  int           `json:"row_count"`   // len(Rows)
	Truncated bool          `json:"truncated"`   // more rows existed than the cap
	Duration  time.Duration `json:"duration_ns"` // wall time of this execution
	Error     *SQLError     `json:"error,omitempty"`
	// Steps are the statements run to produce the result when the
	// executor ran others than the one it was given: a catalog of
	// databases (package executor/catalog) runs the part of a query each
	// database holds on that database, then merges. Empty otherwise.
	Steps []ResultStep `json:"steps,omitempty"`
}

// ResultStep is one statement an executor ran on one database of a
// catalog for a result.
type ResultStep struct {
	Database string `json:"database"`
	// Name is the common table expression whose rows the step gave, or ""
	// when the step ran the whole statement.
	Name     string        `json:"name,omitempty"`
	SQL      string        `json:"sql"` // as the database ran it
	RowCount int           `json:"row_count"`
	Duration time.Duration `json:"duration_ns"`
}

// JudgeRequest asks a judge to review an attempt.
type JudgeRequest struct {
	Question  string
	Retrieval *Retrieval
	Plan      *Plan
	Current   Attempt   // the attempt under review
	Attempts  []Attempt // earlier attempts, oldest first
	Warnings  []string  // warnings of deterministic checks
}

// SelectRequest asks a selector to choose among candidates.
type SelectRequest struct {
	Question  string
	Retrieval *Retrieval
	Plan      *Plan // nil when no planner ran
	// Candidates are the attempts to choose from, two or more, each
	// executed without error and with a result unlike the others', in
	// candidate order (the usual prompt's first when it is among them).
	Candidates []Attempt
	// MaxCalls bounds the model calls the selector may make, re-asks
	// included; at least 1.
	MaxCalls int
}

// Choice is a selector's pick.
type Choice struct {
	Index  int         `json:"index"` // into SelectRequest.Candidates
	Reason string      `json:"reason,omitempty"`
	Calls  []ModelCall `json:"calls,omitempty"`
}

// Verdict is a judge's review.
type Verdict struct {
	OK bool `json:"ok"`
	// Stage is the faulty stage when !OK: StageRetrieval, StagePlan or StageSQL.
	Stage  Stage    `json:"stage,omitempty"`
	Reason string   `json:"reason,omitempty"`
	Hints  []string `json:"hints,omitempty"`
	// Terms and Tables guide a new retrieval when Stage is StageRetrieval.
	Terms  []string    `json:"terms,omitempty"`
	Tables []string    `json:"tables,omitempty"`
	Calls  []ModelCall `json:"calls,omitempty"`
}

// Attempt is one pass through generation (and, when it ran, execution and
// judging).
type Attempt struct {
	N         int        `json:"n"` // 1-based
	Plan      *Plan      `json:"plan,omitempty"`
	Candidate *Candidate `json:"candidate,omitempty"`
	Result    *Result    `json:"result,omitempty"`
	Verdict   *Verdict   `json:"verdict,omitempty"`
	// Warnings are the deterministic checks' warnings on the executed SQL.
	Warnings []string `json:"warnings,omitempty"`
	// Selection is how the attempt's SQL was chosen among several
	// candidates (Config.Candidates); nil when only one was generated.
	// Candidate, Result and Verdict are then the winner's.
	Selection *Selection `json:"selection,omitempty"`
	// Error is why this attempt failed before a result: an *OutputError for
	// an unusable model answer, for instance, so errors.Is and errors.As
	// work on it, or the executor's error when it could not run the
	// statement at all. Errors the engine reports for the statement are
	// in Result.Error. Not in this type's JSON (an error has no JSON
	// form); package wire writes its message.
	Error error `json:"-"`
}

// Role is the author of a chat message.
type Role string

// The chat roles.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// Message is one turn of a conversation with a model.
type Message struct {
	Role    Role   `json:"role"`
	Content string `json:"content"`
}

// ModelRequest is one call to a model.
type ModelRequest struct {
	System   string    // system instruction
	Messages []Message // the conversation, oldest first
	// Schema, when set, is a JSON Schema the answer must follow; providers
	// that support structured output enforce it, others get it in the prompt.
	Schema json.RawMessage
	// Temperature in [0, 2]; nil means the provider's default.
	Temperature *float64
	// MaxTokens caps the answer; 0 means the provider's default.
	MaxTokens int
}

// ModelResponse is a model's answer.
type ModelResponse struct {
	Text  string `json:"text"`
	Model string `json:"model"` // the model that answered, as the provider names it
	Usage Usage  `json:"usage"`
	// Attempts is how many requests the provider client sent for this
	// answer, retries included; 0 when the model does not say.
	Attempts int `json:"attempts,omitempty"`
}

// Usage counts tokens.
type Usage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
}

// Add returns the sum of u and v.
func (u Usage) Add(v Usage) Usage {
	return Usage{InputTokens: u.InputTokens + v.InputTokens, OutputTokens: u.OutputTokens + v.OutputTokens}
}

// ModelCall records one model call for the trace.
type ModelCall struct {
	Model    string        `json:"model"`
	Usage    Usage         `json:"usage"`
	Duration time.Duration `json:"duration_ns"` // wall time, retries included
	// Start is when the call was sent; not in JSON. Zero when the stage
	// that made the call did not record it.
	Start time.Time `json:"-"`
	// Attempts is ModelResponse.Attempts: the requests sent, retries
	// included (3 is two retries); 0 when unknown.
	Attempts int `json:"attempts,omitempty"`
	// Prompt is the system instruction and messages sent, for the host's
	// eyes only: services must not return it to clients.
	Prompt string `json:"-"`
}

package text2sql

import (
	"context"
	"errors"
	"fmt"
	"strconv"
)

// Sentinel errors. Errors returned by this module wrap one of these where it
// applies; test with errors.Is.
var (
	// ErrInvalidConfig: a Config or Options value is missing a required
	// part or holds an out-of-range value.
	ErrInvalidConfig = errors.New("text2sql: invalid configuration")
	// ErrNoSQL: a model answer contains no SQL statement. The raw text is on
	// the *OutputError.
	ErrNoSQL = errors.New("text2sql: no SQL found in model output")
	// ErrInvalidOutput: a model answer is malformed (invalid JSON, missing
	// fields). The raw text is on the *OutputError.
	ErrInvalidOutput = errors.New("text2sql: malformed model output")
	// ErrRepairsExhausted: every attempt failed and MaxRepairs is spent.
	// The Answer carries every attempt and the last error.
	ErrRepairsExhausted = errors.New("text2sql: repairs exhausted")
	// ErrBudgetExhausted: the run made Config.MaxModelCalls model calls
	// without an attempt the judge accepted and none that executed.
	ErrBudgetExhausted = errors.New("text2sql: model-call budget exhausted")
	// ErrRefused: a statement was refused by a guard. The *SQLError says why.
	ErrRefused = errors.New("text2sql: statement refused")
	// ErrSchemaTooLarge: even the best-ranked table does not fit in the
	// prompt budget.
	ErrSchemaTooLarge = errors.New("text2sql: schema too large for the prompt budget")
	// ErrModel: a model or embedding provider call failed. See *ModelError.
	ErrModel = errors.New("text2sql: model call failed")
	// ErrEmptyQuestion: the question is empty or only white space.
	ErrEmptyQuestion = errors.New("text2sql: empty question")
	// ErrForbidden: the caller the context carries (identity.PrincipalFrom) may not
	// run statements through this executor, e.g. no database role is
	// mapped to it. The message names the principal, never a credential.
	ErrForbidden = errors.New("text2sql: forbidden for this principal")
	// ErrNilResult is returned, wrapped with the stage's name ("retrieve:
	// …"), when a stage — a Retriever, Planner, Generator, Executor or
	// Judge — returns neither a value nor an error.
	ErrNilResult = errors.New("text2sql: stage returned no result and no error")
	// ErrExecutor wraps the error of an executor that could not work
	// (the database cannot be reached, a connection broke), as
	// Pipeline.Execute and Ask return it: not a statement's refusal or
	// failure, which is Result.Error. A host answers it as "try again
	// later" on every entry point alike.
	ErrExecutor = errors.New("text2sql: executor failed")
)

// ErrorKind classifies an SQL refusal or failure. Kinds are stable strings
// meant for programs: JSON output, exit codes, repair prompts.
type ErrorKind string

// The error kinds. Refusals happen before anything reaches the database.
const (
	KindNotReadOnly        ErrorKind = "not_read_only"       // a write, DDL, SELECT … INTO, locking clause (refusal)
	KindMultipleStatements ErrorKind = "multiple_statements" // more than one statement (refusal)
	KindForbiddenFunction  ErrorKind = "forbidden_function"  // a function not on the allow-list (refusal)
	KindForbiddenStatement ErrorKind = "forbidden_statement" // ATTACH, PRAGMA, VACUUM, COPY, SET, transaction control (refusal)
	KindForbiddenTable     ErrorKind = "forbidden_table"     // a system catalog table or view, such as pg_authid (refusal)
	KindEmpty              ErrorKind = "empty"               // no statement at all (refusal)
	KindDialect            ErrorKind = "dialect"             // a construct of another dialect (refusal)
	KindCrossDatabase      ErrorKind = "cross_database"      // tables of several databases combined in a form a catalog cannot run (refusal)
	KindSyntax             ErrorKind = "syntax"              // the engine cannot parse it
	KindUnknownTable       ErrorKind = "unknown_table"       // no such table or view
	KindUnknownColumn      ErrorKind = "unknown_column"      // no such column
	KindTimeout            ErrorKind = "timeout"             // the time limit was reached
	KindTooLarge           ErrorKind = "too_large"           // a value exceeds the length limit
	KindRuntime            ErrorKind = "runtime"             // any other engine error
)

// Refusal reports whether k is decided before execution (the statement never
// ran), as opposed to an error raised by the engine.
func (k ErrorKind) Refusal() bool {
	switch k {
	case KindNotReadOnly, KindMultipleStatements, KindForbiddenFunction, KindForbiddenStatement, KindForbiddenTable, KindEmpty, KindDialect, KindCrossDatabase:
		return true
	}
	return false
}

// SQLError is a refused or failing statement. It is data: executors return it
// in Result.Error, and the repair loop shows it to the generator.
type SQLError struct {
	Kind    ErrorKind `json:"kind"`
	Message string    `json:"message"`
	// Hint is a suggested fix, e.g. the closest real table name.
	Hint string `json:"hint,omitempty"`
	// SQLState is the engine's SQLSTATE code where it has one (PostgreSQL).
	SQLState string `json:"sqlstate,omitempty"`
}

// Error returns "kind: message", with " (hint: …)" when there is a hint.
func (e *SQLError) Error() string {
	s := string(e.Kind) + ": " + e.Message
	if e.Hint != "" {
		s += " (hint: " + e.Hint + ")"
	}
	return s
}

// Unwrap makes a refusal match ErrRefused.
func (e *SQLError) Unwrap() error {
	if e.Kind.Refusal() {
		return ErrRefused
	}
	return nil
}

// OutputError is a model answer that could not be used. Raw is the text as
// the model returned it, so nothing is lost.
type OutputError struct {
	Raw string
	Err error // ErrNoSQL or ErrInvalidOutput, possibly wrapped with detail
}

// Error returns the cause's message; the raw text is in Raw.
func (e *OutputError) Error() string { return e.Err.Error() }

// Unwrap returns the cause.
func (e *OutputError) Unwrap() error { return e.Err }

// ModelError is a failed provider call. It never holds an API key.
type ModelError struct {
	Provider string // "gemini", "openai"
	// StatusCode is the HTTP status, or 0 when no response arrived. A 200
	// means the response arrived but was unusable (undecodable body,
	// blocked prompt, empty answer).
	StatusCode int
	Message    string
	// Retryable is true for 429 and 5xx responses and for connection
	// failures where no response arrived.
	Retryable bool
	// Timeout is true when the provider client's own time limit for one
	// call (its Options.Timeout, every attempt and retry wait included)
	// ended the call before an answer arrived; Message then names the
	// limit and StatusCode is 0. Such an error also matches
	// context.DeadlineExceeded with errors.Is. A deadline of the caller's
	// context is not reported this way: the caller gets an error wrapping
	// its own ctx.Err().
	Timeout bool
}

// Error returns "provider: HTTP status: message" (no status when no
// response arrived).
func (e *ModelError) Error() string {
	s := e.Provider + ": "
	if e.StatusCode != 0 {
		s += "HTTP " + strconv.Itoa(e.StatusCode) + ": "
	}
	return s + e.Message
}

// Unwrap makes e match ErrModel.
func (e *ModelError) Unwrap() error { return ErrModel }

// Is makes a Timeout error match context.DeadlineExceeded.
func (e *ModelError) Is(target error) bool {
	return e.Timeout && target == context.DeadlineExceeded
}

func invalidConfig(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidConfig}, args...)...)
}

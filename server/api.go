package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/chart"
	"github.com/text2sql-go/text2sql/executor"
	"github.com/text2sql-go/text2sql/wire"
)

// The request and response bodies of the HTTP API (and the structured
// outputs of the MCP tools). They are part of the service's contract,
// described by /openapi.json: fields are only ever added. Durations are in
// milliseconds (float). Prompts, knowledge texts and example SQL are never
// part of them. An answer and a result are package wire's, in its Public
// detail: the one JSON form of answers the command line writes too.

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

// RunResponse is the body of POST /v1/run.
type RunResponse struct {
	RequestID string `json:"request_id"`
	wire.Result
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

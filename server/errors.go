package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/wire"
)

// Code is the stable, machine-readable code of an error response. Codes
// are only ever added; their HTTP statuses do not change.
type Code string

// The error codes, with their HTTP status.
const (
	CodeBadRequest           Code = "bad_request"            // 400: malformed JSON or a missing field
	CodeEmptyQuestion        Code = "empty_question"         // 400: the question is empty or only white space
	CodeUnauthorized         Code = "unauthorized"           // 401: no credentials or bad ones
	CodeForbidden            Code = "forbidden"              // 403: the database grants the principal no role to run statements as
	CodeNotFound             Code = "not_found"              // 404: no such route
	CodeMethodNotAllowed     Code = "method_not_allowed"     // 405: the route exists for another method
	CodeNothingToSave        Code = "nothing_to_save"        // 409: the conversation has no answered data question to save
	CodeBodyTooLarge         Code = "body_too_large"         // 413: the body exceeds the configured limit
	CodeUnsupportedMedia     Code = "unsupported_media_type" // 415: the body is not application/json
	CodeSchemaTooLarge       Code = "schema_too_large"       // 422: the schema does not fit the prompt budget
	CodeRefusedSQL           Code = "refused_sql"            // 422: feedback's SQL does not pass the guard or the deterministic checks
	CodeRateLimited          Code = "rate_limited"           // 429: the principal's budget is spent; see Retry-After
	CodeQuotaExceeded        Code = "quota_exceeded"         // 429: the principal keeps as many saved answers as one may; no waiting helps
	CodeInternal             Code = "internal"               // 500: a bug or an unexpected failure; see the logs
	CodeModelError           Code = "model_error"            // 502: the model provider failed
	CodeAuthUnavailable      Code = "auth_unavailable"       // 503: the identity provider could not be asked
	CodeNotConfigured        Code = "not_configured"         // 503: no model provider is configured
	CodeExecutor             Code = "executor_unavailable"   // 503: the database cannot be reached
	CodeRateLimitUnavailable Code = "rate_limit_unavailable" // 503: the shared rate limiter (Redis) cannot be reached; fails closed
	CodeAuditUnavailable     Code = "audit_unavailable"      // 503: the audit log cannot be written; nothing ran (Config.AuditFailOpen)
	CodeOverloaded           Code = "overloaded"             // 503: this replica is at its cap of concurrent model work (Config.MaxModelWork); see Retry-After
	CodeTimeout              Code = "timeout"                // 504: the request took longer than the limit
)

// Failure codes of an answer: /v1/ask and /v1/generate answer 200 with
// status "failed" and one of these in error.code when the pipeline ran but
// produced no usable SQL.
const (
	CodeRepairsExhausted Code = wire.FailureRepairsExhausted // every attempt failed; see attempts
	CodeBudgetExhausted  Code = wire.FailureBudgetExhausted  // the model-call budget is spent
	CodeNoSQL            Code = wire.FailureNoSQL            // the model's answer held no SQL
	CodeInvalidOutput    Code = wire.FailureInvalidOutput    // the model's answer was malformed
)

// ErrorBody is the body of every error response.
type ErrorBody struct {
	Error     ErrorDetail `json:"error"`
	RequestID string      `json:"request_id"`
}

// ErrorDetail is the code and a human-readable message. Messages may
// change; programs should test the code.
type ErrorDetail struct {
	Code    Code   `json:"code"`
	Message string `json:"message"`
}

var codeStatus = map[Code]int{
	CodeBadRequest: 400, CodeEmptyQuestion: 400, CodeUnauthorized: 401, CodeForbidden: 403, CodeNotFound: 404,
	CodeMethodNotAllowed: 405, CodeNothingToSave: 409, CodeBodyTooLarge: 413, CodeUnsupportedMedia: 415, CodeSchemaTooLarge: 422, CodeRefusedSQL: 422,
	CodeRateLimited: 429, CodeQuotaExceeded: 429, CodeInternal: 500, CodeModelError: 502, CodeAuthUnavailable: 503,
	CodeNotConfigured: 503, CodeExecutor: 503, CodeRateLimitUnavailable: 503, CodeAuditUnavailable: 503, CodeOverloaded: 503, CodeTimeout: 504,
	CodeNotReviewer: 403, CodeVoteQuota: 429,
}

// Status returns the HTTP status of an error response with code c.
func (c Code) Status() int {
	if s, ok := codeStatus[c]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// writeError writes an error response.
func writeError(w http.ResponseWriter, r *http.Request, code Code, msg string) {
	writeJSON(w, code.Status(), ErrorBody{Error: ErrorDetail{Code: code, Message: msg}, RequestID: requestID(r.Context())})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"error":{"code":"internal","message":"cannot encode the response"}}`)
	}
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(len(b)+1))
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

// forbiddenMessage answers a principal the executor has no role for.
const forbiddenMessage = "this principal may not run statements on the database (no role is granted to it)"

// pipelineError maps an error of a request's work that is not an answer
// failure (see failureCode) to an error response code and a message safe
// for clients: the messages name the kind of failure, never a prompt, a
// provider's raw answer or a key.
func pipelineError(err error) (Code, string) {
	if code, msg, ok := partFailure(err); ok {
		return code, msg
	}
	var me *text2sql.ModelError
	switch {
	case errors.Is(err, text2sql.ErrEmptyQuestion):
		return CodeEmptyQuestion, "the question is empty"
	case errors.Is(err, text2sql.ErrSchemaTooLarge):
		return CodeSchemaTooLarge, "even the best-matching table does not fit in the prompt budget"
	case errors.As(err, &me) && me.Timeout:
		return CodeTimeout, "the model provider did not answer within the time limit of a model call"
	case errors.Is(err, context.DeadlineExceeded):
		return CodeTimeout, "the request took longer than the time limit"
	case errors.As(err, &me):
		msg := "the model provider failed"
		if me.StatusCode != 0 {
			msg += " (HTTP " + strconv.Itoa(me.StatusCode) + ")"
		}
		if me.Retryable {
			msg += "; retry later"
		}
		return CodeModelError, msg
	case errors.Is(err, text2sql.ErrModel):
		return CodeModelError, "the model provider failed"
	case errors.Is(err, text2sql.ErrInvalidConfig):
		return CodeNotConfigured, "the service lacks what this request needs: a model provider or a database"
	}
	return CodeInternal, "internal error; the request id identifies it in the service's logs"
}

// failureCode returns the answer-failure code of err, or "" when err is
// not an answer failure.
func failureCode(err error) Code { return Code(wire.FailureCode(err)) }

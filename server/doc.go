// Package server is the text2sql service: an net/http handler with a JSON
// API, a web page and an MCP server, all on one code path with one guard.
//
// New returns an http.Handler a host mounts or serves (ListenAndServe
// adds graceful shutdown). Its routes:
//
//	GET  /health        status, model names, index fingerprint, knowledge counts (no auth)
//	POST /v1/generate   {question} → SQL, explanation, retrieved context; nothing runs
//	POST /v1/run        {sql, question_id?} → rows through the guard; answer-key match
//	POST /v1/ask        {question} → the full answer with its attempts and verdicts
//	GET  /openapi.json  the OpenAPI 3.1 description (no auth)
//	GET  /              the web page (embedded; no build step)
//	     /mcp           MCP over streamable HTTP: ask, generate_sql, run_sql,
//	                    describe_schema, list_examples (same auth)
//
// # One guard
//
// Every statement any entry point runs goes through the configured
// Pipeline: /v1/run and the MCP tool run_sql call Pipeline.Execute,
// /v1/ask and the MCP tool ask call Pipeline.Ask, which executes through
// the same method. A statement refused by the library is refused with the
// same error kind over HTTP and MCP.
//
// # Authentication, limits, audit
//
// An Authenticator (one method) turns a request into a Principal:
// NewStaticTokens (constant-time comparison), NewSupabase (a
// Supabase-compatible auth server, with a short positive cache), NewJWT
// (JWTs verified against a JWKS URL), or NoAuth for local use only. The
// principal reaches the pipeline through the request context
// (identity.PrincipalFrom) and every AuditEvent. Requests that reach the
// pipeline are rate-limited per principal (RateLimit; 429 with
// Retry-After). Browsers on other origins need Config.AllowedOrigins.
//
// # Who can teach the service
//
// With Config.Feedback, POST /v1/feedback takes votes on answers. Only a
// reviewer's vote (Config.Reviewer, ParseReviewers) or approval makes an
// example reused for everyone; anyone else's up-vote is a proposal that
// serves only its author until a reviewer approves it at
// POST /v1/examples/{id}/approve (GET /v1/examples lists the queue), and a
// down-vote by anyone else flags a trusted example without taking it out
// of use. Reviews are audited with the reviewer and the votes.
//
// # What never leaves the service
//
// Prompts (text2sql.ModelCall.Prompt), knowledge texts, tokens and keys
// are never in a response or a log line: responses are built from the
// documented bodies only (wire.Answer, RunResponse, …), and logs record
// the method, path, status, duration, principal id and error code of each
// request, plus the audit events (which hold the question and the SQL).
package server

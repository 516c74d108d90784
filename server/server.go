package server

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/cors"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/accuracy"
	"github.com/text2sql-go/text2sql/chart"
	"github.com/text2sql-go/text2sql/feedback"
	"github.com/text2sql-go/text2sql/identity"
	"github.com/text2sql-go/text2sql/knowledge"
	"github.com/text2sql-go/text2sql/schema"
	"github.com/text2sql-go/text2sql/wire"
)

// Defaults of Config.
const (
	DefaultMaxBodyBytes   = 64 << 10
	DefaultRequestTimeout = 2 * time.Minute
	// MaxQuestionRunes bounds a question's length; longer ones are refused
	// with 400 bad_request before any model call.
	MaxQuestionRunes = 4000
)

// Config assembles the service. Zero values mean the documented defaults;
// Pipeline and Auth are required.
type Config struct {
	// Pipeline answers questions and runs SQL; required. Every statement a
	// route or an MCP tool runs goes through Pipeline.Execute or
	// Pipeline.Ask: the pipeline's executor is the one guard.
	Pipeline *text2sql.Pipeline
	// Auth authenticates every /v1/* and /mcp request; required. Use
	// NoAuth() explicitly for local use without authentication.
	Auth Authenticator
	// ForwardBearerToken puts each authenticated request's own bearer
	// token in the context of its pipeline calls
	// (identity.WithBearerToken), for an executor that calls the
	// database's API as the caller (executor/postgrest with Supabase
	// access tokens). Off by default: the token then never leaves the
	// authenticator.
	ForwardBearerToken bool
	// LocalPrincipal is who MCP calls over stdio or an in-memory transport
	// act for (they carry no credentials): nil means {ID: "local",
	// Method: "stdio"}. text2sql mcp --as NAME sets it, so a database
	// role or policy chosen per principal can be tried locally.
	LocalPrincipal *Principal
	// RateLimit limits requests per principal in this process; the zero
	// value is 60 per minute.
	RateLimit RateLimit
	// Limiter, when set, replaces the in-memory limiter of RateLimit: a
	// limiter shared by several replicas (redisstore.Store.Limiter) keeps
	// the limit exact across them.
	Limiter Limiter
	// Cache, when its Store is set, answers a repeated question without a
	// model call (see Cache); the zero value turns it off.
	Cache Cache
	// RightsVersion names what, beside the principal, decides what a
	// caller reads: who statements run as and what chooses it (the CLI
	// puts a hash of --run-as, --rls-claims, --allow-roles and the maps
	// of --run-as map:FILE and --login-map as loaded). Cached answers and
	// saved answers' rows are reused only under the same one (rights.go).
	RightsVersion string
	// AllowedOrigins are the origins browsers may call the API from
	// (CORS), e.g. "https://quiz.example.org"; "*" allows any. Empty means
	// same-origin only (no CORS headers).
	AllowedOrigins []string
	// Auditor receives every executed or refused statement; nil means
	// SlogAuditor on Logger.
	Auditor Auditor
	// AuditFailOpen gives up the guarantee that every statement is
	// audited: when the Auditor fails, statements run and rows are
	// delivered anyway, the failure only logged. By default audit fails
	// closed: an Auditor that cannot be reached (AuditPinger) means
	// nothing runs, a record that cannot be written means its rows or
	// vote outcome are withheld, both answered 503 audit_unavailable,
	// and /health is not ready.
	AuditFailOpen bool
	// MaxConcurrentAsks caps the questions this replica answers at once
	// (ask, generate, conversation messages, the MCP tools ask and
	// generate_sql; cached answers are not counted): each holds model
	// calls, connections and memory. Beyond it a question is answered
	// 503 overloaded with Retry-After: 1 at once. 0 means no cap.
	MaxConcurrentAsks int
	// Logger receives one record per request and the audit events; nil
	// means slog.Default(). Records never hold credentials, keys or
	// prompts.
	Logger *slog.Logger
	// MaxBodyBytes bounds request bodies; 0 means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// RequestTimeout bounds the pipeline work of one request; 0 means
	// DefaultRequestTimeout.
	RequestTimeout time.Duration
	// AnswerKeys, when set, lets /v1/run and the MCP tool run_sql check a
	// result against a question's answer key (question_id).
	AnswerKeys AnswerKeys
	// Feedback, when set, serves POST /v1/feedback: up-votes become
	// verified examples, down-votes flag them (package feedback). The
	// host wraps the pipeline's retriever in a feedback.Retriever so that
	// an up-voted answer is reused before the index is rebuilt.
	Feedback *feedback.Recorder
	// Reviewer reports whether a principal reviews examples: its votes
	// make examples trusted for everyone, and it may use /v1/examples
	// (ParseReviewers builds one). Nil means nobody over HTTP; the host
	// reviews with the CLI. Other principals' up-votes serve only
	// themselves until reviewed (package feedback).
	Reviewer func(p *Principal) bool
	// Conversations, when set, serves the conversation routes (package
	// conversation): routing, follow-up rewriting, a window per
	// conversation.
	Conversations *Conversations
	// AnswerMode is how results are compared with an answer key; "" means
	// accuracy.ModeSpider (rows as a multiset, any column order, in sequence
	// when the key has a top-level ORDER BY).
	AnswerMode accuracy.Mode
	// Info is shown by GET /health.
	Info Info
	// Readiness are the probes GET /health runs (their results reused for
	// a second): by name, e.g. "database" and "redis". When one fails,
	// /health answers 503 so a load balancer stops routing to this
	// replica; GET /health/live stays 200 (liveness).
	Readiness map[string]Probe
	// Schema is described by the MCP tool describe_schema; nil makes the
	// tool report that no schema is configured.
	Schema *schema.Database
	// Examples are listed by the MCP tool list_examples.
	Examples []knowledge.Example
	// DisableMCP turns off the MCP endpoint /mcp.
	DisableMCP bool
	// DisablePage turns off the web page at GET /.
	DisablePage bool
	// MCPSessionTimeout closes MCP sessions idle this long; 0 means 30
	// minutes.
	MCPSessionTimeout time.Duration
	// Observers are told about every request, pipeline run, statement,
	// rate-limit rejection, cache lookup and MCP tool call (see Observer;
	// server/metrics and server/tracing implement it). Nil entries are
	// ignored.
	Observers []Observer
	// Metrics, when set, serves GET /metrics to authenticated callers
	// (metrics.Metrics.Handler); nil answers 404 there.
	Metrics http.Handler
}

// Info describes the deployment for GET /health.
type Info struct {
	Version     string           // the service's version, free text
	Models      []string         // model names, e.g. "gemini-2.5-flash"
	Dialect     text2sql.Dialect // the target database's dialect
	Fingerprint string           // the retrieval index fingerprint (retriever.Stats.Fingerprint)
	Embedder    string           // the embedder's name
	Reranker    string           // the reranker's name; "" when there is none
	Documents   int              // indexed documents
	// Knowledge counts documents per kind (retriever.Stats.Kinds).
	Knowledge map[text2sql.ItemKind]int
	// Login is the database login's standing (LoginOf the executor); nil
	// when the executor cannot tell.
	Login *Login
}

// AnswerKeys maps a question id to its answer-key SQL.
type AnswerKeys interface {
	// AnswerKey returns the answer key of the question id, or ok false
	// when it has none. An error means the keys cannot be read.
	AnswerKey(ctx context.Context, questionID string) (sql string, ok bool, err error)
}

// AnswerKeyMap is an in-memory AnswerKeys: question id → answer-key SQL.
type AnswerKeyMap map[string]string

// AnswerKey implements AnswerKeys.
func (m AnswerKeyMap) AnswerKey(_ context.Context, id string) (string, bool, error) {
	s, ok := m[id]
	return s, ok, nil
}

// ExampleAnswerKeys returns the verified examples as answer keys, keyed
// by example id: the quiz setting, where each quiz question is an example.
func ExampleAnswerKeys(examples []knowledge.Example) AnswerKeyMap {
	m := AnswerKeyMap{}
	for _, e := range examples {
		m[e.ID] = e.SQL
	}
	return m
}

// service is the state shared by the HTTP handlers and the MCP tools.
type service struct {
	cfg     Config
	log     *slog.Logger
	lim     Limiter // nil: unlimited
	audit   Auditor
	convs   sessions
	timeout time.Duration
	health  HealthResponse
	ready   readiness
	obs     observers
	asks    chan struct{} // one token per question being answered; nil: no cap

	// inflight maps the nonce the HTTP layer gives an authenticated MCP
	// request to its principal, for the MCP tools.
	inflight sync.Map // string → *callInfo
}

type callInfo struct {
	p     *Principal
	reqID string
	token string // the request's bearer token, with ForwardBearerToken
}

// New returns the service's HTTP handler:
//
//	GET  /health        readiness: status, probes, models, index fingerprint, knowledge counts (no auth)
//	GET  /health/live   liveness (no auth)
//	POST /v1/generate   {question} → SQL, explanation, retrieved context; nothing runs
//	POST /v1/run        {sql, question_id?} → rows through the guard, answer-key match
//	POST /v1/ask        {question} → the full answer with its repair trail
//	     /v1/conversations, /v1/saved  conversations and saved answers (Config.Conversations)
//	POST /v1/feedback   a vote on an answer; GET /v1/examples, POST /v1/examples/{id}/approve|reject for reviewers (Config.Feedback)
//	GET  /openapi.json  the OpenAPI 3.1 description of these routes (no auth)
//	GET  /metrics       Config.Metrics (same auth; 404 without it)
//	GET  /              the web page (no auth; it asks for a token)
//	     /mcp           the MCP server over streamable HTTP (same auth)
//
// Errors are JSON ErrorBody values with a stable Code. Every response has
// an X-Request-Id header (the client's, when it sent a valid one).
// Errors: a missing Pipeline or Auth, an unknown AnswerMode.
func New(cfg Config) (http.Handler, error) {
	s, err := newService(cfg)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", s.handleHealth)
	mux.HandleFunc("GET /health/live", handleLive)
	mux.HandleFunc("GET /openapi.json", serveOpenAPI)
	v1 := func(h http.HandlerFunc) http.Handler {
		return s.authenticate(s.rateLimit(s.jsonBody(h)))
	}
	mux.Handle("GET /metrics", s.authenticate(http.HandlerFunc(s.handleMetrics)))
	mux.Handle("POST /v1/generate", v1(handle(s, func(ctx context.Context, req *QuestionRequest) (any, *apiError) {
		return s.generate(ctx, "POST /v1/generate", req.Question)
	})))
	mux.Handle("POST /v1/run", v1(handle(s, func(ctx context.Context, req *RunRequest) (any, *apiError) {
		return s.run(ctx, "POST /v1/run", req.SQL, string(req.QuestionID))
	})))
	mux.Handle("POST /v1/ask", v1(handle(s, func(ctx context.Context, req *QuestionRequest) (any, *apiError) {
		return s.ask(ctx, "POST /v1/ask", req.Question)
	})))
	mux.Handle("POST /v1/feedback", v1(handle(s, func(ctx context.Context, req *FeedbackRequest) (any, *apiError) {
		return s.feedback(ctx, "POST /v1/feedback", req)
	})))
	mux.Handle("POST /v1/conversations", v1(handle(s, func(ctx context.Context, _ *struct{}) (any, *apiError) {
		return s.startConversation(ctx)
	})))
	mux.Handle("POST /v1/conversations/{id}/messages", v1(func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		handle(s, func(ctx context.Context, req *MessageRequest) (any, *apiError) {
			return s.message(ctx, id, req)
		})(w, r)
	}))
	// Routes without a body: the same authentication and rate limit.
	v1get := func(f func(ctx context.Context, r *http.Request) (any, *apiError)) http.Handler {
		return s.authenticate(s.rateLimit(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ctx, cancel := s.work(r.Context())
			defer cancel()
			b, aerr := f(ctx, r)
			s.reply(w, r, b, aerr)
		})))
	}
	mux.Handle("GET /v1/conversations", v1get(func(ctx context.Context, _ *http.Request) (any, *apiError) {
		return s.listConversations(ctx)
	}))
	mux.Handle("DELETE /v1/conversations/{id}", v1get(func(ctx context.Context, r *http.Request) (any, *apiError) {
		return s.deleteConversation(ctx, r.PathValue("id"))
	}))
	mux.Handle("POST /v1/conversations/{id}/saved", v1(func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		handle(s, func(ctx context.Context, req *SaveRequest) (any, *apiError) {
			return s.saveAnswer(ctx, id, req)
		})(w, r)
	}))
	mux.Handle("GET /v1/saved", v1get(func(ctx context.Context, _ *http.Request) (any, *apiError) {
		return s.listSaved(ctx)
	}))
	mux.Handle("DELETE /v1/saved/{id}", v1get(func(ctx context.Context, r *http.Request) (any, *apiError) {
		return s.deleteSaved(ctx, r.PathValue("id"))
	}))
	s.exampleRoutes(mux, v1get)
	if !cfg.DisablePage {
		mux.Handle("GET /{$}", pageHandler())
		mux.Handle("GET /assets/", pageHandler())
	}
	if !cfg.DisableMCP {
		ms, err := s.mcpServer()
		if err != nil {
			return nil, err
		}
		timeout := cfg.MCPSessionTimeout
		if timeout == 0 {
			timeout = 30 * time.Minute
		}
		mh := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return ms }, &mcp.StreamableHTTPOptions{
			SessionTimeout:      timeout,
			MaxRequestBodyBytes: s.maxBody(),
		})
		mux.Handle("/mcp", s.authenticate(s.mcpCall(s.mcpOwned(timeout, mh))))
	}
	var h http.Handler = s.route(mux)
	if len(cfg.AllowedOrigins) > 0 {
		h = cors.New(cors.Options{
			AllowedOrigins: cfg.AllowedOrigins,
			AllowedMethods: []string{http.MethodGet, http.MethodPost, http.MethodDelete},
			AllowedHeaders: []string{"Authorization", "Content-Type", "X-Request-Id", "Mcp-Session-Id", "Mcp-Protocol-Version", "Last-Event-ID"},
			ExposedHeaders: []string{"X-Request-Id", "Retry-After", "Mcp-Session-Id"},
			MaxAge:         600,
		}).Handler(h)
	}
	if IsNoAuth(cfg.Auth) {
		s.log.Warn("authentication is off (no-auth mode): every request acts as the principal \"local\"; use it only on a loopback address")
	}
	return s.observe(h), nil
}

func newService(cfg Config) (*service, error) {
	if cfg.Pipeline == nil {
		return nil, fmt.Errorf("%w: server: Pipeline is required", text2sql.ErrInvalidConfig)
	}
	if cfg.Auth == nil {
		return nil, fmt.Errorf("%w: server: Auth is required (use server.NoAuth() for local use without authentication)", text2sql.ErrInvalidConfig)
	}
	if cfg.AnswerMode != "" {
		if _, err := accuracy.ParseMode(string(cfg.AnswerMode)); err != nil {
			return nil, fmt.Errorf("%w: server: %v", text2sql.ErrInvalidConfig, err)
		}
	}
	if cfg.MaxBodyBytes < 0 || cfg.RequestTimeout < 0 || cfg.MCPSessionTimeout < 0 || cfg.MaxConcurrentAsks < 0 {
		return nil, fmt.Errorf("%w: server: negative MaxBodyBytes, RequestTimeout, MCPSessionTimeout or MaxConcurrentAsks", text2sql.ErrInvalidConfig)
	}
	s := &service{cfg: cfg, log: cfg.Logger, lim: cfg.Limiter, audit: cfg.Auditor, timeout: cfg.RequestTimeout}
	if s.lim == nil && !cfg.RateLimit.Unlimited {
		s.lim = newLimiter(cfg.RateLimit)
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.audit == nil {
		s.audit = SlogAuditor{Logger: s.log}
	}
	if s.timeout == 0 {
		s.timeout = DefaultRequestTimeout
	}
	s.obs = newObservers(cfg.Observers, s.log)
	s.health = HealthResponse{
		Status: "ok", Version: cfg.Info.Version, Models: append([]string{}, cfg.Info.Models...), Dialect: cfg.Info.Dialect,
		Index:     IndexInfo{Fingerprint: cfg.Info.Fingerprint, Embedder: cfg.Info.Embedder, Reranker: cmp.Or(cfg.Info.Reranker, "none"), Documents: cfg.Info.Documents},
		Knowledge: map[string]int{}, Auth: authName(cfg.Auth), MCP: !cfg.DisableMCP, Login: cfg.Info.Login,
	}
	for k, n := range cfg.Info.Knowledge {
		s.health.Knowledge[string(k)] = n
	}
	s.ready = readiness{probes: auditProbe(cfg.Readiness, s.audit, cfg.AuditFailOpen), log: s.log}
	if cfg.MaxConcurrentAsks > 0 {
		s.asks = make(chan struct{}, cfg.MaxConcurrentAsks)
	}
	return s, nil
}

func authName(a Authenticator) string {
	switch a.(type) {
	case noAuth:
		return "none"
	case *StaticTokens:
		return "static"
	case *Supabase:
		return "supabase"
	case *JWT:
		return "jwt"
	}
	return "custom"
}

func (s *service) maxBody() int64 {
	if s.cfg.MaxBodyBytes > 0 {
		return s.cfg.MaxBodyBytes
	}
	return DefaultMaxBodyBytes
}

// routes lists the patterns New registers for the API (not the page or
// /mcp), for the OpenAPI test.
var routes = []string{"GET /health", "GET /health/live", "GET /openapi.json", "GET /metrics", "POST /v1/generate", "POST /v1/run", "POST /v1/ask", "POST /v1/feedback", "POST /v1/conversations", "POST /v1/conversations/{id}/messages",
	"GET /v1/conversations", "DELETE /v1/conversations/{id}", "POST /v1/conversations/{id}/saved", "GET /v1/saved", "DELETE /v1/saved/{id}"}

// route serves mux, answering unmatched requests with JSON 404 and 405
// errors instead of the mux's plain text.
func (s *service) route(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, pattern := mux.Handler(r); pattern != "" {
			if ri := info(r.Context()); ri != nil {
				ri.route = pattern
			}
			mux.ServeHTTP(w, r)
			return
		}
		rec := &headerRecorder{h: http.Header{}}
		mux.ServeHTTP(rec, r)
		switch rec.status {
		case http.StatusMethodNotAllowed:
			if allow := rec.h.Get("Allow"); allow != "" {
				w.Header().Set("Allow", allow)
			}
			s.fail(w, r, CodeMethodNotAllowed, "method "+r.Method+" is not allowed here")
		case http.StatusMovedPermanently, http.StatusPermanentRedirect, http.StatusTemporaryRedirect, http.StatusFound:
			// The mux redirects to the cleaned path.
			for k, v := range rec.h {
				w.Header()[k] = v
			}
			w.WriteHeader(rec.status)
		default:
			s.fail(w, r, CodeNotFound, "no such route")
		}
	})
}

// headerRecorder captures the status and headers of the mux's own
// not-found, method-not-allowed and redirect answers.
type headerRecorder struct {
	h      http.Header
	status int
}

func (h *headerRecorder) Header() http.Header         { return h.h }
func (h *headerRecorder) Write(b []byte) (int, error) { return len(b), nil }
func (h *headerRecorder) WriteHeader(code int) {
	if h.status == 0 {
		h.status = code
	}
}

// reqInfo is what the observing middleware learns about a request from
// the inner handlers.
type reqInfo struct {
	id        string
	principal string
	code      Code
	route     string // the pattern that matched, for the observers
}

type reqInfoKey struct{}

func requestID(ctx context.Context) string {
	if ri, ok := ctx.Value(reqInfoKey{}).(*reqInfo); ok {
		return ri.id
	}
	return ""
}

func info(ctx context.Context) *reqInfo {
	ri, _ := ctx.Value(reqInfoKey{}).(*reqInfo)
	return ri
}

var requestIDRe = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

func newID() string {
	var b [12]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// statusWriter records the status and size of a response.
type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

// Flush lets the MCP handler stream server-sent events.
func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the underlying writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// observe assigns the request id, recovers panics and logs one record per
// request: method, path (without the query), status, duration, bytes,
// principal id, error code. Never headers, bodies or queries.
func (s *service) observe(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := r.Header.Get("X-Request-Id")
		if !requestIDRe.MatchString(id) {
			id = newID()
		}
		ri := &reqInfo{id: id}
		r = r.WithContext(s.obs.startRequest(context.WithValue(r.Context(), reqInfoKey{}, ri), r))
		w.Header().Set("X-Request-Id", id)
		w.Header().Set("X-Content-Type-Options", "nosniff")
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.log.LogAttrs(r.Context(), slog.LevelError, "panic", slog.String("request_id", id),
					slog.String("panic", fmt.Sprint(v)), slog.String("stack", string(debug.Stack())))
				if sw.status == 0 {
					writeError(sw, r, CodeInternal, "internal error; the request id identifies it in the service's logs")
				}
			}
			level := slog.LevelInfo
			if sw.status >= 500 {
				level = slog.LevelError
			}
			attrs := []slog.Attr{
				slog.String("request_id", id), slog.String("method", r.Method), slog.String("path", r.URL.Path),
				slog.Int("status", sw.status), slog.Float64("duration_ms", ms(time.Since(start))), slog.Int64("bytes", sw.bytes),
			}
			if ri.principal != "" {
				attrs = append(attrs, slog.String("principal", ri.principal))
			}
			if ri.code != "" {
				attrs = append(attrs, slog.String("code", string(ri.code)))
			}
			s.log.LogAttrs(r.Context(), level, "request", attrs...)
			s.obs.endRequest(r.Context(), RequestEvent{Route: ri.route, Method: r.Method, Status: sw.status, Code: ri.code, Duration: time.Since(start)})
		}()
		next.ServeHTTP(sw, r)
	})
}

// fail writes an error response and notes its code for the log.
func (s *service) fail(w http.ResponseWriter, r *http.Request, code Code, msg string) {
	if ri := info(r.Context()); ri != nil {
		ri.code = code
	}
	writeError(w, r, code, msg)
}

// authenticate lets a request through only with a principal, which it
// puts in the request context.
func (s *service) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := s.cfg.Auth.Authenticate(r)
		switch {
		case err == nil && p != nil && p.ID != "":
		case err == nil || errors.Is(err, ErrUnauthenticated):
			w.Header().Set("WWW-Authenticate", `Bearer realm="text2sql"`)
			s.fail(w, r, CodeUnauthorized, "a valid bearer token is required")
			return
		default:
			s.log.LogAttrs(r.Context(), slog.LevelError, "authentication failed", slog.String("request_id", requestID(r.Context())),
				slog.String("error", err.Error()))
			s.fail(w, r, CodeAuthUnavailable, "the identity provider could not be reached; try again")
			return
		}
		if ri := info(r.Context()); ri != nil {
			ri.principal = p.ID
		}
		ctx := identity.WithPrincipal(r.Context(), p)
		if tok, ok := BearerToken(r); ok && s.cfg.ForwardBearerToken {
			ctx = identity.WithBearerToken(ctx, tok)
		}
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// rateLimit spends one token of the principal's budget.
func (s *service) rateLimit(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, _ := identity.PrincipalFrom(r.Context())
		route := ""
		if ri := info(r.Context()); ri != nil {
			route = ri.route
		}
		if aerr := s.spend(r.Context(), route, p.ID); aerr != nil {
			if aerr.retryAfter > 0 {
				w.Header().Set("Retry-After", strconv.Itoa(aerr.retryAfter))
			}
			s.fail(w, r, aerr.code, aerr.msg)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// spend takes one request of principal id's budget for route; the error
// is a 429 (with the seconds to wait) or, when the limiter cannot decide,
// a 503.
func (s *service) spend(ctx context.Context, route, id string) *apiError {
	if s.lim == nil {
		return nil
	}
	aerr := s.allow(ctx, id)
	if aerr != nil {
		s.obs.rateLimited(ctx, route, aerr.code)
	}
	return aerr
}

func (s *service) allow(ctx context.Context, id string) *apiError {
	// The limiter's store gets a short time of its own: a hung store must
	// not hold the request until the client gives up.
	ctx, cancel := context.WithTimeout(ctx, limiterTimeout)
	defer cancel()
	ok, wait, err := s.lim.Allow(ctx, id)
	switch {
	case err != nil:
		s.log.LogAttrs(ctx, slog.LevelError, "rate limiter unavailable", slog.String("request_id", requestID(ctx)), slog.String("error", err.Error()))
		return &apiError{code: CodeRateLimitUnavailable, msg: "the rate limiter cannot be reached; try again", retryAfter: 1}
	case !ok:
		secs := retryAfterSeconds(wait)
		return &apiError{code: CodeRateLimited, msg: fmt.Sprintf("rate limit reached; retry in %d s", secs), retryAfter: secs}
	}
	return nil
}

// jsonBody requires a JSON body and bounds its size.
func (s *service) jsonBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if err != nil || mt != "application/json" {
			s.fail(w, r, CodeUnsupportedMedia, "the body must be application/json")
			return
		}
		if r.ContentLength > s.maxBody() {
			s.fail(w, r, CodeBodyTooLarge, fmt.Sprintf("the body exceeds %d bytes", s.maxBody()))
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, s.maxBody())
		next.ServeHTTP(w, r)
	})
}

// decode reads one JSON object into v, answering 400 or 413 itself.
func (s *service) decode(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(r.Body)
	err := dec.Decode(v)
	if err == nil {
		if _, terr := dec.Token(); terr != io.EOF {
			err = errors.New("unexpected data after the JSON object")
		}
	}
	if err == nil {
		return true
	}
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		s.fail(w, r, CodeBodyTooLarge, fmt.Sprintf("the body exceeds %d bytes", mbe.Limit))
		return false
	}
	msg := "the body is not a valid JSON object"
	var ute *json.UnmarshalTypeError
	if errors.As(err, &ute) && ute.Field != "" {
		msg = fmt.Sprintf("field %q has the wrong type", ute.Field)
	}
	s.fail(w, r, CodeBadRequest, msg)
	return false
}

// work returns the context of pipeline work: the request's, bounded by
// the timeout. The principal is already in it.
func (s *service) work(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.timeout)
}

func (s *service) handleMetrics(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Metrics == nil {
		s.fail(w, r, CodeNotFound, "this service serves no metrics here")
		return
	}
	s.cfg.Metrics.ServeHTTP(w, r)
}

// apiError is an error outcome of an operation shared by HTTP and MCP.
type apiError struct {
	code       Code
	msg        string
	retryAfter int // seconds, for a 429 or a 503 worth retrying soon; 0 otherwise
}

func (e *apiError) Error() string { return string(e.code) + ": " + e.msg }

func checkQuestion(q string) *apiError {
	if strings.TrimSpace(q) == "" {
		return &apiError{code: CodeEmptyQuestion, msg: "the question is empty"}
	}
	if utf8.RuneCountInString(q) > MaxQuestionRunes {
		return &apiError{code: CodeBadRequest, msg: fmt.Sprintf("the question is longer than %d characters", MaxQuestionRunes)}
	}
	return nil
}

// handle is the handler of a JSON endpoint: it decodes the body into a
// Req (replying 400 itself when it cannot), runs f on it under the
// service's work limits, and replies with f's body or its error.
func handle[Req any](s *service, f func(ctx context.Context, req *Req) (any, *apiError)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req Req
		if !s.decode(w, r, &req) {
			return
		}
		ctx, cancel := s.work(r.Context())
		defer cancel()
		b, aerr := f(ctx, &req)
		s.reply(w, r, b, aerr)
	}
}

func (s *service) reply(w http.ResponseWriter, r *http.Request, body any, aerr *apiError) {
	if aerr != nil {
		if aerr.retryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(aerr.retryAfter))
		}
		s.fail(w, r, aerr.code, aerr.msg)
		return
	}
	writeJSON(w, http.StatusOK, body)
}

// generate runs Pipeline.Generate for route (the HTTP route or MCP tool).
func (s *service) generate(ctx context.Context, route, question string) (*wire.Answer, *apiError) {
	return s.cachedAnswer(ctx, "generate", route, question, nil, func() (*text2sql.Answer, error) {
		ans, err := s.cfg.Pipeline.Generate(ctx, question)
		s.obs.pipelineRun(ctx, RunEvent{Route: route, Answer: ans, Err: err})
		return ans, err
	})
}

// ask runs Pipeline.Ask and audits every statement it ran.
func (s *service) ask(ctx context.Context, source, question string) (*wire.Answer, *apiError) {
	return s.cachedAnswer(ctx, "ask", source, question,
		func(b *wire.Answer) error { return s.recordDelivery(ctx, source, question, "cached", b) },
		func() (*text2sql.Answer, error) { return s.runAsk(ctx, source, question) })
}

// cachedAnswer answers question for source (the route or tool) through
// the answer cache under kind ("generate" or "ask"): a cached body, shown
// to hit when hit is not nil (its error withholds the body), else the
// body of run's answer under the cap of concurrent questions, remembered
// when it is not an error.
func (s *service) cachedAnswer(ctx context.Context, kind, source, question string, hit func(*wire.Answer) error, run func() (*text2sql.Answer, error)) (*wire.Answer, *apiError) {
	if aerr := checkQuestion(question); aerr != nil {
		return nil, aerr
	}
	key, cacheable := s.cacheKey(ctx, kind, question)
	if cacheable {
		b := s.cached(ctx, key)
		s.obs.cache(ctx, source, b != nil)
		if b != nil {
			b.Question = question
			if hit != nil {
				if err := hit(b); err != nil {
					return nil, s.failed(ctx, err)
				}
			}
			return b, nil
		}
	}
	release, aerr := s.askSlot()
	if aerr != nil {
		return nil, aerr
	}
	defer release()
	ans, err := run()
	b, aerr := s.answer(ctx, ans, err)
	if cacheable && aerr == nil && !s.personal(ctx, b) {
		s.remember(ctx, key, b)
	}
	return b, aerr
}

// runAsk runs Pipeline.Ask for source, observed, with every executed
// statement audited. Under fail-closed audit nothing runs while the
// auditor cannot be reached, and an answer whose statements could not
// all be audited is withheld: the error is then errAuditUnavailable.
func (s *service) runAsk(ctx context.Context, source, question string) (*text2sql.Answer, error) {
	if err := s.auditReady(ctx); err != nil {
		return nil, err
	}
	ans, err := s.cfg.Pipeline.Ask(ctx, question)
	s.obs.pipelineRun(ctx, RunEvent{Route: source, Answer: ans, Err: err})
	if ans == nil {
		return ans, err
	}
	var aerr error
	audited := false
	for _, at := range ans.Attempts {
		if at.Result != nil && at.Candidate != nil {
			aerr = cmp.Or(aerr, s.record(ctx, source, question, "", at.Candidate.SQL, at.Result))
			audited = true
		}
	}
	if !audited && ans.Result != nil {
		// A reused verified example runs without an attempt record.
		aerr = s.record(ctx, source, question, "", ans.SQL, ans.Result)
	}
	if aerr != nil {
		return nil, aerr
	}
	return ans, err
}

// answer converts the outcome of Ask or Generate.
func (s *service) answer(ctx context.Context, ans *text2sql.Answer, err error) (*wire.Answer, *apiError) {
	if err != nil && (ans == nil || failureCode(err) == "") {
		return nil, s.failed(ctx, err)
	}
	b := wire.NewAnswer(ans, err, wire.Public)
	b.RequestID = requestID(ctx)
	if b.Error != nil {
		b.Error.Code = string(failureCode(err))
	}
	return b, nil
}

// run executes one statement through Pipeline.Execute, audits it and,
// with a question id, checks it against the answer key.
func (s *service) run(ctx context.Context, source, sql, questionID string) (*RunResponse, *apiError) {
	if err := s.auditReady(ctx); err != nil {
		return nil, s.failed(ctx, err)
	}
	res, err := s.cfg.Pipeline.Execute(ctx, sql)
	if err != nil {
		return nil, s.failed(ctx, err)
	}
	if err := s.record(ctx, source, "", questionID, sql, res); err != nil {
		return nil, s.failed(ctx, err)
	}
	out := &RunResponse{RequestID: requestID(ctx), Result: *wire.NewResult(res, wire.Public), Chart: chart.For(res, chart.Options{})}
	if questionID != "" && s.cfg.AnswerKeys != nil {
		s.match(ctx, out, sql, questionID, res)
	}
	return out, nil
}

// feedback records a verdict on an answer (Config.Feedback) as the
// authenticated principal, a reviewer's when Config.Reviewer says so, and
// audits it: Outcome "feedback up" or "feedback down" with what it did in
// Message, or the refusal's kind.
func (s *service) feedback(ctx context.Context, route string, req *FeedbackRequest) (*FeedbackResponse, *apiError) {
	if s.cfg.Feedback == nil {
		return nil, &apiError{code: CodeNotConfigured, msg: "feedback is not enabled on this service"}
	}
	if err := s.auditReady(ctx); err != nil {
		return nil, s.failed(ctx, err)
	}
	fb := feedback.Feedback{Question: req.Question, SQL: req.SQL, Verdict: feedback.Verdict(req.Verdict), Note: req.Note, Reviewer: s.isReviewer(ctx)}
	e := AuditEvent{Time: time.Now(), RequestID: requestID(ctx), Source: route, Question: req.Question, SQL: req.SQL, Outcome: "feedback " + req.Verdict}
	if p, ok := identity.PrincipalFrom(ctx); ok {
		fb.Principal, e.Principal, e.Method = p.ID, p.ID, p.Method
	}
	out, err := s.cfg.Feedback.Record(ctx, fb)
	var serr *text2sql.SQLError
	var aerr *apiError
	switch {
	case errors.Is(err, feedback.ErrInvalid):
		aerr = &apiError{code: CodeBadRequest, msg: strings.TrimPrefix(err.Error(), "feedback: ")}
	case errors.Is(err, feedback.ErrQuota):
		e.Outcome, e.Message = "vote_quota", err.Error()
		aerr = &apiError{code: CodeVoteQuota, msg: strings.TrimPrefix(err.Error(), "feedback: ")}
	case errors.As(err, &serr):
		e.Outcome, e.Message = string(serr.Kind), serr.Message
		aerr = &apiError{code: CodeRefusedSQL, msg: "the SQL cannot become a verified example: " + serr.Error()}
	case err != nil:
		return nil, s.failed(ctx, err)
	}
	if aerr != nil && aerr.code == CodeBadRequest {
		return nil, aerr // nothing to audit: no statement was judged
	}
	if out != nil {
		e.Message = voteMessage(out)
	}
	if err := s.audited(ctx, e); err != nil {
		// The vote stands (the auditor was reached just before), but its
		// outcome is not reported as accepted.
		return nil, s.failed(ctx, err)
	}
	if aerr != nil {
		return nil, aerr
	}
	r := &FeedbackResponse{RequestID: requestID(ctx), Verdict: req.Verdict, Added: out.Added, Conflict: out.Conflict, Flagged: out.Flagged}
	if out.Example != nil {
		r.ExampleID, r.Status = out.Example.ID, string(out.Example.Status)
	}
	return r, nil
}

// match fills out.Matched from the answer key of questionID, when it has
// one.
func (s *service) match(ctx context.Context, out *RunResponse, sql, questionID string, res *text2sql.Result) {
	key, ok, err := s.cfg.AnswerKeys.AnswerKey(ctx, questionID)
	if err != nil {
		s.log.LogAttrs(ctx, slog.LevelError, "answer keys unavailable", slog.String("request_id", requestID(ctx)), slog.String("error", err.Error()))
		return
	}
	if !ok {
		return
	}
	f := false
	if res.Error != nil {
		out.Matched, out.MatchSummary = &f, "the statement was refused or failed"
		return
	}
	// Both the key and the candidate run through the pipeline's guard.
	exec := text2sql.ExecutorFunc(func(ctx context.Context, req text2sql.ExecuteRequest) (*text2sql.Result, error) {
		return s.cfg.Pipeline.Execute(ctx, req.SQL)
	})
	chk, err := accuracy.CheckAnswer(ctx, exec, sql, key, s.cfg.AnswerMode)
	if err != nil {
		s.log.LogAttrs(ctx, slog.LevelError, "answer key check failed", slog.String("request_id", requestID(ctx)),
			slog.String("question_id", questionID), slog.String("error", err.Error()))
		return
	}
	out.Matched, out.MatchSummary = &chk.Matched, chk.Summary
}

// recordDelivery audits rows delivered without a statement: from the
// answer cache (outcome "cached") or a saved answer whose data version
// is unchanged ("saved"); an error (fail-closed audit) withholds them.
func (s *service) recordDelivery(ctx context.Context, source, question, outcome string, b *wire.Answer) error {
	if b.Result == nil {
		return nil
	}
	e := AuditEvent{Time: time.Now(), RequestID: requestID(ctx), Source: source, Question: question,
		SQL: b.SQL, Outcome: outcome, RowCount: b.Result.RowCount, Truncated: b.Result.Truncated}
	if p, ok := identity.PrincipalFrom(ctx); ok {
		e.Principal, e.Method = p.ID, p.Method
	}
	return s.audited(ctx, e)
}

// record sends one statement to the auditor; an error (fail-closed
// audit) withholds its result.
func (s *service) record(ctx context.Context, source, question, questionID, sql string, res *text2sql.Result) error {
	e := AuditEvent{Time: time.Now(), RequestID: requestID(ctx), Source: source, Question: question, QuestionID: questionID,
		SQL: sql, Outcome: "ok", RowCount: res.RowCount, Truncated: res.Truncated, Duration: res.Duration}
	if p, ok := identity.PrincipalFrom(ctx); ok {
		e.Principal, e.Method = p.ID, p.Method
	}
	se := StatementEvent{Source: source, Duration: res.Duration}
	if res.Error != nil {
		e.Outcome, e.Message = string(res.Error.Kind), res.Error.Message
		se.Kind = res.Error.Kind
	}
	s.obs.statement(ctx, se)
	return s.audited(ctx, e)
}

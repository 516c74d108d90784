package main

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/spf13/cobra"

	"github.com/text2sql-go/text2sql/accuracy"
	"github.com/text2sql-go/text2sql/conversation"
	convsqlite "github.com/text2sql-go/text2sql/conversation/sqlite"
	"github.com/text2sql-go/text2sql/provider"
	"github.com/text2sql-go/text2sql/server"
	"github.com/text2sql-go/text2sql/server/redisstore"
)

// serveFlags are serve's own flags. Each has an environment variable,
// used when the flag is not given.
type serveFlags struct {
	addr            string
	auth            string
	tokensFile      string
	supabaseURL     string
	jwksURL         string
	jwtIssuer       string
	jwtAudience     string
	rate            int
	rateWindow      time.Duration
	origins         string
	maxBody         int64
	requestTimeout  time.Duration
	shutdownTimeout time.Duration
	answerKeys      string
	exampleKeys     bool
	answerMode      string
	auditDB         string
	auditDSN        string
	allowUnaudited  bool // --allow-unaudited: the audit fails open
	maxAsks         int  // --concurrent-asks
	noMCP           bool
	noPage          bool
	logFormat       string
	redis           string
	redisPrefix     string
	cacheTTL        time.Duration
	conversationsDB string // --conversations-db: the conversation store
	metricsAddr     string
	metricsOnAPI    bool
	reviewers       string // --reviewers: who may make examples trusted

	// Per-principal quotas: conversations (past it the principal's own
	// least recently used goes) and saved answers (past it 429).
	conversationQuota int
	savedAnswerQuota  int

	modelConns int // --model-conns: options.modelConns
}

// envFlags maps flag names to the environment variables that give their
// default.
var envFlags = map[string]string{
	"addr":             "TEXT2SQL_ADDR",
	"auth":             "TEXT2SQL_AUTH",
	"tokens-file":      "TEXT2SQL_TOKENS_FILE",
	"supabase-url":     "SUPABASE_URL",
	"jwks-url":         "TEXT2SQL_JWKS_URL",
	"jwt-issuer":       "TEXT2SQL_JWT_ISSUER",
	"jwt-audience":     "TEXT2SQL_JWT_AUDIENCE",
	"rate":             "TEXT2SQL_RATE",
	"rate-window":      "TEXT2SQL_RATE_WINDOW",
	"origins":          "TEXT2SQL_ORIGINS",
	"max-body":         "TEXT2SQL_MAX_BODY",
	"request-timeout":  "TEXT2SQL_REQUEST_TIMEOUT",
	"shutdown-timeout": "TEXT2SQL_SHUTDOWN_TIMEOUT",
	"answer-keys":      "TEXT2SQL_ANSWER_KEYS",
	"answer-mode":      "TEXT2SQL_ANSWER_MODE",
	"audit-db":         "TEXT2SQL_AUDIT_DB",
	"audit-dsn":        "TEXT2SQL_AUDIT_DSN",
	"allow-unaudited":  "TEXT2SQL_ALLOW_UNAUDITED",
	"concurrent-asks":  "TEXT2SQL_CONCURRENT_ASKS",
	"conversations-db": "TEXT2SQL_CONVERSATIONS_DB",
	"log-format":       "TEXT2SQL_LOG_FORMAT",
	"redis":            "TEXT2SQL_REDIS",
	"redis-prefix":     "TEXT2SQL_REDIS_PREFIX",
	"metrics-on-api":   "TEXT2SQL_METRICS_ON_API",
	"cache-ttl":        "TEXT2SQL_CACHE_TTL",
	"metrics-addr":     "TEXT2SQL_METRICS_ADDR",
	"reviewers":        "TEXT2SQL_REVIEWERS",

	// The per-principal quotas.
	"conversation-quota": "TEXT2SQL_CONVERSATION_QUOTA",
	"saved-answer-quota": "TEXT2SQL_SAVED_ANSWER_QUOTA",

	"model-conns": "TEXT2SQL_MODEL_CONNS",
}

func serveCmd(o *options) *cobra.Command {
	f := &serveFlags{}
	c := &cobra.Command{
		Use:   "serve",
		Short: "Serve the HTTP API, the web page and MCP over HTTP",
		Long: `Serve the HTTP API (/v1/generate, /v1/run, /v1/ask, /health,
/health/live, /openapi.json, /metrics with --metrics-on-api), the web page (/) and the MCP server (/mcp) for the database
the shared flags name (--db or --demo, --knowledge, --provider, ...).

Authentication (--auth, required unless its settings are in the environment):
  static    bearer tokens: TEXT2SQL_TOKENS="name:token,name2:token2" or
            --tokens-file (one name:token per line)
  supabase  a Supabase-compatible auth server: --supabase-url (SUPABASE_URL)
            and SUPABASE_ANON_KEY
  jwt       JWTs signed by a key of --jwks-url, checked against --jwt-issuer
            and --jwt-audience
  none      no authentication; only on a loopback address

Metrics and traces: --metrics-addr or --metrics-on-api serve Prometheus
metrics; OpenTelemetry traces are exported over OTLP when the standard
OTEL_* variables configure it (OTEL_EXPORTER_OTLP_ENDPOINT, ...).

Flags that name an environment variable in their help can come from it.
Without a model provider, /v1/generate and /v1/ask answer only questions
matching a verified example, and /v1/run works as usual.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := applyEnv(cmd); err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			logger, err := newLogger(cmd.ErrOrStderr(), f.logFormat)
			if err != nil {
				return err
			}
			auth, closeAuth, err := f.authenticator(logger)
			if err != nil {
				return err
			}
			defer closeAuth()
			o.openExamples = true // POST /v1/feedback records into the store
			if f.modelConns < 1 {
				return &exitErr{code: exitUsage, err: errors.New("--model-conns must be positive")}
			}
			o.modelConns = f.modelConns
			cfg, closeCfg, err := openService(ctx, o, f, logger)
			if err != nil {
				return err
			}
			defer closeCfg()
			cfg.Auth = auth
			mh, flush, err := f.telemetry(ctx, &cfg, o.provider, logger)
			if err != nil {
				return err
			}
			defer flush()
			h, err := server.New(cfg)
			if err != nil {
				return err
			}
			return f.serveBoth(ctx, h, mh, logger)
		},
	}
	fl := c.Flags()
	fl.StringVar(&f.addr, "addr", "127.0.0.1:8080", "listen address (TEXT2SQL_ADDR); use :8080 or 0.0.0.0:8080 to listen on every interface")
	fl.StringVar(&f.auth, "auth", "", "authentication: static, supabase, jwt or none (TEXT2SQL_AUTH); default: the one whose settings are in the environment")
	fl.StringVar(&f.tokensFile, "tokens-file", "", "static tokens file, one name:token per line (TEXT2SQL_TOKENS_FILE); or TEXT2SQL_TOKENS=name:token,...")
	fl.StringVar(&f.supabaseURL, "supabase-url", "", "Supabase project URL (SUPABASE_URL); the anon key comes from SUPABASE_ANON_KEY")
	fl.StringVar(&f.jwksURL, "jwks-url", "", "JWKS URL for --auth jwt (TEXT2SQL_JWKS_URL)")
	fl.StringVar(&f.jwtIssuer, "jwt-issuer", "", "required iss claim for --auth jwt (TEXT2SQL_JWT_ISSUER)")
	fl.StringVar(&f.jwtAudience, "jwt-audience", "", "required aud claim for --auth jwt (TEXT2SQL_JWT_AUDIENCE)")
	fl.IntVar(&f.rate, "rate", server.DefaultRateRequests, "requests per --rate-window per principal; 0 turns rate limiting off (TEXT2SQL_RATE)")
	fl.DurationVar(&f.rateWindow, "rate-window", server.DefaultRateWindow, "rate-limit window (TEXT2SQL_RATE_WINDOW)")
	fl.StringVar(&f.origins, "origins", "", "comma-separated origins allowed to call the API from a browser, e.g. https://quiz.example.org (TEXT2SQL_ORIGINS)")
	fl.Int64Var(&f.maxBody, "max-body", server.DefaultMaxBodyBytes, "request body limit in bytes (TEXT2SQL_MAX_BODY)")
	fl.DurationVar(&f.requestTimeout, "request-timeout", server.DefaultRequestTimeout, "time limit of one request's pipeline work (TEXT2SQL_REQUEST_TIMEOUT)")
	fl.DurationVar(&f.shutdownTimeout, "shutdown-timeout", 30*time.Second, "wait for in-flight requests on SIGINT/SIGTERM (TEXT2SQL_SHUTDOWN_TIMEOUT)")
	fl.StringVar(&f.answerKeys, "answer-keys", "", "YAML or JSON file mapping question ids to answer-key SQL, for /v1/run's question_id (TEXT2SQL_ANSWER_KEYS)")
	fl.BoolVar(&f.exampleKeys, "examples-as-answer-keys", false, "use the knowledge base's verified examples as answer keys, keyed by example id")
	fl.StringVar(&f.answerMode, "answer-mode", "spider", "answer-key comparison: spider, bird or strict (TEXT2SQL_ANSWER_MODE)")
	fl.StringVar(&f.auditDB, "audit-db", "", "SQLite file to append the audit log to, table text2sql_audit (TEXT2SQL_AUDIT_DB); default: the log")
	fl.StringVar(&f.auditDSN, "audit-dsn", "", "PostgreSQL database to append the audit log to, table text2sql_audit, shared by replicas; its login needs only INSERT once the table exists (TEXT2SQL_AUDIT_DSN)")
	fl.BoolVar(&f.allowUnaudited, "allow-unaudited", false, "give up the audit guarantee: when the --audit-db/--audit-dsn database cannot be written, run statements and deliver rows anyway, unaudited (TEXT2SQL_ALLOW_UNAUDITED); default: refuse them with 503 audit_unavailable")
	fl.IntVar(&f.maxAsks, "concurrent-asks", defaultMaxAsks, "questions this replica answers at once (ask, generate, conversation messages, MCP), each holding model calls and connections; beyond it 503 overloaded with Retry-After; 0: no cap (TEXT2SQL_CONCURRENT_ASKS)")
	fl.BoolVar(&f.noMCP, "no-mcp", false, "do not serve MCP at /mcp")
	fl.BoolVar(&f.noPage, "no-page", false, "do not serve the web page at /")
	fl.StringVar(&f.logFormat, "log-format", "text", "log format on standard error: text or json (TEXT2SQL_LOG_FORMAT)")
	fl.StringVar(&f.redis, "redis", "", "Redis URL (redis://host:6379/0) shared by replicas: the rate limit is counted there, exact across them, and answers are cached there (TEXT2SQL_REDIS); default: the limit in this process's memory, no cache")
	fl.StringVar(&f.redisPrefix, "redis-prefix", redisstore.DefaultPrefix, "start of every --redis key, so deployments sharing one Redis keep their limits and answers apart (TEXT2SQL_REDIS_PREFIX)")
	fl.StringVar(&f.conversationsDB, "conversations-db", "", "SQLite file keeping the conversations of /v1/conversations and the saved answers of /v1/saved across restarts (TEXT2SQL_CONVERSATIONS_DB); default: conversations in memory only, no saved answers")
	fl.IntVar(&f.conversationQuota, "conversation-quota", server.DefaultConversationQuota, "conversations one principal keeps; past it that principal's least recently used one goes, never another's (TEXT2SQL_CONVERSATION_QUOTA)")
	fl.IntVar(&f.savedAnswerQuota, "saved-answer-quota", convsqlite.DefaultMaxAnswersPerOwner, "saved answers one principal keeps; past it saving a new question answers 429 quota_exceeded (TEXT2SQL_SAVED_ANSWER_QUOTA)")
	fl.DurationVar(&f.cacheTTL, "cache-ttl", server.DefaultCacheTTL, "lifetime of a cached answer with --redis; 0 turns the cache off (TEXT2SQL_CACHE_TTL)")
	fl.StringVar(&f.metricsAddr, "metrics-addr", "", "serve Prometheus metrics at /metrics on this separate address, without authentication, e.g. 127.0.0.1:9090 (TEXT2SQL_METRICS_ADDR)")
	fl.StringVar(&f.reviewers, "reviewers", "", "who reviews examples from POST /v1/feedback (their up-votes are trusted for everyone; /v1/examples): comma-separated principal ids, claim:NAME=VALUE, role:ROLE (the --run-as role) (TEXT2SQL_REVIEWERS); default: only the host, with text2sql examples approve")
	fl.IntVar(&f.modelConns, "model-conns", provider.DefaultConns, "model calls at once (requests served at once, times --candidates) that connections to the model provider and the hosted embedder are kept open for; more calls at once open a new connection each (TEXT2SQL_MODEL_CONNS)")
	fl.BoolVar(&f.metricsOnAPI, "metrics-on-api", false, "serve Prometheus metrics at GET /metrics on the API address, behind its authentication (TEXT2SQL_METRICS_ON_API)")
	return c
}

// applyEnv sets every flag not given on the command line from its
// environment variable, when that is set.
func applyEnv(cmd *cobra.Command) error {
	for name, v := range envFlags {
		fl := cmd.Flags().Lookup(name)
		if fl == nil || fl.Changed {
			continue
		}
		val, ok := os.LookupEnv(v)
		if !ok || val == "" {
			continue
		}
		if err := fl.Value.Set(val); err != nil {
			return &exitErr{code: exitUsage, err: fmt.Errorf("%s: %v", v, err)}
		}
	}
	return nil
}

func newLogger(w io.Writer, format string) (*slog.Logger, error) {
	switch format {
	case "", "text":
		return slog.New(slog.NewTextHandler(w, nil)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, nil)), nil
	}
	return nil, &exitErr{code: exitUsage, err: fmt.Errorf("unknown log format %q: use text or json", format)}
}

// authenticator builds the Authenticator --auth names, and a function
// releasing it.
func (f *serveFlags) authenticator(logger *slog.Logger) (server.Authenticator, func(), error) {
	noop := func() {}
	usage := func(format string, a ...any) (server.Authenticator, func(), error) {
		return nil, noop, &exitErr{code: exitUsage, err: fmt.Errorf(format, a...)}
	}
	mode := f.auth
	if mode == "" {
		switch {
		case os.Getenv("TEXT2SQL_TOKENS") != "" || f.tokensFile != "":
			mode = "static"
		case f.supabaseURL != "":
			mode = "supabase"
		case f.jwksURL != "":
			mode = "jwt"
		default:
			return usage("choose authentication with --auth static|supabase|jwt|none (none only on a loopback address)")
		}
	}
	switch mode {
	case "none":
		if !loopback(f.addr) {
			return usage("--auth none is for local use: listen on a loopback address (e.g. --addr 127.0.0.1:8080), not %q", f.addr)
		}
		return server.NoAuth(), noop, nil
	case "static":
		spec := os.Getenv("TEXT2SQL_TOKENS")
		if f.tokensFile != "" {
			b, err := os.ReadFile(f.tokensFile)
			if err != nil {
				return nil, noop, err
			}
			spec = string(b)
		}
		m, err := server.ParseStaticTokens(spec)
		if err != nil {
			return usage("%v", err)
		}
		a, err := server.NewStaticTokens(m)
		if err != nil {
			return usage("%v (set TEXT2SQL_TOKENS=name:token,… or --tokens-file FILE, one name:token per line)", err)
		}
		return a, noop, nil
	case "supabase":
		a, err := server.NewSupabase(server.SupabaseOptions{URL: f.supabaseURL, AnonKey: os.Getenv("SUPABASE_ANON_KEY")})
		if err != nil {
			return usage("%v (set --supabase-url or SUPABASE_URL, and SUPABASE_ANON_KEY)", err)
		}
		return a, noop, nil
	case "jwt":
		a, err := server.NewJWT(server.JWTOptions{JWKSURL: f.jwksURL, Issuer: f.jwtIssuer, Audience: f.jwtAudience, Logger: logger})
		if err != nil {
			return usage("%v", err)
		}
		if f.jwtIssuer == "" {
			logger.Warn("--auth jwt without --jwt-issuer: tokens of any issuer signed by these keys are accepted")
		}
		return a, func() { a.Close() }, nil
	}
	return usage("unknown --auth %q: use static, supabase, jwt or none", mode)
}

// loopback reports whether addr listens on a loopback address only.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// auditConns bounds the connections of one replica to a PostgreSQL audit
// database.
const auditConns = 4

// defaultMaxAsks is serve's cap of questions answered at once: 200
// uncapped asks held 455 file descriptors, so 64 stays well inside the
// default limit of 1,024.
const defaultMaxAsks = 64

// openService opens the environment, its model included, and builds its
// serviceConfig; the function it returns releases both.
func openService(ctx context.Context, o *options, f *serveFlags, logger *slog.Logger) (server.Config, func(), error) {
	env, err := o.open(ctx, true)
	if err != nil {
		return server.Config{}, nil, err
	}
	cfg, release, err := serviceConfig(ctx, o, f, env, logger)
	if err != nil {
		env.Close()
		return server.Config{}, nil, err
	}
	return cfg, func() { release(); env.Close() }, nil
}

// serviceConfig builds the server configuration shared by serve and mcp
// (everything but Auth), and a function releasing what it opened. f may
// be nil (mcp): no answer keys, no audit database, no rate limit.
func serviceConfig(ctx context.Context, o *options, f *serveFlags, env *env, logger *slog.Logger) (server.Config, func(), error) {
	noop := func() {}
	p := env.pipeline
	if p == nil {
		var err error
		if p, err = o.newPipeline(env); err != nil {
			return server.Config{}, noop, err
		}
		logger.Warn("no model provider is configured: questions are answered only when they match a verified example; set GEMINI_API_KEY or OPENAI_API_KEY (or --provider openai --base-url ...)")
	}
	st := env.retriever.Stats()
	cfg := server.Config{
		Pipeline: p,
		Logger:   logger,
		Info: server.Info{
			Version: version(), Dialect: env.executor.Schema().Dialect, Fingerprint: st.Fingerprint,
			Embedder: st.Embedder, Reranker: env.reranker, Documents: st.Documents, Knowledge: st.Kinds, Login: server.LoginOf(env.executor),
		},
		Schema:   env.executor.Schema(),
		Examples: env.kb.Examples,
		Feedback: env.feedback,
		// Conversations route with the pipeline's model; words from
		// rows stay deterministic (rows never reach the model).
		Conversations: &server.Conversations{Options: conversation.Options{Model: env.model}},
		RightsVersion: o.caller.rightsVersion(),
	}
	if v, ok := env.executor.(server.DataVersioner); ok {
		// A saved answer is reused from its rows while the data is
		// unchanged; without a version its SQL runs again.
		cfg.Conversations.DataVersion = v.DataVersion
	}
	if n, ok := env.model.(interface{ Name() string }); ok && n.Name() != "" {
		cfg.Info.Models = []string{n.Name()}
	}
	if f == nil {
		cfg.RateLimit.Unlimited = true
		cfg.DisablePage = true
		return cfg, noop, nil
	}
	cfg.RateLimit = server.RateLimit{Requests: f.rate, Window: f.rateWindow, Unlimited: f.rate == 0}
	if f.rate < 0 {
		return cfg, noop, &exitErr{code: exitUsage, err: errors.New("--rate must be 0 (off) or positive")}
	}
	if f.conversationQuota < 1 || f.savedAnswerQuota < 1 {
		return cfg, noop, &exitErr{code: exitUsage, err: errors.New("--conversation-quota and --saved-answer-quota must be positive")}
	}
	cfg.Conversations.MaxPerPrincipal = f.conversationQuota
	for _, origin := range strings.Split(f.origins, ",") {
		if origin = strings.TrimSpace(origin); origin != "" {
			cfg.AllowedOrigins = append(cfg.AllowedOrigins, origin)
		}
	}
	cfg.MaxBodyBytes, cfg.RequestTimeout = f.maxBody, f.requestTimeout
	if f.maxAsks < 0 {
		return cfg, noop, &exitErr{code: exitUsage, err: errors.New("--concurrent-asks must be 0 (no cap) or positive")}
	}
	cfg.MaxConcurrentAsks, cfg.AuditFailOpen = f.maxAsks, f.allowUnaudited
	cfg.DisableMCP, cfg.DisablePage = f.noMCP, f.noPage
	mode, err := accuracy.ParseMode(f.answerMode)
	if err != nil {
		return cfg, noop, &exitErr{code: exitUsage, err: err}
	}
	cfg.AnswerMode = mode
	if cfg.Reviewer, err = reviewers(o, f.reviewers); err != nil {
		return cfg, noop, err
	}
	switch {
	case f.answerKeys != "" && f.exampleKeys:
		return cfg, noop, &exitErr{code: exitUsage, err: errors.New("give --answer-keys or --examples-as-answer-keys, not both")}
	case f.answerKeys != "":
		keys, err := loadAnswerKeys(f.answerKeys)
		if err != nil {
			return cfg, noop, err
		}
		cfg.AnswerKeys = keys
	case f.exampleKeys:
		cfg.AnswerKeys = server.ExampleAnswerKeys(env.kb.Examples)
	}
	closeRedis, err := shared(ctx, o, f, env, &cfg, logger)
	if err != nil {
		return cfg, noop, err
	}
	closeAudit, err := auditor(ctx, f, &cfg, env.executor, logger)
	if err != nil {
		closeRedis()
		return cfg, noop, err
	}
	closeConversations := noop
	if f.conversationsDB != "" {
		st, err := convsqlite.Open(f.conversationsDB, convsqlite.Options{MaxConversationsPerOwner: f.conversationQuota, MaxAnswersPerOwner: f.savedAnswerQuota})
		if err != nil {
			closeAudit()
			closeRedis()
			return cfg, noop, err
		}
		cfg.Conversations.Store, closeConversations = st, func() { st.Close() }
	}
	return cfg, func() { closeConversations(); closeAudit(); closeRedis() }, nil
}

// shared sets the readiness probes of cfg and, with --redis, the rate
// limit and answer cache shared by replicas; it returns a function
// releasing the Redis pool.
func shared(ctx context.Context, o *options, f *serveFlags, env *env, cfg *server.Config, logger *slog.Logger) (func(), error) {
	cfg.Readiness = map[string]server.Probe{}
	if x, ok := env.executor.(interface{ DB() *sql.DB }); ok {
		cfg.Readiness["database"] = server.PingProbe(x.DB())
	}
	if f.redis == "" {
		return func() {}, nil
	}
	if f.cacheTTL < 0 {
		return nil, &exitErr{code: exitUsage, err: errors.New("--cache-ttl must be 0 (off) or positive")}
	}
	rs, err := redisstore.New(f.redis, redisstore.Options{Prefix: f.redisPrefix, Logger: logger})
	if err != nil {
		return nil, &exitErr{code: exitUsage, err: fmt.Errorf("--redis: %w", err)}
	}
	pctx, cancel := context.WithTimeout(ctx, redisConnectTimeout)
	defer cancel()
	if err := rs.Ping(pctx); err != nil {
		// A replica started during an outage serves once Redis is back,
		// like one that was running: no crash loop.
		logger.Warn("Redis cannot be reached yet: the rate-limited routes answer 503 and the cache is skipped until it can", slog.String("error", err.Error()))
	}
	cfg.Limiter = rs.Limiter(cfg.RateLimit)
	if cfg.Limiter != nil {
		// Only the limit needs Redis to serve; the cache is skipped
		// without it.
		cfg.Readiness["redis"] = rs.Ping
	}
	if f.cacheTTL > 0 {
		cfg.Cache = server.Cache{Store: rs, TTL: f.cacheTTL, Namespace: cacheNamespace(o, cfg)}
		if !o.caller.decides() {
			// Every caller reads what the service's login reads, so
			// one caller's answer is every caller's answer.
			cfg.Cache.Scope = server.SharedScope
		}
		cfg.Cache.DataVersion = dataVersion(env)

	}
	return func() { rs.Close() }, nil
}

// dataVersion is the answer cache's version: the executor's data version
// and the example store's, so that new data or a new verified example
// retires the cached answers. Nil when neither can tell.
func dataVersion(env *env) func(context.Context) (string, error) {
	var parts []func(context.Context) (string, error)
	if v, ok := env.executor.(server.DataVersioner); ok {
		parts = append(parts, v.DataVersion)
	}
	if env.feedback != nil {
		parts = append(parts, env.feedback.Store.Version)
	}
	if len(parts) == 0 {
		return nil
	}
	return func(ctx context.Context) (string, error) {
		var vs []string
		for _, p := range parts {
			v, err := p(ctx)
			if err != nil {
				return "", err
			}
			vs = append(vs, v)
		}
		return strings.Join(vs, "/"), nil
	}
}

// cacheNamespace names what an answer depends on beyond the index
// fingerprint and the caller's rights (Config.RightsVersion, in every
// key): the database (the key is a hash, so a DSN's password is never
// stored), the model and the pipeline's options.
func cacheNamespace(o *options, cfg *server.Config) string {
	h := sha256.New()
	fmt.Fprintf(h, "db=%q demo=%t dsn=%q models=%q base-url=%q plan=%s judge=%s max-rows=%d max-repairs=%d timeout=%s no-check=%t\n",
		o.db, o.demo, o.dsn, cfg.Info.Models, o.baseURL, o.plan, o.judge, o.maxRows, o.maxRepairs, o.timeout, o.noCheck)
	return hex.EncodeToString(h.Sum(nil))
}

// redisConnectTimeout bounds serve's first check of --redis.
const redisConnectTimeout = 5 * time.Second

// auditor sets cfg.Auditor from --audit-db or --audit-dsn, and returns a
// function closing its database. ex is the data's executor.
func auditor(ctx context.Context, f *serveFlags, cfg *server.Config, ex any, logger *slog.Logger) (func(), error) {
	var (
		db  *sql.DB
		a   *server.SQLAuditor
		err error
	)
	switch {
	case f.auditDB != "" && f.auditDSN != "":
		return nil, &exitErr{code: exitUsage, err: errors.New("give --audit-db or --audit-dsn, not both")}
	case f.auditDSN != "":
		if !isPostgresDSN(f.auditDSN) {
			return nil, &exitErr{code: exitUsage, err: errors.New("--audit-dsn must be a PostgreSQL DSN (postgres://…)")}
		}
		if db, err = sql.Open("pgx", f.auditDSN); err != nil {
			return nil, err
		}
		// Every statement is audited synchronously: a small pool keeps
		// many replicas under the server's connection limit.
		db.SetMaxOpenConns(auditConns)
		if a, err = server.NewPostgresAuditor(ctx, db, ""); err == nil {
			warnSharedWAL(ctx, db, ex, cfg, logger)
		}
	case f.auditDB != "":
		if db, err = sql.Open("sqlite3", "file:"+f.auditDB+"?_busy_timeout=5000&_journal_mode=WAL"); err != nil {
			return nil, err
		}
		// One connection: this process's records queue in Go rather than
		// race for SQLite's lock, which past the busy timeout fails the
		// record and, the audit failing closed, the request.
		db.SetMaxOpenConns(1)
		a, err = server.NewSQLAuditor(ctx, db, "")
	default:
		return func() {}, nil
	}
	if err != nil {
		db.Close()
		return nil, err
	}
	cfg.Auditor = a
	return func() { db.Close() }, nil
}

// loadAnswerKeys reads a YAML or JSON map of question id → SQL. Integer
// ids are read as their decimal text.
func loadAnswerKeys(path string) (server.AnswerKeyMap, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var raw map[string]any
	if err := yaml.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("answer keys %s: %w", path, err)
	}
	keys := server.AnswerKeyMap{}
	for id, v := range raw {
		s, ok := v.(string)
		if !ok || strings.TrimSpace(s) == "" {
			return nil, fmt.Errorf("answer keys %s: the key of %q is not SQL text", path, id)
		}
		keys[id] = s
	}
	return keys, nil
}

// version is the module version the binary was built from, or "dev".
func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

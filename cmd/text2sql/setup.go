package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/accuracy"
	"github.com/text2sql-go/text2sql/demo"
	"github.com/text2sql-go/text2sql/executor/catalog"
	"github.com/text2sql-go/text2sql/feedback"
	"github.com/text2sql-go/text2sql/generator"
	"github.com/text2sql-go/text2sql/identity"
	"github.com/text2sql-go/text2sql/internal/retry"
	"github.com/text2sql-go/text2sql/judge"
	"github.com/text2sql-go/text2sql/knowledge"
	"github.com/text2sql-go/text2sql/lint"
	"github.com/text2sql-go/text2sql/llm/gemini"
	"github.com/text2sql-go/text2sql/llm/openai"
	"github.com/text2sql-go/text2sql/planner"
	"github.com/text2sql-go/text2sql/provider"
	"github.com/text2sql-go/text2sql/retriever"
	"github.com/text2sql-go/text2sql/retriever/keywords"
	"github.com/text2sql-go/text2sql/schema"
	"github.com/text2sql-go/text2sql/selector"
	"github.com/text2sql-go/text2sql/server"
	"github.com/text2sql-go/text2sql/summary"
)

// options are the flags shared by every command.
type options struct {
	db  string
	dsn string // PostgreSQL or MySQL instead of db (see openExecutor)
	mcp string // an MCP server instead of db: [NAME=]COMMAND or [NAME=]URL
	// sources are the --db, --dsn and --mcp values as given (repeatable);
	// resolveSources makes one of them db, dsn or mcp, or, when there are
	// several, the members of a catalog.
	sources   sourceFlags
	members   []member // the databases of a catalog; nil for one database
	knowledge string
	demo      bool
	json      bool
	provider  string
	model     string
	baseURL   string
	indexDir  string
	examples  string // --examples: the feedback example store
	// openExamples: open (and create) the example store even when its
	// file does not exist yet (serve, mcp, feedback).
	openExamples bool
	maxTables    int  // --max-tables: retriever.HybridOptions.MaxTables
	budget       int  // --budget: retriever.HybridOptions.Budget, in tokens
	noInferJoins bool // --no-infer-joins: retriever.HybridOptions.InferJoins off
	wideColumns  int  // --wide-columns: retriever.HybridOptions.WideColumns
	maxRows      int
	timeout      time.Duration
	modelTime    time.Duration // --model-timeout: the limit of one model call
	modelConns   int           // serve's --model-conns: provider.HTTP.Conns (0: the default)
	maxRepairs   int
	plan         string // off, on or hard
	judge        string // off, on or hard
	noCheck      bool
	candidates   int  // --candidates: text2sql.Config.Candidates
	pairwise     bool // --pairwise: a selector.Selector decides ties among candidates
	allowRows    bool // --allow-rows: the model may see rows to put a result in words
	keywords     bool // --keywords: a model expands each question with keywords before retrieval
	caller       callerFlags
	models       modelFlags // --embedder, --reranker, --model-dir, --offline
	errOut       io.Writer  // the command's standard error, for warnings
}

func (o *options) bind(root *cobra.Command) {
	f := root.PersistentFlags()
	f.StringArrayVar(&o.sources.db, "db", nil, "SQLite database file (opened read-only), [NAME=]PATH; repeat --db/--dsn/--mcp with NAME= for a catalog of several databases, tables named NAME.table")
	f.StringArrayVar(&o.sources.dsn, "dsn", nil, "database server instead of --db, [NAME=]URL: postgres://user@host/db (PostgreSQL; ?search_path=s sets the default schemas) or mysql://user@host/db (MySQL, MariaDB)")
	f.StringArrayVar(&o.sources.mcp, "mcp", nil, "database behind an MCP server instead of --db: [NAME=]COMMAND (stdio, e.g. 'npx -y @modelcontextprotocol/server-postgres postgres://…') or [NAME=]URL (streamable HTTP, e.g. http://host/mcp)")
	f.StringVar(&o.knowledge, "knowledge", "", "knowledge file (YAML or JSON): table/column notes, rules, verified examples")
	f.BoolVar(&o.demo, "demo", false, "use the bundled demo database (a university registrar) and its knowledge file")
	f.BoolVar(&o.json, "json", false, "print JSON (stable, documented in the README)")
	f.StringVar(&o.provider, "provider", "", "model provider: gemini or openai (default: openai with --base-url, else gemini if GEMINI_API_KEY is set, else openai if OPENAI_API_KEY is set)")
	f.StringVar(&o.model, "model", "", "model name (default: the provider's default)")
	f.StringVar(&o.baseURL, "base-url", "", "provider base URL, e.g. http://localhost:11434/v1 for Ollama")
	f.StringVar(&o.indexDir, "index-dir", "", "directory of the persistent vector index (default: the user cache directory)")
	f.StringVar(&o.examples, "examples", "", "SQLite file of the verified examples made from feedback (default: one per database under the user config directory)")
	f.IntVar(&o.maxTables, "max-tables", retriever.DefaultMaxTables, "tables shown at most when the whole schema does not fit --budget (required tables aside)")
	f.IntVar(&o.budget, "budget", retriever.DefaultBudget, "tokens of DDL the context may show: the whole schema when it fits, else --max-tables tables while they fit; -1: no bound, never the whole schema")
	f.BoolVar(&o.keywords, "keywords", false, "before retrieval, ask the --provider model for the question's keywords and likely synonyms (\"churn\" → \"attrition rate\"), one call per question, added to the search")
	f.IntVar(&o.wideColumns, "wide-columns", retriever.DefaultWideColumns, "a table of more columns, chosen by retrieval, is shown with its keys and the columns the question touches; -1: always every column")
	f.BoolVar(&o.noInferJoins, "no-infer-joins", false, "do not infer join keys from column names (film_id in inventory and film) for schemas that declare few foreign keys; inferred ones are marked in the prompt")
	f.IntVar(&o.maxRows, "max-rows", 1000, "row cap per query (0: the default, 1000); the result is marked truncated beyond it")
	f.DurationVar(&o.timeout, "timeout", 10*time.Second, "time limit per query")
	f.DurationVar(&o.modelTime, "model-timeout", retry.DefaultTimeout, "time limit of one model call, its retries included (0: the default, 60s); a provider that does not answer in time fails the command")
	f.IntVar(&o.maxRepairs, "max-repairs", text2sql.DefaultMaxRepairs, "repairs after a failed attempt (0: none)")
	// --plan and --judge always take a value (--plan hard or --plan=hard):
	// with an optional value, "--judge off Q" read off as the question.
	f.StringVar(&o.plan, "plan", "off", "plan before SQL: off, on, or hard (only for hard questions)")
	f.StringVar(&o.judge, "judge", "off", "LLM judge with staged repair: off, on, or hard (only for hard questions)")
	f.BoolVar(&o.allowRows, "allow-rows", false, "let the model see a sample of the rows to put a larger result in words (off: rows never reach the model; single values and short lists are put in words without it)")
	f.BoolVar(&o.pairwise, "pairwise", false, "with --candidates, let the model decide a tie in the vote by comparing the tied candidates two at a time (CHASE-SQL's pairwise selection)")
	f.BoolVar(&o.noCheck, "no-check", false, "skip the deterministic checks (unknown names, other dialects' syntax) before execution")
	f.IntVar(&o.candidates, "candidates", 1, fmt.Sprintf("SQL candidates per attempt, chosen by execution-result vote (self-consistency); more than the first only when it fails or the question is hard; at most %d", text2sql.MaxCandidates))
	o.caller.bind(root)
	o.models.bind(root)
}

// hybrid returns the retriever's options as the flags set them.
func (o *options) hybrid(db *schema.Database, kb *knowledge.Base, store retriever.Store) retriever.HybridOptions {
	return retriever.HybridOptions{Schema: db, Knowledge: kb, Store: store, MaxTables: o.maxTables, Budget: o.budget, Catalog: o.members != nil, InferJoins: !o.noInferJoins, WideColumns: o.wideColumns}
}

// validate checks the flags that need no database, as usage errors.
func (o *options) validate() error {
	usage := func(format string, args ...any) error {
		return &exitErr{code: exitUsage, err: fmt.Errorf(format, args...)}
	}
	switch {
	case o.maxRows < 0:
		return usage("--max-rows %d: must be 0 (the default, 1000) or more", o.maxRows)
	case o.timeout < 0:
		return usage("--timeout %v: must be 0 (the default, 10s) or more", o.timeout)
	case o.modelTime < 0:
		return usage("--model-timeout %v: must be 0 (the default, %v) or more", o.modelTime, retry.DefaultTimeout)
	case o.maxRepairs < 0:
		return usage("--max-repairs %d: must be 0 or more", o.maxRepairs)
	case o.candidates < 0 || o.candidates > text2sql.MaxCandidates:
		return usage("--candidates %d: must be from 1 to %d", o.candidates, text2sql.MaxCandidates)
	case o.maxTables < 1:
		return usage("--max-tables %d: must be 1 or more", o.maxTables)
	case o.budget == 0 || o.budget < -1:
		return usage("--budget %d: must be a number of tokens, or -1 for no bound", o.budget)
	}
	for _, f := range []struct{ name, v string }{{"plan", o.plan}, {"judge", o.judge}} {
		if _, _, err := stagePolicy(f.name, f.v); err != nil {
			return err
		}
	}
	return o.models.validate()
}

// stagePolicy reads an off/on/hard flag value.
func stagePolicy(flag, v string) (on bool, when text2sql.When, err error) {
	switch v {
	case "off", "":
		return false, text2sql.WhenAlways, nil
	case "on":
		return true, text2sql.WhenAlways, nil
	case "hard":
		return true, text2sql.WhenHard, nil
	}
	return false, 0, &exitErr{code: exitUsage, err: fmt.Errorf("--%s %q: use off, on or hard", flag, v)}
}

// env is everything a command may need, built from the options.
type env struct {
	executor  guarded
	path      string // the database's source, for the per-database files
	retriever *retriever.Hybrid
	// search is what context shows: the hybrid retriever, behind the
	// keyword expansion with --keywords.
	search text2sql.Retriever
	// ret is what the pipeline and ask retrieve with: the hybrid
	// retriever, behind feedback.Retriever when an example store is open.
	ret       text2sql.Retriever
	feedback  *feedback.Recorder // nil without an example store
	generator *generator.Generator
	pipeline  *text2sql.Pipeline // nil when no provider is configured
	kb        *knowledge.Base    // the knowledge base, validated against the schema
	model     text2sql.Model     // nil when no provider is configured
	reranker  string             // the reranker's name; "" without one
	closers   []io.Closer        // the local models to release
}

// Close releases the local models and the executor.
func (e *env) Close() error {
	errs := []error{e.executor.Close()}
	for _, c := range e.closers {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}

// open builds the components. withModel asks for a model provider; without
// one configured, pipeline stays nil.
func (o *options) open(ctx context.Context, withModel bool) (*env, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	path, kb, err := o.source()
	if err != nil {
		return nil, err
	}
	e, instructions, err := o.openDatabase(ctx, path, kb)
	if err != nil {
		return nil, err
	}
	if err := o.openComponents(ctx, e, withModel, instructions); err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}

// openDatabase opens the executor of the database at path (or the
// flags' server or catalog), with the knowledge base kb merged with a
// catalog's and the example store's and validated against the schema,
// and returns the instructions every prompt carries (a catalog's rule).
func (o *options) openDatabase(ctx context.Context, path string, kb *knowledge.Base) (*env, []string, error) {
	ex, err := o.openExecutor(ctx, path)
	if err != nil {
		return nil, nil, err
	}
	if ex, err = o.withLogins(ctx, ex); err != nil {
		return nil, nil, err
	}
	o.warnElevated(ex)
	if o.caller.decides() && len(kb.Values) > 0 && o.errOut != nil {
		fmt.Fprintf(o.errOut, "text2sql: warning: the knowledge file's cell values (%s) reach every caller's prompt, "+
			"whatever the database lets each caller read; keep only values every caller may see\n", plural(len(kb.Values), "value list"))
	}
	var instructions []string
	if c, ok := ex.(*catalog.Catalog); ok {
		// The members' notes (none from the CLI) and the --knowledge
		// file, which names tables as the catalog does; the catalog's
		// rule goes to every prompt.
		ck := c.Knowledge()
		kb = &knowledge.Base{
			Tables: slices.Concat(ck.Tables, kb.Tables), Columns: slices.Concat(ck.Columns, kb.Columns),
			Rules: slices.Concat(ck.Rules, kb.Rules), Examples: slices.Concat(ck.Examples, kb.Examples),
			Values: slices.Concat(ck.Values, kb.Values), Drafts: kb.Drafts,
		}
		instructions = []string{c.Rule()}
	}
	e := &env{executor: ex, kb: kb, path: path}
	// The knowledge file is the host's: its examples run with the host's
	// rights, not the --as principal's.
	if err := kb.Validate(identity.WithPrincipal(ctx, nil), ex.Schema(), ex); err != nil {
		ex.Close()
		return nil, nil, fmt.Errorf("knowledge file: %w", err)
	}
	if err := o.mergeExamples(ctx, e, e.path); err != nil {
		e.Close()
		return nil, nil, err
	}
	return e, instructions, nil
}

// openComponents builds, over e's executor and knowledge base, the
// retriever, the model the flags configure (kept only withModel, or for
// --keywords), the generator and, with a model, the pipeline.
func (o *options) openComponents(ctx context.Context, e *env, withModel bool, instructions []string) error {
	values, err := o.openRetriever(ctx, e)
	if err != nil {
		return err
	}
	var model text2sql.Model
	if withModel || o.keywords {
		if model, err = o.newModel(ctx); err != nil {
			return err
		}
	}
	e.search = e.retriever
	if o.keywords {
		kw, err := keywords.New(e.retriever, model, keywords.Options{})
		if err != nil {
			return &exitErr{code: exitUsage, err: errors.New("--keywords needs a model provider (--provider, --base-url or an API key)")}
		}
		e.search = kw
	}
	e.ret = e.search
	if e.feedback != nil {
		e.ret = &feedback.Retriever{Base: e.search, Store: e.feedback.Store}
	}
	if !withModel {
		model = nil
	}
	dialect := e.executor.Schema().Dialect
	if mixedCatalog(e.executor) {
		dialect = "" // each question's: Retrieval.Dialect
	}
	e.generator, err = generator.New(model, generator.Options{Dialect: dialect, SampleValues: values, Instructions: instructions})
	if err != nil {
		return err
	}
	e.model = model
	if model != nil {
		if e.pipeline, err = o.newPipeline(e); err != nil {
			return err
		}
	}
	return nil
}

// openRetriever builds e's hybrid retriever over the persistent index of
// e's database (the documents and BM25 index it derives cached beside
// it), with its value index; values reports whether there is one.
func (o *options) openRetriever(ctx context.Context, e *env) (values bool, err error) {
	store, err := o.store(e.path)
	if err != nil {
		return false, err
	}
	opts, err := o.retrieval(ctx, e, e.executor.Schema(), e.kb)
	if err != nil {
		return false, err
	}
	opts.Store = store
	if cs, ok := store.(*retriever.ChromemStore); ok {
		opts.CacheDir = cs.Dir()
	}
	if opts.Values, err = o.valueIndex(ctx, e.executor, e.path); err != nil {
		return false, err
	}
	if e.retriever, err = retriever.NewHybrid(ctx, opts); err != nil {
		return false, err
	}
	return opts.Values != nil, nil
}

// retrieval returns the embedder and reranker the flags choose, as
// retriever options; the local models are added to e.closers.
func (o *options) retrieval(ctx context.Context, e *env, db *schema.Database, kb *knowledge.Base) (retriever.HybridOptions, error) {
	emb, c, err := o.newEmbedder(ctx)
	if err != nil {
		return retriever.HybridOptions{}, err
	}
	if c != nil {
		e.closers = append(e.closers, c)
	}
	opts := o.hybrid(db, kb, nil)
	opts.Embedder = emb
	r, c, err := o.newReranker(ctx, db, kb)
	if err != nil {
		return opts, err
	}
	if c != nil {
		e.closers = append(e.closers, c)
	}
	if r != nil {
		opts.Reranker, e.reranker = r, r.Name()
	}
	return opts, nil
}

// warnElevated warns on standard error when the login of ex holds powers
// beyond reading data (server.LoginOf: executor.Privileged). It never
// refuses the login: tests and first runs use such logins.
func (o *options) warnElevated(ex guarded) {
	if b, ok := ex.(interface{ BypassesRowSecurity() bool }); ok && o.caller.rlsClaims && b.BypassesRowSecurity() && !o.caller.perCaller() && o.errOut != nil {
		fmt.Fprintln(o.errOut, "text2sql: warning: --rls-claims: statements run as a role that bypasses row-level security "+
			"(a superuser, BYPASSRLS, or the owner of a table whose policies are not forced), so row-level security does not apply; "+
			"give --run-as a role without those powers")
	}
	l := server.LoginOf(ex)
	if l == nil || !l.Elevated || o.errOut == nil {
		return
	}
	fmt.Fprintf(o.errOut, "text2sql: warning: the database login has elevated privileges (%s); "+
		"the statement guard is then the only layer between generated SQL and them. "+
		"Connect as a read-only login: text2sql grant --dsn ... prints the SQL to create one.\n", strings.Join(l.Privileges, ", "))
}

// newPipeline assembles the pipeline of e's components with the flags'
// limits. Without a model its Generate fails, but verified examples are
// still reused and Execute works (what serve and mcp offer without a
// provider).
func (o *options) newPipeline(e *env) (*text2sql.Pipeline, error) {
	cfg := text2sql.Config{
		Retriever: e.ret, Generator: e.generator, Executor: e.executor,
		MaxRows: o.maxRows, Timeout: o.timeout,
	}
	if err := o.stages(&cfg, e.executor.Schema(), e.executor, e.model); err != nil {
		return nil, err
	}
	return text2sql.New(cfg)
}

// stages sets what the flags say of the repair budget, the candidates
// (grouped by execution accuracy's comparison, ties decided pairwise with
// --pairwise), the deterministic checks
// (probing through ex), the planner and the judge in cfg, for database db
// and model: the one place ask, serve and eval take them from.
func (o *options) stages(cfg *text2sql.Config, db *schema.Database, ex text2sql.Executor, model text2sql.Model) error {
	cfg.Candidates, cfg.SameResult = o.candidates, accuracy.SameResult
	cfg.Narrator = summary.New(model, summary.Options{AllowRows: o.allowRows})
	cfg.MaxRepairs = o.maxRepairs
	if cfg.MaxRepairs == 0 {
		cfg.MaxRepairs = -1 // the flag's 0 means none; Config's 0 means the default
	}
	dialect := db.Dialect
	if mixedCatalog(ex) {
		dialect = "" // each question's: Retrieval.Dialect
	}
	if !o.noCheck && !mixedCatalog(ex) {
		cfg.Checker = lint.New(db, db.Dialect).WithProbe(ex)
	}
	planOn, planWhen, err := stagePolicy("plan", o.plan)
	if err != nil {
		return err
	}
	judgeOn, judgeWhen, err := stagePolicy("judge", o.judge)
	if err != nil {
		return err
	}
	if (planOn || judgeOn || o.pairwise) && model == nil {
		return &exitErr{code: exitUsage, err: errors.New("--plan, --judge and --pairwise need a model provider")}
	}
	if o.pairwise {
		if cfg.Selector, err = selector.New(model, selector.Options{Dialect: dialect}); err != nil {
			return err
		}
	}
	if planOn {
		if cfg.Planner, err = planner.New(model, planner.Options{Dialect: dialect, Schema: db, Catalog: o.members != nil}); err != nil {
			return err
		}
		cfg.PlanWhen = planWhen
	}
	if judgeOn {
		if cfg.Judge, err = judge.New(model, judge.Options{Dialect: dialect}); err != nil {
			return err
		}
		cfg.JudgeWhen = judgeWhen
	}
	return nil
}

// mixedCatalog reports whether ex is a catalog of databases of several
// dialects: its questions are written in the dialect of the database each
// is routed to (Retrieval.Dialect), so no one dialect is set for the
// prompt, and the deterministic checks, which read one dialect, are left
// to the databases' guards.
func mixedCatalog(ex text2sql.Executor) bool {
	c, ok := ex.(*catalog.Catalog)
	return ok && c.Mixed()
}

// source returns the database path and knowledge base the flags name.
func (o *options) source() (string, *knowledge.Base, error) {
	if n := btoi(o.demo) + btoi(o.db != "") + btoi(o.dsn != "") + btoi(o.mcp != "") + btoi(o.members != nil); n != 1 {
		return "", nil, &exitErr{code: exitUsage, err: errors.New("give exactly one of --db PATH, --dsn DSN, --mcp SERVER or --demo, or several NAME=… of them for a catalog")}
	}
	var (
		path = o.db
		kb   = &knowledge.Base{}
		err  error
	)
	if o.demo {
		if path, err = demo.Ensure(""); err != nil {
			return "", nil, err
		}
		if o.knowledge == "" {
			if kb, err = demo.Knowledge(); err != nil {
				return "", nil, err
			}
		}
	}
	if o.knowledge != "" {
		if kb, err = knowledge.Load(o.knowledge); err != nil {
			return "", nil, err
		}
	}
	return path, kb, nil
}

// store opens the persistent vector index for the database at path (in
// memory when indexPath gives no directory).
func (o *options) store(path string) (retriever.Store, error) {
	dir, err := o.indexPath(path)
	if err != nil || dir == "" {
		return retriever.NewMemoryStore(), err
	}
	s, err := retriever.OpenChromem(dir)
	if err == nil && s.Recovered() != nil && o.errOut != nil {
		fmt.Fprintf(o.errOut, "text2sql: warning: the index in %s could not be read (%v); it is rebuilt\n", dir, s.Recovered())
	}
	return s, err
}

// indexPath is the directory of the vector index for the database at path:
// --index-dir, else one per database under the user cache directory; ""
// when there is no user cache directory (the index is then kept in
// memory).
func (o *options) indexPath(path string) (string, error) {
	if o.indexDir != "" {
		return o.indexDir, nil
	}
	return o.perDatabase(os.UserCacheDir, path, "index", "")
}

// schemaFile is the SQLite schema snapshot's file in the index directory
// (sqlite.Options.SchemaSnapshot).
const schemaFile = "schema.gob"

// schemaSnapshot is the schema snapshot file of the SQLite database at
// path, in its index directory; "" for a catalog's member (the directory
// is the catalog's) or without an index directory.
func (o *options) schemaSnapshot(path string) (string, error) {
	if o.members != nil {
		return "", nil
	}
	dir, err := o.indexPath(path)
	if err != nil || dir == "" {
		return "", err
	}
	return filepath.Join(dir, schemaFile), nil
}

// perDatabase is the file or directory kind/<hash of the database's
// key><ext> under text2sql in the user directory dir returns; "" when
// there is no such directory.
func (o *options) perDatabase(dir func() (string, error), path, kind, ext string) (string, error) {
	base, err := dir()
	if err != nil {
		return "", nil
	}
	key, err := o.indexKey(path)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(key))
	return filepath.Join(base, "text2sql", kind, hex.EncodeToString(sum[:8])+ext), nil
}

// chosenProvider is the provider the flags and environment select, and
// why; "" when none is configured.
func (o *options) chosenProvider() (provider, why string) {
	switch {
	case o.provider != "":
		return o.provider, "--provider"
	case o.baseURL != "":
		// A base URL is an OpenAI-compatible endpoint (Ollama, vLLM…):
		// a GEMINI_API_KEY in the environment must not go to that host.
		return "openai", "--base-url"
	case os.Getenv(gemini.EnvAPIKey) != "":
		return "gemini", gemini.EnvAPIKey + " is set"
	case os.Getenv(openai.EnvAPIKey) != "":
		return "openai", openai.EnvAPIKey + " is set"
	}
	return "", ""
}

// newModel returns the configured model, or nil when none is configured.
// providerHTTP returns the hosted providers' HTTP settings the flags set.
func (o *options) providerHTTP() provider.HTTP {
	return provider.HTTP{Timeout: o.modelTime, Conns: o.modelConns}
}

func (o *options) newModel(ctx context.Context) (text2sql.Model, error) {
	name, _ := o.chosenProvider()
	if name == "" {
		return nil, nil
	}
	switch name {
	case "gemini":
		key := os.Getenv(gemini.EnvAPIKey)
		if key == "" {
			return nil, &exitErr{code: exitUsage, err: errors.New("--provider gemini needs " + gemini.EnvAPIKey)}
		}
		return gemini.New(ctx, gemini.Options{APIKey: key, Model: o.model, BaseURL: o.baseURL, HTTP: o.providerHTTP()})
	case "openai":
		if o.baseURL != "" && o.model == "" && o.errOut != nil {
			// A local server (Ollama, vLLM…) rarely serves OpenAI's model.
			fmt.Fprintf(o.errOut, "text2sql: warning: --base-url without --model asks %s for %s (OpenAI's default); "+
				"name the model the server serves with --model (text2sql doctor lists them)\n", o.baseURL, openai.DefaultModel)
		}
		return openai.New(openai.Options{APIKey: os.Getenv(openai.EnvAPIKey), Model: o.model, BaseURL: o.baseURL, HTTP: o.providerHTTP()})
	}
	return nil, &exitErr{code: exitUsage, err: fmt.Errorf("unknown provider %q: use gemini or openai", o.provider)}
}

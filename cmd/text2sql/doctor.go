package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/text2sql-go/text2sql/internal/onnxrt"
	"github.com/text2sql-go/text2sql/knowledge"
	"github.com/text2sql-go/text2sql/llm/gemini"
	"github.com/text2sql-go/text2sql/llm/openai"
	"github.com/text2sql-go/text2sql/retriever"
	"github.com/text2sql-go/text2sql/retriever/valueindex"
	"github.com/text2sql-go/text2sql/server"
)

// Statuses of a doctor check.
const (
	checkOK   = "ok"
	checkWarn = "warn" // works, but not as it should run in production
	checkFail = "fail"
	checkNone = "none" // not configured; not an error
)

// finding is one line of the doctor's report.
type finding struct {
	Name   string `json:"name"`
	Status string `json:"status"`
	Detail string `json:"detail"`
}

func doctorCmd(o *options) *cobra.Command {
	return &cobra.Command{
		Use:   "doctor [--db FILE | --dsn URL | --demo] [--knowledge FILE] [--provider …]",
		Short: "Report what this installation can reach: database, knowledge file, index, model provider, ONNX Runtime",
		Long: `Report what this installation can reach, one line per part, with the same
flags and environment as ask: the database (--db, --dsn or --demo: opened
read-only, tables counted, the login's privileges), the knowledge file
(loaded and validated against the schema), the vector index directory
(built or reused), the model provider ask would use and why (asked whether
it serves the model, without generating: no tokens are billed; keys are
never printed), and the ONNX Runtime library of --embedder fastembed and
--reranker cross-encoder ($ONNXRUNTIME_LIB, then /usr/local/lib/onnxruntime
and the usual library directories; loaded to check its version).

Statuses: ok; warn (works, but not as production should run); fail; none
(not configured). Exit status 1 when any part fails.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			fs, err := o.doctor(cmd.Context())
			if err != nil {
				return err
			}
			if o.json {
				ok := true
				for _, f := range fs {
					ok = ok && f.Status != checkFail
				}
				if err := writeJSON(cmd.OutOrStdout(), map[string]any{"ok": ok, "checks": fs}); err != nil {
					return err
				}
			} else {
				printFindings(cmd.OutOrStdout(), fs)
			}
			for _, f := range fs {
				if f.Status == checkFail {
					return &exitErr{code: exitError, err: fmt.Errorf("doctor: %s failed", f.Name), quiet: true}
				}
			}
			return nil
		},
	}
}

func printFindings(w io.Writer, fs []finding) {
	for _, f := range fs {
		fmt.Fprintf(w, "%-5s %-12s %s\n", f.Status, f.Name, f.Detail)
	}
}

// doctor runs every check; a part that cannot be reached does not stop the
// others, except that the knowledge file and the index need the database.
// Its error is a usage error (flags that contradict each other).
func (o *options) doctor(ctx context.Context) ([]finding, error) {
	fs := []finding{{"version", checkOK, fmt.Sprintf("text2sql %s, %s %s/%s", version(), runtime.Version(), runtime.GOOS, runtime.GOARCH)}}
	data, err := o.doctorData(ctx)
	if err != nil {
		return nil, err
	}
	fs = append(fs, data...)
	fs = append(fs, o.doctorProvider(ctx)...)
	return append(fs, o.doctorONNX()), nil
}

// doctorData checks the database, the knowledge file and the index.
func (o *options) doctorData(ctx context.Context) ([]finding, error) {
	if !o.demo && o.db == "" && o.dsn == "" {
		none := "no database given: add --db FILE (SQLite), --dsn URL (PostgreSQL, MySQL, MariaDB) or --demo"
		return []finding{{"database", checkNone, none}}, nil
	}
	path, kb, err := o.source()
	if ee := (*exitErr)(nil); errors.As(err, &ee) {
		return nil, err
	}
	if err != nil {
		name := "database" // the demo could not be written
		if o.knowledge != "" {
			name = "knowledge"
		}
		return []finding{{name, checkFail, err.Error()}}, nil
	}
	octx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	ex, err := o.openExecutor(octx, path)
	if err != nil {
		return []finding{{"database", checkFail, err.Error()}}, nil
	}
	defer ex.Close()
	db := ex.Schema()
	where := path
	if o.dsn != "" {
		where, _ = o.indexKey(path) // the DSN without its password
	}
	detail := fmt.Sprintf("%s %s: %s, read-only", db.Dialect, where, plural(len(db.Tables), "table"))
	fs := []finding{{"database", checkOK, detail}}
	if len(db.Tables) == 0 {
		fs[0].Status, fs[0].Detail = checkWarn, detail+": no table is visible to this login (nothing to ask about)"
	}
	if l := server.LoginOf(ex); l != nil && l.Elevated {
		fs[0].Status = checkWarn
		fs[0].Detail += fmt.Sprintf("; the login holds %s (text2sql grant prints the SQL for a read-only login)", strings.Join(l.Privileges, ", "))
	}

	kf := knowledgeFinding(o, kb)
	if err := kb.Validate(ctx, db, ex); err != nil {
		kf.Status, kf.Detail = checkFail, kf.Detail+": "+err.Error()
		return append(fs, kf), nil
	}
	fs = append(fs, kf)

	dir, err := o.indexPath(path)
	if err != nil {
		return append(fs, finding{"index", checkFail, err.Error()}), nil
	}
	store, err := o.store(path)
	if err != nil {
		return append(fs, finding{"index", checkFail, err.Error()}), nil
	}
	e := &env{executor: ex}
	defer func() {
		for _, c := range e.closers {
			c.Close()
		}
	}()
	opts, err := o.retrieval(ctx, e, db, kb)
	if err != nil {
		return append(fs, finding{"index", checkFail, err.Error()}), nil
	}
	opts.Store = store
	t0 := time.Now()
	if opts.Values, err = o.valueIndex(ctx, ex, path); err != nil {
		return append(fs, finding{"index", checkFail, err.Error()}), nil
	}
	took := time.Since(t0)
	h, err := retriever.NewHybrid(ctx, opts)
	if err != nil {
		return append(fs, finding{"index", checkFail, err.Error()}), nil
	}
	st := h.Stats()
	how := "reused"
	if st.Rebuilt {
		how = fmt.Sprintf("built (%s embedded in %d ms)", plural(st.Embedded, "document"), st.BuildTime.Milliseconds())
	}
	if st.LockWait >= time.Millisecond {
		how += fmt.Sprintf(" after waiting %d ms for another process's build", st.LockWait.Milliseconds())
	}
	if dir == "" {
		dir = "in memory (no user cache directory)"
	}
	rr := "no reranker"
	if e.reranker != "" {
		rr = "reranker " + e.reranker
	}
	return append(fs, finding{"index", checkOK, fmt.Sprintf("%s: %s, embedder %s (%d dimensions), %s, %s",
		dir, plural(st.Documents, "document"), st.Embedder, st.Dimension, rr, how)}, valuesFinding(o, opts.Values, took)), nil
}

// valuesFinding says what the value index holds and how long reading or
// building it took, or why there is none.
func valuesFinding(o *options, ix *valueindex.Index, took time.Duration) finding {
	switch {
	case o.models.noValues:
		return finding{"values", checkNone, "off (--no-values)"}
	case ix == nil && o.caller.decides():
		return finding{"values", checkNone, "off: callers read only their own rows (--run-as, --rls-claims, --login-map)"}
	case ix == nil:
		return finding{"values", checkNone, "off: the executor offers no database/sql handle"}
	}
	st := ix.Stats()
	detail := fmt.Sprintf("%s of %s in %d ms", plural(st.Values, "value"), plural(st.Columns, "text column"), took.Milliseconds())
	status := checkOK
	if len(st.Truncated) > 0 {
		detail += fmt.Sprintf("; %s cut at the bounds", plural(len(st.Truncated), "column"))
	}
	if st.Full {
		detail += fmt.Sprintf("; full at %d values or %d MB: later columns are not indexed", valueindex.DefaultMaxValues, valueindex.DefaultMaxBytes>>20)
	}
	if len(st.Skipped) > 0 {
		status = checkWarn
		detail += fmt.Sprintf("; %s not readable (%s)", plural(len(st.Skipped), "column"), st.Skipped[0])
	}
	return finding{"values", status, detail}
}

// knowledgeFinding names the knowledge base and counts what it holds.
func knowledgeFinding(o *options, kb *knowledge.Base) finding {
	src := "none (schema only; text2sql knowledge init writes a starter file)"
	switch {
	case o.knowledge != "":
		src = o.knowledge
	case o.demo:
		src = "the demo's knowledge file"
	}
	var parts []string
	for _, c := range []struct {
		n    int
		noun string
	}{{len(kb.Tables), "table note"}, {len(kb.Columns), "column note"}, {len(kb.Rules), "rule"}, {len(kb.Examples), "example"}, {len(kb.Values), "value list"}} {
		if c.n > 0 {
			parts = append(parts, plural(c.n, c.noun))
		}
	}
	if kb.Drafts != nil {
		parts = append(parts, "drafts awaiting review (text2sql knowledge accept)")
	}
	if len(parts) > 0 {
		src += ": " + strings.Join(parts, ", ")
	}
	return finding{"knowledge", checkOK, src}
}

// pinger is a model that can say whether it is served without generating.
type pinger interface{ Ping(context.Context) error }

// doctorProvider checks the provider ask would use, and names keys that are
// set but unused.
func (o *options) doctorProvider(ctx context.Context) []finding {
	provider, why := o.chosenProvider()
	if provider == "" {
		return []finding{{"provider", checkNone, "none configured: ask answers only from verified examples; set " +
			gemini.EnvAPIKey + " (Gemini) or " + openai.EnvAPIKey + " (OpenAI), or use --base-url http://localhost:11434/v1 --model NAME (Ollama)"}}
	}
	m, err := o.newModel(ctx)
	if err != nil {
		return []finding{{"provider", checkFail, fmt.Sprintf("%s (%s): %v", provider, why, err)}}
	}
	base := o.baseURL
	key := ""
	switch provider {
	case "gemini":
		base, key = cmp.Or(base, gemini.DefaultBaseURL), gemini.EnvAPIKey+" set"
	case "openai":
		base, key = cmp.Or(base, openai.DefaultBaseURL), "no key"
		if os.Getenv(openai.EnvAPIKey) != "" {
			key = openai.EnvAPIKey + " set"
		}
	}
	name := o.model
	if n, ok := m.(interface{ Name() string }); ok {
		name = n.Name()
	}
	f := finding{"provider", checkOK, fmt.Sprintf("%s (%s), model %s at %s, %s", provider, why, name, base, key)}
	if p, ok := m.(pinger); ok {
		start := time.Now()
		if err := p.Ping(ctx); err != nil {
			f.Status, f.Detail = checkFail, f.Detail+": "+err.Error()
		} else {
			f.Detail += fmt.Sprintf(": serves the model (%d ms)", time.Since(start).Milliseconds())
		}
	}
	fs := []finding{f}
	for _, other := range []struct{ provider, env string }{{"gemini", gemini.EnvAPIKey}, {"openai", openai.EnvAPIKey}} {
		if other.provider != provider && os.Getenv(other.env) != "" {
			fs = append(fs, finding{"provider", checkOK, fmt.Sprintf("%s is set too, unused (--provider %s uses it)", other.env, other.provider)})
		}
	}
	return fs
}

// doctorONNX finds and loads the ONNX Runtime shared library (see
// onnxrt.Find). Missing, it is a failure when --embedder or --reranker
// needs it and "none" otherwise.
func (o *options) doctorONNX() finding {
	missing := checkNone
	if o.models.usesONNX() {
		missing = checkFail
	}
	file, source, err := onnxrt.Find("")
	if err != nil {
		return finding{"onnxruntime", missing, err.Error()}
	}
	if err := onnxrt.Init(file); err != nil {
		return finding{"onnxruntime", checkFail, err.Error()}
	}
	_, v := onnxrt.Loaded()
	return finding{"onnxruntime", checkOK, fmt.Sprintf("%s (%s), ONNX Runtime %s", file, source, v)}
}

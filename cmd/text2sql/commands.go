package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/chart"
	"github.com/text2sql-go/text2sql/lint"
	"github.com/text2sql-go/text2sql/summary"
	"github.com/text2sql-go/text2sql/wire"
)

func askCmd(o *options) *cobra.Command {
	var verbose bool
	var chartPath string
	c := &cobra.Command{
		Use:   "ask QUESTION",
		Short: "Answer a question: retrieve, generate SQL, run it",
		Long: `Answer a question: retrieve context, generate SQL with the configured
model, run it through the guard and print the rows.

Without a provider (--provider or GEMINI_API_KEY / OPENAI_API_KEY), ask
runs the SQL of a verified example that matches the question; otherwise it
says why there is no answer and how to get one, and prints the retrieved
context (with --verbose, the prompt it would send too).`,
		Args: questionArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			q := strings.Join(args, " ")
			env, err := o.open(ctx, true)
			if err != nil {
				return err
			}
			defer env.Close()
			out := answerOutput{w: cmd.OutOrStdout(), errW: cmd.ErrOrStderr(), json: o.json, chart: chartPath}
			if env.pipeline == nil {
				return askOffline(ctx, o, env, q, out, verbose)
			}
			ans, err := env.pipeline.Ask(ctx, q)
			if ans != nil {
				if werr := out.write(ans, err); werr != nil {
					return werr
				}
			}
			return answerExit(ans, err)
		},
	}
	c.Flags().BoolVar(&verbose, "verbose", false, "without a model provider, print the system instruction and the prompt too")
	c.Flags().StringVar(&chartPath, "chart", "", "write a self-contained HTML page with a chart of the result to `FILE` (when one suits the result)")
	return c
}

// askOffline answers without a model: a matching verified example is run;
// otherwise a short header says what was retrieved, why there is no
// answer and how to get one, then the context follows (and with verbose
// the prompt).
func askOffline(ctx context.Context, o *options, env *env, q string, ao answerOutput, verbose bool) error {
	out := ao.w
	c, err := env.ret.Retrieve(ctx, text2sql.RetrieveRequest{Question: q})
	if err != nil {
		return err
	}
	if c.Match != nil {
		res, err := env.executor.Execute(ctx, text2sql.ExecuteRequest{SQL: c.Match.SQL, MaxRows: o.maxRows, Timeout: o.timeout})
		if err != nil {
			return err
		}
		ans := &text2sql.Answer{Question: q, Status: text2sql.StatusAnswered, SQL: c.Match.SQL, Result: res, Retrieval: c, ReusedExample: c.Match.ID,
			Explanation: fmt.Sprintf("Reused verified example %s (%q).", c.Match.ID, c.Match.Question)}
		if res.Error != nil {
			ans.Status = text2sql.StatusFailed
		} else {
			ans.Words = summary.Deterministic(q, res) // no model: words only where none is needed
		}
		if err := ao.write(ans, nil); err != nil {
			return err
		}
		return answerExit(ans, nil)
	}
	system, user, err := env.generator.Prompt(text2sql.GenerateRequest{Question: q, Retrieval: c})
	if err != nil {
		return err
	}
	// No answer is not success: scripts see exitNoModel, and the output
	// says why.
	noAnswer := &exitErr{code: exitNoModel, err: errors.New("no answer: no model provider is configured"), quiet: true}
	if o.json {
		if err := writeJSON(out, map[string]any{"context": wire.NewContext(c, wire.Full), "system": system, "prompt": user, "provider": nil}); err != nil {
			return err
		}
		return noAnswer
	}
	printOfflineHeader(out, c)
	printContext(out, c)
	if verbose {
		fmt.Fprintf(out, "\n== system instruction\n%s\n\n== prompt\n%s\n", system, user)
	}
	return noAnswer
}

// answerOutput is where ask writes an answer: text or JSON on w, and with
// chart set a chart page of the result.
type answerOutput struct {
	w, errW io.Writer
	json    bool
	chart   string // path of the chart page; "" for none
}

// write prints ans (with err, Ask's error) and writes the chart page. A
// result no chart suits writes no page and says so on errW.
func (ao answerOutput) write(ans *text2sql.Answer, err error) error {
	if ao.json {
		if jerr := writeJSON(ao.w, wire.NewAnswer(ans, err, wire.Full)); jerr != nil {
			return jerr
		}
	} else {
		printAnswer(ao.w, ans)
	}
	if ao.chart == "" {
		return nil
	}
	spec := chart.For(ans.Result, chart.Options{})
	if spec == nil {
		fmt.Fprintf(ao.errW, "No chart: the result's shape does not suit one (a single value or row, one column, a wide table or too many categories); %s not written.\n", ao.chart)
		return nil
	}
	page, perr := chart.Page(spec, ans.Question, ans.SQL)
	if perr == nil {
		perr = os.WriteFile(ao.chart, page, 0o644)
	}
	if perr != nil {
		return fmt.Errorf("writing the chart: %w", perr)
	}
	fmt.Fprintf(ao.errW, "Chart (%s) written to %s.\n", spec.Mark.Type, ao.chart)
	return nil
}

// maxOfflineExamples bounds the verified examples the offline header
// names: enough to show a near paraphrase, few enough for one line or two.
const maxOfflineExamples = 3

// printOfflineHeader is the first screen of ask without a model: what was
// retrieved, why there is no answer, and the one setting that gives one.
func printOfflineHeader(w io.Writer, c *text2sql.Retrieval) {
	fmt.Fprintln(w, "No answer: no model provider is configured and no verified example matches the question.")
	var names []string
	for _, t := range c.Tables {
		names = append(names, t.Name)
	}
	kinds := map[text2sql.ItemKind]int{}
	var examples []string // in rank order
	for _, it := range c.Items {
		kinds[it.Kind]++
		if it.Kind == text2sql.ItemExample && len(examples) < maxOfflineExamples {
			examples = append(examples, strconv.Quote(it.Text))
		}
	}
	var counts []string
	for _, k := range []text2sql.ItemKind{text2sql.ItemTable, text2sql.ItemColumn, text2sql.ItemRule, text2sql.ItemExample, text2sql.ItemValue} {
		if n := kinds[k]; n > 0 {
			counts = append(counts, plural(n, string(k)))
		}
	}
	if len(c.Items) == 0 {
		fmt.Fprintln(w, "Nothing in the schema or the knowledge base matched the question.")
	} else {
		fmt.Fprintf(w, "Retrieved %s (%s) and %s (%s).\n", plural(len(c.Tables), "table"), strings.Join(names, ", "),
			plural(len(c.Items), "item"), strings.Join(counts, ", "))
	}
	if len(examples) > 0 {
		fmt.Fprintf(w, "Verified examples retrieved (asked as written, each is answered without a model): %s.\n", strings.Join(examples, ", "))
	}
	fmt.Fprintln(w, "To generate and run SQL, configure a model:")
	fmt.Fprintln(w, "  export GEMINI_API_KEY=…    (Gemini)   or   export OPENAI_API_KEY=…    (OpenAI)")
	fmt.Fprintln(w, "  --provider openai --base-url http://localhost:11434/v1 --model llama3.1    (a local model with Ollama)")
	fmt.Fprintln(w, "The prompt that would be sent: add --verbose, or run text2sql prompt with the same flags.")
	fmt.Fprintln(w)
}

// retrieve opens the environment without a model and retrieves the
// context of question; the caller closes the environment.
func (o *options) retrieve(ctx context.Context, question string) (*env, *text2sql.Retrieval, error) {
	env, err := o.open(ctx, false)
	if err != nil {
		return nil, nil, err
	}
	c, err := env.search.Retrieve(ctx, text2sql.RetrieveRequest{Question: question})
	if err != nil {
		env.Close()
		return nil, nil, err
	}
	return env, c, nil
}

func contextCmd(o *options) *cobra.Command {
	return &cobra.Command{
		Use:   "context QUESTION",
		Short: "Show what the retriever finds: items with kinds, scores and provenance, and the tables shown",
		Args:  questionArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			env, c, err := o.retrieve(cmd.Context(), strings.Join(args, " "))
			if err != nil {
				return err
			}
			defer env.Close()
			if o.json {
				return writeJSON(cmd.OutOrStdout(), wire.NewContext(c, wire.Full))
			}
			printContext(cmd.OutOrStdout(), c)
			return nil
		},
	}
}

func promptCmd(o *options) *cobra.Command {
	return &cobra.Command{
		Use:   "prompt QUESTION",
		Short: "Print the exact prompt the generator would send",
		Args:  questionArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			q := strings.Join(args, " ")
			env, c, err := o.retrieve(cmd.Context(), q)
			if err != nil {
				return err
			}
			defer env.Close()
			system, user, err := env.generator.Prompt(text2sql.GenerateRequest{Question: q, Retrieval: c})
			if err != nil {
				return err
			}
			if o.json {
				return writeJSON(cmd.OutOrStdout(), map[string]string{"system": system, "prompt": user})
			}
			fmt.Fprintf(cmd.OutOrStdout(), "== system instruction\n%s\n\n== prompt\n%s\n", system, user)
			return nil
		},
	}
}

func runCmd(o *options) *cobra.Command {
	ak := &answerKeyFlags{}
	c := &cobra.Command{
		Use:   "run SQL",
		Short: "Run SQL through the deterministic checks and the guard (one read-only statement, row cap, timeout)",
		Long:  "Run SQL through the guard. Use - to read the SQL from standard input.",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 || strings.TrimSpace(strings.Join(args, " ")) == "" {
				return &exitErr{code: exitUsage, err: errors.New("an SQL statement is required (or - to read it from standard input)")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			sql := strings.Join(args, " ")
			if sql == "-" {
				b, err := io.ReadAll(cmd.InOrStdin())
				if err != nil {
					return err
				}
				sql = string(b)
			}
			env, err := o.open(cmd.Context(), false)
			if err != nil {
				return err
			}
			defer env.Close()
			// The deterministic checks as ask applies them (hints for
			// unknown names, other dialects' syntax), unless --no-check.
			var ex text2sql.Executor = env.executor
			if db := env.executor.Schema(); !o.noCheck && !mixedCatalog(env.executor) {
				ex = lint.New(db, db.Dialect).Executor(ex)
			}
			res, err := ex.Execute(cmd.Context(), text2sql.ExecuteRequest{SQL: sql, MaxRows: o.maxRows, Timeout: o.timeout})
			if err != nil {
				return err
			}
			if ak.key != "" {
				return ak.check(cmd.Context(), cmd.OutOrStdout(), o.json, env.executor, sql, res)
			}
			if o.json {
				if err := writeJSON(cmd.OutOrStdout(), wire.NewResult(res, wire.Full)); err != nil {
					return err
				}
			} else {
				printResult(cmd.OutOrStdout(), res)
			}
			if res.Error != nil {
				return &exitErr{code: exitSQL, err: res.Error, quiet: !o.json}
			}
			return nil
		},
	}
	ak.bind(c)
	return c
}

func questionArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 || strings.TrimSpace(strings.Join(args, " ")) == "" {
		return &exitErr{code: exitUsage, err: errors.New("a question is required")}
	}
	return nil
}

// answerExit maps an answer to the command's error.
func answerExit(ans *text2sql.Answer, err error) error {
	if err != nil {
		code := exitError
		if errors.Is(err, text2sql.ErrRepairsExhausted) {
			code = exitSQL
		}
		if me := (*text2sql.ModelError)(nil); errors.As(err, &me) && me.Timeout {
			err = fmt.Errorf("%w; a slow model may need a longer --model-timeout", err)
		}
		return &exitErr{code: code, err: err}
	}
	switch {
	case ans.Status == text2sql.StatusDeclined:
		return &exitErr{code: exitDeclined, err: errors.New("declined: the question does not look answerable from this database")}
	case ans.Result != nil && ans.Result.Error != nil:
		return &exitErr{code: exitSQL, err: fmt.Errorf("%s: %s", ans.Result.Error.Kind, ans.Result.Error.Message)}
	case ans.Status == text2sql.StatusUnverified:
		return &exitErr{code: exitUnverified, err: errors.New("unverified: the judge accepted no attempt; the rows shown are the best executed attempt's")}
	}
	return nil
}

// The JSON output of answers, results and contexts is package wire's, in
// its Full detail: the form the service writes, with the texts, plans,
// model calls and trace steps a host may see. Fields are only ever added.

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// Human-readable output.

func printContext(w io.Writer, c *text2sql.Retrieval) {
	fmt.Fprintf(w, "== tables shown (%d)\n", len(c.Tables))
	for i, t := range c.Tables {
		fmt.Fprintf(w, "%2d. %-30s %s\n", i+1, t.Name, t.Why())
	}
	fmt.Fprintf(w, "\n== retrieved items (%d)\n", len(c.Items))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KIND\tID\tSCORE\tSIMILARITY\tFOUND BY")
	for _, it := range c.Items {
		fmt.Fprintf(tw, "%s\t%s\t%.4f\t%.3f\t%s\n", it.Kind, it.ID, it.Score, it.Similarity, it.Provenance)
	}
	tw.Flush()
	if c.LowConfidence {
		fmt.Fprintf(w, "\nlow confidence: best similarity %.3f — the question may not be about this database\n", c.BestSimilarity)
	}
	if c.Match != nil {
		fmt.Fprintf(w, "\nmatches verified example %s (similarity %.3f): %s\n", c.Match.ID, c.Match.Similarity, c.Match.Question)
	}
}

func printAnswer(w io.Writer, a *text2sql.Answer) {
	fmt.Fprintf(w, "status: %s\n", a.Status)
	if a.ReusedExample != "" {
		fmt.Fprintf(w, "reused verified example %s (no model call)\n", a.ReusedExample)
	}
	if a.SQL != "" {
		fmt.Fprintf(w, "\n%s\n", a.SQL)
	}
	if a.Explanation != "" {
		fmt.Fprintf(w, "\n%s\n", a.Explanation)
	}
	if len(a.Attempts) > 1 {
		fmt.Fprintln(w, "\n== repair trail")
		for _, at := range a.Attempts {
			line := fmt.Sprintf("attempt %d: ", at.N)
			switch {
			case at.Error != nil:
				line += at.Error.Error()
			case at.Result != nil && at.Result.Error != nil:
				line += at.Result.Error.Error()
			case at.Verdict != nil && !at.Verdict.OK:
				line += fmt.Sprintf("judge: fault in %s: %s", at.Verdict.Stage, at.Verdict.Reason)
			default:
				line += "ok"
			}
			fmt.Fprintln(w, line)
		}
	}
	if a.Selection != nil {
		printSelection(w, a.Selection)
	}
	if a.Result != nil {
		fmt.Fprintln(w)
		printResult(w, a.Result)
	}
	if a.Words != "" {
		fmt.Fprintf(w, "\n%s\n", a.Words)
	}
	if a.Trace.ModelCalls > 0 {
		calls := plural(a.Trace.ModelCalls, "model call")
		retries := 0
		for _, st := range a.Trace.Steps {
			for _, c := range st.Calls {
				retries += max(c.Attempts-1, 0)
			}
		}
		if retries > 0 {
			calls += " (" + plural(retries, "retry") + " after provider errors)"
		}
		fmt.Fprintf(w, "\n%s, %d input + %d output tokens, %v\n", calls, a.Trace.Usage.InputTokens, a.Trace.Usage.OutputTokens, a.Trace.Duration.Round(time.Millisecond))
	}
}

// printSelection lists an attempt's candidates with their result groups,
// the winner marked with "*" (none when no candidate ran), under why it
// won.
func printSelection(w io.Writer, s *text2sql.Selection) {
	fmt.Fprintf(w, "\n== candidates (%d), %s: %s\n", len(s.Candidates), s.Method, s.Reason)
	for i, c := range s.Candidates {
		mark := " "
		if i == s.Winner && s.Method != text2sql.SelectNone {
			mark = "*"
		}
		what := "no result"
		switch {
		case c.Error != nil:
			what = "error: " + c.Error.Error()
		case c.Candidate != nil && !c.Candidate.Answerable:
			what = "declined"
		case c.Result != nil && c.Result.Error != nil:
			what = c.Result.Error.Error()
		case c.Group > 0:
			what = fmt.Sprintf("group %d, %s", c.Group, plural(c.Result.RowCount, "row"))
		}
		if c.Verdict != nil && !c.Verdict.OK {
			what += "; judge: " + c.Verdict.Reason
		}
		sql := ""
		if c.Candidate != nil {
			sql = strings.Join(strings.Fields(c.Candidate.SQL), " ")
		}
		fmt.Fprintf(w, "%s%d. %s: %s\n", mark, i+1, what, sql)
	}
}

func printResult(w io.Writer, r *text2sql.Result) {
	if r.Error != nil {
		fmt.Fprintf(w, "error (%s): %s\n", r.Error.Kind, r.Error.Message)
		if r.Error.Hint != "" {
			fmt.Fprintf(w, "hint: %s\n", r.Error.Hint)
		}
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(r.Columns, "\t"))
	for _, row := range r.Rows {
		cells := make([]string, len(row))
		for i, v := range row {
			if v == nil {
				cells[i] = "NULL"
			} else {
				cells[i] = fmt.Sprint(v)
			}
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	tw.Flush()
	more := ""
	if r.Truncated {
		more = " (truncated at the row cap)"
	}
	fmt.Fprintf(w, "(%s%s)\n", plural(r.RowCount, "row"), more)
}

// plural returns "1 row", "2 rows": n and the noun, with an s unless n is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	if stem, ok := strings.CutSuffix(noun, "y"); ok && !strings.ContainsAny(stem[len(stem)-1:], "aeiou") {
		return fmt.Sprintf("%d %sies", n, stem) // retry, query
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

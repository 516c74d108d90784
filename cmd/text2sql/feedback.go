package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/feedback"
	fbsqlite "github.com/text2sql-go/text2sql/feedback/sqlite"
	"github.com/text2sql-go/text2sql/identity"
	"github.com/text2sql-go/text2sql/knowledge"
	"github.com/text2sql-go/text2sql/lint"
)

// examplesFile is the example store of the database at path: --examples,
// else one per database under the user config directory (the examples are
// data people made, not a cache); "" when there is none.
func (o *options) examplesFile(path string) (string, error) {
	if o.examples != "" {
		return o.examples, nil
	}
	return o.perDatabase(os.UserConfigDir, path, "examples", ".sqlite")
}

// mergeExamples opens the example store (unless its file does not exist
// and o.openExamples is off), adds its examples to e.kb and sets
// e.feedback. Stored examples the guard now refuses are left out, with a
// warning.
func (o *options) mergeExamples(ctx context.Context, e *env, path string) error {
	file, err := o.examplesFile(path)
	if err != nil || file == "" {
		return err
	}
	if _, err := os.Stat(file); err != nil && !o.openExamples {
		return nil
	}
	st, err := fbsqlite.Open(file, fbsqlite.Options{})
	if err != nil {
		return err
	}
	e.closers = append(e.closers, st)
	exs, err := st.Examples(ctx)
	if err != nil {
		return err
	}
	// The host's rights, as for the knowledge file's examples.
	hostCtx := identity.WithPrincipal(ctx, nil)
	merged, skipped, err := feedback.Merge(hostCtx, e.kb, exs, e.executor)
	if err != nil {
		return err
	}
	if len(skipped) > 0 && o.errOut != nil {
		fmt.Fprintf(o.errOut, "text2sql: warning: %s from feedback no longer pass the guard and are not used: %s\n",
			plural(len(skipped), "example"), strings.Join(skipped, ", "))
	}
	db := e.executor.Schema()
	e.feedback = &feedback.Recorder{Store: st, Guard: e.executor, Checker: lint.New(db, db.Dialect), Known: e.kb.Examples}
	e.kb = merged
	return nil
}

func feedbackCmd(o *options) *cobra.Command {
	var verdict, sql, note string
	c := &cobra.Command{
		Use:   "feedback --verdict up|down --sql SQL QUESTION",
		Short: "Record a verdict on an answer: an up-vote makes its SQL a verified example, a down-vote flags it",
		Long: `Record a verdict on the SQL that answered QUESTION.

The CLI votes as the host, a reviewer: an up-vote whose SQL passes the
guard and the deterministic checks becomes the trusted example of the
question (one per question: case, punctuation and spacing aside), stored
in the --examples file and indexed with the knowledge file's examples: the
next ask of the same question runs it without a model call, for every
caller of serve too. A down-vote is recorded and takes the examples with
the same SQL out of use, flagged for review. With --as NAME the vote is
that principal's, as over HTTP: an up-vote proposes the example for
review and serves only NAME until then. Use --sql - to read the SQL from
standard input.`,
		Args: questionArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if sql == "-" {
				b, err := io.ReadAll(cmd.InOrStdin())
				if err != nil {
					return err
				}
				sql = string(b)
			}
			o.openExamples = true
			env, err := o.open(cmd.Context(), false)
			if err != nil {
				return err
			}
			defer env.Close()
			fb := feedback.Feedback{Question: strings.Join(args, " "), SQL: sql, Verdict: feedback.Verdict(verdict), Note: note}
			if p := o.caller.principal(); p != nil {
				fb.Principal = p.ID
			}
			out, err := env.feedback.Record(cmd.Context(), fb)
			var serr *text2sql.SQLError
			switch {
			case errors.Is(err, feedback.ErrInvalid):
				return &exitErr{code: exitUsage, err: err}
			case errors.As(err, &serr):
				return &exitErr{code: exitSQL, err: fmt.Errorf("the SQL cannot become a verified example: %w", err)}
			case err != nil:
				return err
			}
			if o.json {
				return writeJSON(cmd.OutOrStdout(), out)
			}
			w := cmd.OutOrStdout()
			switch {
			case out.Conflict:
				fmt.Fprintf(w, "Recorded; verified example %s is %s's with other SQL: it stays, flagged for review.\n", out.Example.ID, cmp.Or(out.Example.By, "another principal"))
			case out.Added && out.Example.Status == feedback.StatusPending:
				fmt.Fprintf(w, "Added example %s, waiting for review: it serves only %s until a reviewer approves it.\n", out.Example.ID, feedback.Who(out.Example.By))
			case out.Added:
				fmt.Fprintf(w, "Added verified example %s.\n", out.Example.ID)
			case out.Example != nil:
				fmt.Fprintf(w, "Updated verified example %s (%s).\n", out.Example.ID, plural(out.Example.Up, "up-vote"))
			case len(out.Flagged) > 0:
				fmt.Fprintf(w, "Recorded; flagged for review: %s.\n", strings.Join(out.Flagged, ", "))
			default:
				fmt.Fprintln(w, "Recorded.")
			}
			return nil
		},
	}
	c.Flags().StringVar(&verdict, "verdict", "", "up (the SQL answers the question) or down")
	c.Flags().StringVar(&sql, "sql", "", "the SQL the verdict is about (- reads standard input)")
	c.Flags().StringVar(&note, "note", "", "a note kept with the vote")
	return c
}

func examplesCmd(o *options) *cobra.Command {
	c := &cobra.Command{
		Use:   "examples",
		Short: "List, review, approve, reject, remove or export the examples made from feedback",
	}
	open := func() (*fbsqlite.Store, error) { return openExamples(o) }
	c.AddCommand(examplesListCmd(o))
	c.AddCommand(reviewCmds(o, open)...)
	c.AddCommand(examplesRemoveCmd(o), examplesExportCmd(o))
	return c
}

// openExamples opens the example store of the --examples file.
func openExamples(o *options) (*fbsqlite.Store, error) {
	path, _, err := o.source()
	if err != nil {
		return nil, err
	}
	file, err := o.examplesFile(path)
	if err != nil {
		return nil, err
	}
	if file == "" {
		return nil, errors.New("no example store: set --examples")
	}
	return fbsqlite.Open(file, fbsqlite.Options{})
}

// readExamples returns the stored examples.
func readExamples(cmd *cobra.Command, o *options) ([]feedback.Example, error) {
	st, err := openExamples(o)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	return st.Examples(cmd.Context())
}

func examplesListCmd(o *options) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the examples: id, votes, review flag, question",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			exs, err := readExamples(cmd, o)
			if err != nil {
				return err
			}
			if o.json {
				if exs == nil {
					exs = []feedback.Example{}
				}
				return writeJSON(cmd.OutOrStdout(), exs)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "id\tup\tdown\tstatus\tflag\tquestion")
			for _, ex := range exs {
				flag := ""
				if ex.Review {
					flag = "review"
				}
				fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\n", ex.ID, ex.Up, ex.Down, ex.Status, flag, ex.Question)
			}
			return tw.Flush()
		},
	}
}

func examplesRemoveCmd(o *options) *cobra.Command {
	return &cobra.Command{
		Use:   "remove ID...",
		Short: "Remove examples",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, ids []string) error {
			st, err := openExamples(o)
			if err != nil {
				return err
			}
			defer st.Close()
			for _, id := range ids {
				removed, err := st.Remove(cmd.Context(), id)
				if err != nil {
					return err
				}
				if !removed {
					return &exitErr{code: exitError, err: fmt.Errorf("no example %q", id)}
				}
				fmt.Fprintf(cmd.OutOrStdout(), "Removed %s.\n", id)
			}
			return nil
		},
	}
}

func examplesExportCmd(o *options) *cobra.Command {
	return &cobra.Command{
		Use:   "export",
		Short: "Print the trusted examples as a knowledge file (YAML) a team can commit",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			exs, err := readExamples(cmd, o)
			if err != nil {
				return err
			}
			kb := &knowledge.Base{}
			for _, ex := range exs {
				if ex.Status == feedback.StatusTrusted {
					kb.Examples = append(kb.Examples, knowledge.Example{ID: ex.ID, Question: ex.Question, SQL: ex.SQL})
				}
			}
			b, err := kb.Encode("yaml")
			if err != nil {
				return err
			}
			_, err = cmd.OutOrStdout().Write(b)
			return err
		},
	}
}

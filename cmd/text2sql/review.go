package main

import (
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/executor/postgres"
	"github.com/text2sql-go/text2sql/feedback"
	fbsqlite "github.com/text2sql-go/text2sql/feedback/sqlite"
	"github.com/text2sql-go/text2sql/identity"
	"github.com/text2sql-go/text2sql/server"
)

// reviewers is serve's Config.Reviewer from --reviewers, with role:
// entries read through --run-as's role per principal; nil when the flag
// is empty (only the host reviews, with the CLI).
func reviewers(o *options, spec string) (func(*identity.Principal) bool, error) {
	if strings.TrimSpace(spec) == "" {
		return nil, nil
	}
	var role func(*identity.Principal) (string, error)
	if kind, arg, _ := strings.Cut(o.caller.runAs, ":"); arg != "" {
		switch kind {
		case "claim":
			role = postgres.RoleFromClaim(arg, o.caller.allowRoles...)
		case "map":
			m, err := o.caller.loadMap("--run-as map", arg, "role name")
			if err != nil {
				return nil, err
			}
			role = postgres.RoleMap(m)
		}
	}
	is, err := server.ParseReviewers(spec, role)
	if err != nil {
		return nil, &exitErr{code: exitUsage, err: fmt.Errorf("--reviewers: %w", err)}
	}
	return is, nil
}

// reviewer is who the CLI reviews as: the --as principal, else the host ("").
func (o *options) reviewer() string {
	if p := o.caller.principal(); p != nil {
		return p.ID
	}
	return ""
}

// reviewCmds are examples review, approve and reject: the host's review
// of what principals proposed. open opens the example store.
func reviewCmds(o *options, open func() (*fbsqlite.Store, error)) []*cobra.Command {
	review := &cobra.Command{
		Use:   "review",
		Short: "List the examples waiting for a reviewer: proposed by a principal (pending) or flagged by a vote",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := open()
			if err != nil {
				return err
			}
			defer st.Close()
			exs, err := st.Examples(cmd.Context())
			if err != nil {
				return err
			}
			queue := []feedback.Example{}
			for _, ex := range exs {
				if ex.InQueue() {
					queue = append(queue, ex)
				}
			}
			if o.json {
				return writeJSON(cmd.OutOrStdout(), queue)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "id\tstatus\tflagged\tup\tdown\tby\tquestion\tsql")
			for _, ex := range queue {
				fmt.Fprintf(tw, "%s\t%s\t%t\t%d\t%d\t%s\t%s\t%s\n", ex.ID, ex.Status, ex.Review, ex.Up, ex.Down, feedback.Who(ex.By), ex.Question, ex.SQL)
			}
			return tw.Flush()
		},
	}
	decide := func(verb string, v feedback.Verdict, short string) *cobra.Command {
		return &cobra.Command{
			Use:   verb + " ID...",
			Short: short,
			Args:  cobra.MinimumNArgs(1),
			RunE: func(cmd *cobra.Command, ids []string) error {
				o.openExamples = true
				env, err := o.open(cmd.Context(), false)
				if err != nil {
					return err
				}
				defer env.Close()
				do := env.feedback.Reject
				if v == feedback.Approved {
					do = env.feedback.Approve
				}
				for _, id := range ids {
					ex, err := do(cmd.Context(), id, o.reviewer())
					var serr *text2sql.SQLError
					switch {
					case errors.Is(err, feedback.ErrNotFound):
						return &exitErr{code: exitError, err: fmt.Errorf("no example %q", id)}
					case errors.As(err, &serr):
						return &exitErr{code: exitSQL, err: fmt.Errorf("%s cannot become a verified example: %w", id, err)}
					case err != nil:
						return err
					}
					fmt.Fprintf(cmd.OutOrStdout(), "%s %s (proposed by %s; %d up, %d down).\n", ex.ID, ex.Status, feedback.Who(ex.By), ex.Up, ex.Down)
				}
				return nil
			},
		}
	}
	return []*cobra.Command{review,
		decide("approve", feedback.Approved, "Make examples trusted: reused for everyone (their SQL is checked again)"),
		decide("reject", feedback.Rejected, "Take examples out of use for everyone, their authors included"),
	}
}

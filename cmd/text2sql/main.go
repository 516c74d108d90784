// Command text2sql asks a database questions in plain English: it shows the
// retrieved context, the exact prompt, the SQL and the rows, and runs SQL
// through the same guard the library uses.
//
//	text2sql ask --demo "How many students take each class?"
//	text2sql context --db chinook.sqlite --json "Which artists have the most albums?"
//	text2sql prompt --demo "Who teaches Linear Algebra?"
//	text2sql run --demo "SELECT count(*) FROM students"
//	text2sql doctor --demo
//
// Exit status: 0 success, 1 error, 2 usage, 3 the SQL was refused or failed,
// 4 the question was declined, 5 the result does not match the answer key,
// 6 unverified (the judge accepted no attempt), 7 no answer without a
// model provider.
package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/text2sql-go/text2sql/identity"
)

// Exit codes (the README lists them).
const (
	exitError    = 1
	exitUsage    = 2
	exitSQL      = 3 // the SQL was refused or failed
	exitDeclined = 4 // the model declined the question
	exitMismatch = 5 // run --answer-key: the result differs from the key
	// exitUnverified: the judge accepted no attempt within the budget; the
	// best executed attempt is printed, but it is not an answer to trust.
	exitUnverified = 6
	// exitNoModel: ask without a model provider found no verified example
	// to run; the output says what was retrieved and how to get an answer.
	exitNoModel = 7
)

// exitErr carries an exit code out of a command.
type exitErr struct {
	code  int
	err   error
	quiet bool // the output already shows the error
}

func (e *exitErr) Error() string { return e.err.Error() }
func (e *exitErr) Unwrap() error { return e.err }

func main() {
	root := newRoot()
	if err := root.Execute(); err != nil {
		code := exitError
		var ee *exitErr
		if errors.As(err, &ee) {
			code = ee.code
		}
		if ee == nil || !ee.quiet {
			msg := err.Error()
			if !strings.HasPrefix(msg, "text2sql: ") {
				msg = "text2sql: " + msg
			}
			fmt.Fprintln(os.Stderr, msg)
		}
		os.Exit(code)
	}
}

func newRoot() *cobra.Command {
	o := &options{}
	root := &cobra.Command{
		Use:           "text2sql",
		Short:         "Ask a database questions in plain English",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	o.bind(root)
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		o.errOut = cmd.ErrOrStderr()
		if err := o.resolveSources(cmd.Name() == "load"); err != nil {
			return err
		}
		if p := o.caller.principal(); p != nil {
			if cmd.Name() == "serve" {
				return &exitErr{code: exitUsage, err: errors.New("--as: serve takes each request's principal from --auth")}
			}
			cmd.SetContext(identity.WithPrincipal(cmd.Context(), p))
		}
		return nil
	}
	root.AddCommand(askCmd(o), contextCmd(o), promptCmd(o), runCmd(o), evalCmd(o), serveCmd(o), mcpCmd(o), loadCmd(o), grantCmd(o), knowledgeCmd(o), doctorCmd(o), feedbackCmd(o), examplesCmd(o), chatCmd(o))
	// A word that names no command is a usage error (exit 2), as a bad flag is.
	root.Args = func(_ *cobra.Command, args []string) error {
		if len(args) > 0 {
			return &exitErr{code: exitUsage, err: fmt.Errorf("unknown command %q (see text2sql --help)", args[0])}
		}
		return nil
	}
	root.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &exitErr{code: exitUsage, err: err}
	})
	return root
}

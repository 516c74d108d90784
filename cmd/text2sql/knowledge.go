package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/text2sql-go/text2sql/knowledge"
	"github.com/text2sql-go/text2sql/lint"
)

func knowledgeCmd(o *options) *cobra.Command {
	c := &cobra.Command{
		Use:   "knowledge",
		Short: "Write a starter knowledge file for a database, and accept it once reviewed",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	c.AddCommand(knowledgeInitCmd(o), knowledgeAcceptCmd())
	return c
}

func knowledgeInitCmd(o *options) *cobra.Command {
	var (
		out         string
		maxDistinct int
	)
	c := &cobra.Command{
		Use:   "init (--db FILE | --dsn URL | --demo) [-o FILE]",
		Short: "Write a starter knowledge file (YAML) for a person to review",
		Long: `Write a starter knowledge file for the database, in the format --knowledge
reads, on standard output or to -o FILE (.yaml or .yml; an existing file is
not replaced):

  drafts.tables   one note per table and view, its description to fill in,
                  its joins: the declared foreign keys and those inferred
                  from the column names (marked "inferred")
  drafts.columns  one note per column, its description to fill in, its type
                  and key role in a comment beside it
  values          the distinct values of text columns with at most
                  --max-distinct of them (statuses, categories, countries),
                  read through the guarded executor under --max-rows and
                  --timeout

With a model provider configured (--provider, --base-url, GEMINI_API_KEY or
OPENAI_API_KEY, as for ask), one call per table also drafts the table's
description and synonyms, each column's meaning and up to ` + fmt.Sprint(knowledge.DefaultDraftExamples) + ` candidate
examples (question and SQL) under drafts.examples. Every candidate must
pass the guard and the deterministic checks (--no-check: the guard only)
and run once; those that do not are left out and listed on standard error.

Drafts are ignored by retrieval until accepted: review the file, then run
"text2sql knowledge accept FILE". Columns whose values cannot be read are
listed on standard error and left out.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if maxDistinct < 0 {
				return &exitErr{code: exitUsage, err: fmt.Errorf("--max-distinct %d: must be 0 (the default, %d) or more", maxDistinct, knowledge.DefaultMaxDistinct)}
			}
			if out != "" {
				if ext := strings.ToLower(filepath.Ext(out)); ext != ".yaml" && ext != ".yml" {
					return &exitErr{code: exitUsage, err: fmt.Errorf("-o %s: the starter file is YAML: name it .yaml or .yml", out)}
				}
				if _, err := os.Stat(out); err == nil {
					return fmt.Errorf("-o %s: the file exists; remove it or choose another name (init does not replace a file under review)", out)
				}
			}
			if err := o.validate(); err != nil {
				return err
			}
			path, _, err := o.source()
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			ex, err := o.openExecutor(ctx, path)
			if err != nil {
				return err
			}
			defer ex.Close()
			o.warnElevated(ex)
			sch := ex.Schema()
			opts := knowledge.InitOptions{Values: knowledge.ValueOptions{MaxDistinct: maxDistinct}}
			if opts.Model, err = o.newModel(ctx); err != nil {
				return err
			}
			if opts.Model != nil && !o.noCheck {
				opts.Checker = lint.New(sch, sch.Dialect)
			}
			b, skipped, err := knowledge.Init(ctx, ex, sch, opts)
			if err != nil {
				return err
			}
			if err := b.Validate(ctx, sch, ex); err != nil {
				return fmt.Errorf("the starter file does not validate: %w", err)
			}
			data, err := b.EncodeStarter(sch)
			if err != nil {
				return err
			}
			errOut := cmd.ErrOrStderr()
			for _, p := range skipped {
				fmt.Fprintf(errOut, "text2sql: left out: %s\n", p)
			}
			if out == "" {
				_, err = cmd.OutOrStdout().Write(data)
				return err
			}
			if err := writeNew(out, data); err != nil {
				return err
			}
			fmt.Fprintf(errOut, "wrote %s: %s, %s and %s to review, %s; then run: text2sql knowledge accept %s\n",
				out, plural(len(b.Drafts.Tables), "table note"), plural(len(b.Drafts.Columns), "column note"),
				plural(len(b.Drafts.Examples), "example"), plural(len(b.Values), "value list"), out)
			return nil
		},
	}
	c.Flags().StringVarP(&out, "output", "o", "", "write the starter file here (.yaml or .yml) instead of standard output")
	c.Flags().IntVar(&maxDistinct, "max-distinct", 0, fmt.Sprintf("list a text column's values only when it has at most this many distinct values (0: the default, %d)", knowledge.DefaultMaxDistinct))
	return c
}

// writeNew creates path with data, failing if it exists.
func writeNew(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	return errors.Join(err, f.Close())
}

func knowledgeAcceptCmd() *cobra.Command {
	var out string
	c := &cobra.Command{
		Use:   "accept FILE [-o FILE]",
		Short: "Move a reviewed file's drafts into its knowledge base",
		Long: `Move the drafts of a reviewed knowledge file into its base, where retrieval
uses them: notes still empty are dropped, the rest kept as edited. The file
is rewritten in place (its comments are not kept), or written to -o FILE.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			b, err := knowledge.Load(args[0])
			if err != nil {
				return err
			}
			st, err := b.Accept()
			if err != nil {
				return err
			}
			dest := args[0]
			if out != "" {
				dest = out
			}
			if err := b.Save(dest); err != nil {
				return err
			}
			printAccepted(cmd.ErrOrStderr(), dest, st)
			return nil
		},
	}
	c.Flags().StringVarP(&out, "output", "o", "", "write the accepted base here instead of replacing FILE")
	return c
}

// printAccepted says what accept kept and dropped.
func printAccepted(w io.Writer, dest string, st knowledge.AcceptStats) {
	fmt.Fprintf(w, "wrote %s: accepted %s, %s, %s; dropped %s\n", dest, plural(st.Tables, "table note"),
		plural(st.Columns, "column note"), plural(st.Examples, "example"), plural(st.Dropped, "empty note"))
}

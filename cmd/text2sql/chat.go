package main

import (
	"bufio"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/text2sql-go/text2sql/conversation"
)

func chatCmd(o *options) *cobra.Command {
	c := &cobra.Command{
		Use:   "chat",
		Short: "A conversation: one message per line on standard input, follow-ups included",
		Long: `Answer messages one per line from standard input, as a conversation:
greetings get a greeting, "what does this number mean?" is answered from
the last answer's SQL, a follow-up ("and for 2019?") is rewritten into a
standalone question from the recent turns, anything else goes through
the pipeline like ask. Each reply says the route taken; with --json one
JSON object per line. A model provider is required.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			env, err := o.open(ctx, true)
			if err != nil {
				return err
			}
			defer env.Close()
			if env.pipeline == nil {
				return &exitErr{code: exitNoModel, err: errors.New("chat needs a model provider (GEMINI_API_KEY, OPENAI_API_KEY or --provider openai --base-url …)")}
			}
			// The pipeline puts answers in words (--allow-rows decides
			// whether rows may reach the model).
			conv, err := conversation.New(env.pipeline, conversation.Options{Model: env.model})
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			sc := bufio.NewScanner(cmd.InOrStdin())
			sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
			for sc.Scan() {
				msg := strings.TrimSpace(sc.Text())
				if msg == "" {
					continue
				}
				r, err := conv.Ask(ctx, msg)
				if r == nil {
					return err
				}
				if o.json {
					if jerr := writeJSON(out, r); jerr != nil {
						return jerr
					}
					continue
				}
				route := string(r.Route)
				if r.Standalone != "" && r.Standalone != r.Message {
					route += ": " + r.Standalone
				}
				fmt.Fprintf(out, "[%s]\n", route)
				if r.SQL != "" && r.Route == conversation.RouteData {
					fmt.Fprintf(out, "%s\n", r.SQL)
				}
				fmt.Fprintf(out, "%s\n\n", r.Text)
			}
			return sc.Err()
		},
	}
	return c
}

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/text2sql-go/text2sql/conversation"
	convsqlite "github.com/text2sql-go/text2sql/conversation/sqlite"
	"github.com/text2sql-go/text2sql/server"
	"github.com/text2sql-go/text2sql/wire"
)

func chatCmd(o *options) *cobra.Command {
	var savedFile string
	c := &cobra.Command{
		Use:   "chat",
		Short: "A conversation: one message per line on standard input, follow-ups included",
		Long: `Answer messages one per line from standard input, as a conversation:
greetings get a greeting, "what does this number mean?" is answered from
the last answer's SQL, a follow-up ("and for 2019?") is rewritten into a
standalone question from the recent turns, anything else goes through
the pipeline like ask. Each reply says the route taken; with --json one
JSON object per line. A model provider is required.

Commands: /save [note] saves the last answer (question, SQL, its first
rows, words, note); a question asked again whose saved answer is still
valid is answered from it without a model call (from its rows while the
data is unchanged, else by running its SQL again). /saved lists the saved
answers, /forget ID deletes one, /new starts a new conversation.`,
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
			if savedFile == "" {
				if savedFile, err = o.perDatabase(os.UserConfigDir, env.path, "saved", ".sqlite"); err != nil {
					return err
				}
			}
			// The pipeline puts answers in words (--allow-rows decides
			// whether rows may reach the model).
			opts := conversation.Options{Model: env.model}
			if savedFile != "" {
				st, err := convsqlite.Open(savedFile, convsqlite.Options{})
				if err != nil {
					return fmt.Errorf("--saved: %w", err)
				}
				defer st.Close()
				opts.Memory = &conversation.Memory{Store: st, Dialect: env.executor.Schema().Dialect, Execute: env.pipeline.Execute}
				if p := o.caller.principal(); p != nil {
					opts.Memory.Owner = p.ID
				}
				if v, ok := env.executor.(server.DataVersioner); ok {
					opts.Memory.DataVersion = v.DataVersion
				}
			}
			ch := &chat{opts: opts, out: cmd.OutOrStdout(), json: o.json}
			if ch.conv, err = conversation.New(env.pipeline, opts); err != nil {
				return err
			}
			sc := bufio.NewScanner(cmd.InOrStdin())
			sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
			for sc.Scan() {
				msg := strings.TrimSpace(sc.Text())
				if msg == "" {
					continue
				}
				if err := ch.line(ctx, env, msg); err != nil {
					return err
				}
			}
			return sc.Err()
		},
	}
	c.Flags().StringVar(&savedFile, "saved", "", "SQLite file of the saved answers (default: one per database under the user config directory)")
	return c
}

// chat is one chat session: its conversation and how it prints.
type chat struct {
	conv *conversation.Conversation
	opts conversation.Options
	out  io.Writer
	json bool
}

// chatEvent is what a command prints with --json: {"command", "saved"…}.
type chatEvent struct {
	Command string                     `json:"command"`
	Text    string                     `json:"text"`
	Saved   []conversation.SavedAnswer `json:"saved,omitempty"`
}

// line answers one line: a command or a message.
func (ch *chat) line(ctx context.Context, env *env, msg string) error {
	name, arg, _ := strings.Cut(msg, " ")
	arg = strings.TrimSpace(arg)
	switch name {
	case "/new":
		conv, err := conversation.New(env.pipeline, ch.opts)
		if err != nil {
			return err
		}
		ch.conv = conv
		return ch.say(chatEvent{Command: "new", Text: "New conversation: earlier questions are forgotten."})
	case "/save":
		a, err := ch.conv.SaveLast(ctx, arg)
		switch {
		case errors.Is(err, conversation.ErrNothingToSave), errors.Is(err, conversation.ErrInvalidNote):
			return ch.say(chatEvent{Command: "save", Text: "Not saved: " + err.Error()})
		case err != nil:
			return err
		}
		return ch.say(chatEvent{Command: "save", Text: fmt.Sprintf("Saved %s: %s", a.ID, a.Question), Saved: []conversation.SavedAnswer{*a}})
	case "/saved", "/forget":
		if ch.opts.Memory == nil {
			return ch.say(chatEvent{Command: name[1:], Text: "No saved answers: there is no user config directory; give --saved FILE."})
		}
		m := ch.opts.Memory
		if name == "/forget" {
			if arg == "" {
				return ch.say(chatEvent{Command: "forget", Text: "Usage: /forget ID (/saved lists the ids)."})
			}
			ok, err := m.Store.DeleteAnswer(ctx, m.Owner, arg)
			if err != nil {
				return err
			}
			text := "Deleted " + arg + "."
			if !ok {
				text = "No saved answer " + arg + "."
			}
			return ch.say(chatEvent{Command: "forget", Text: text})
		}
		all, err := m.Store.Answers(ctx, m.Owner)
		if err != nil {
			return err
		}
		var b strings.Builder
		b.WriteString(plural(len(all), "saved answer"))
		for _, a := range all {
			fmt.Fprintf(&b, "\n%s  %s  %s", a.ID, a.Created.Format("2006-01-02"), a.Question)
			if a.Note != "" {
				fmt.Fprintf(&b, " (%s)", a.Note)
			}
		}
		return ch.say(chatEvent{Command: "saved", Text: b.String(), Saved: all})
	}
	r, err := ch.conv.Ask(ctx, msg)
	if r == nil {
		return err
	}
	if ch.json {
		out := chatReply{Reply: r}
		if r.Answer != nil {
			out.Answer = wire.NewAnswer(r.Answer, err, wire.Full)
		}
		return json.NewEncoder(ch.out).Encode(out)
	}
	route := string(r.Route)
	if r.Standalone != "" && r.Standalone != r.Message {
		route += ": " + r.Standalone
	}
	if r.SavedAnswer != "" {
		route += " (saved answer " + r.SavedAnswer + ", no model call)"
	}
	fmt.Fprintf(ch.out, "[%s]\n", route)
	if r.SQL != "" && r.Route == conversation.RouteData {
		fmt.Fprintf(ch.out, "%s\n", r.SQL)
	}
	fmt.Fprintf(ch.out, "%s\n", r.Text)
	if a := r.Answer; a != nil && a.Result != nil && a.Result.Error == nil && (len(a.Result.Rows) > 1 || len(a.Result.Columns) > 1) {
		// More than one value: the words say the gist, the rows the rest.
		shown := *a.Result
		if len(shown.Rows) > chatRows {
			shown.Rows = shown.Rows[:chatRows]
		}
		printResult(ch.out, &shown)
	}
	for _, rel := range r.Related {
		fmt.Fprintf(ch.out, "related saved answer %s: %s\n", rel.ID, rel.Question)
	}
	fmt.Fprintln(ch.out)
	return nil
}

// chatReply is a reply in JSON, its answer in package wire's form.
type chatReply struct {
	*conversation.Reply
	Answer *wire.Answer `json:"answer,omitempty"`
}

// chatRows is how many rows of a result chat prints: a screenful; --json
// has them all.
const chatRows = 20

// say prints a command's outcome: a line of text, or one JSON object.
func (ch *chat) say(e chatEvent) error {
	if ch.json {
		return json.NewEncoder(ch.out).Encode(e)
	}
	_, err := fmt.Fprintf(ch.out, "%s\n\n", e.Text)
	return err
}

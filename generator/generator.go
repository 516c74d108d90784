// Package generator is the default text2sql.Generator: it writes one SQL
// query for a question with a language model, from the context a retriever
// found (schema DDL, notes, rules, verified examples, optionally cell
// values), an optional plan and the earlier attempts of a repair loop.
//
// The model is asked for a JSON object {answerable, sql, explanation}
// (AnswerSchema) and the answer is read by Parse, which also copes with
// models that ignore JSON mode: fenced code, "SQLQuery:" labels, SQL after
// prose. A malformed answer is re-asked a bounded number of times.
//
// The always-on rules (dialect, one read-only statement, quoting, joins,
// deterministic ordering, declining) live in the system instruction;
// retrieved knowledge goes in the user message, which can be cut to a token
// budget. Generated SQL is untrusted: this package extracts it, never runs
// or approves it — an executor's guard does that.
package generator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/text2sql-go/text2sql/internal/stagekit"
	"strings"
	"sync"
	"time"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/sqltext"
)

// Options configure a Generator. The zero value is usable: SQLite, the
// temperature 0, one re-ask, no prompt budget, no cell values.
type Options struct {
	// Dialect is the target database's dialect. Empty means the request
	// context's dialect (Retrieval.Dialect), else SQLite. When set, it wins
	// over the context's.
	Dialect text2sql.Dialect
	// Temperature is the sampling temperature, in [0, 2]; 0 (the default)
	// asks for the most deterministic answer.
	Temperature float64
	// VariantTemperature is the sampling temperature of a prompt variant
	// (GenerateRequest.Variant > 0, the other candidates of a
	// self-consistency vote), in [0, 2]; 0 means DefaultVariantTemperature.
	// It is sent as ModelRequest.Temperature, which a provider applies
	// where its model accepts one.
	VariantTemperature float64
	// MaxReasks bounds the extra calls made when an answer is malformed or
	// holds no SQL: 0 means the default, 1; a negative value means none.
	MaxReasks int
	// PromptBudget caps the estimated size of a prompt in tokens (see
	// EstimateTokens): the system instruction, the user message and the
	// answer schema together. 0 means no limit. When the context does not
	// fit, the lowest-ranked items and tables are left out first; the
	// schema of the top table is never left out, and when even it does not
	// fit, Generate and Prompt fail with an error wrapping
	// text2sql.ErrSchemaTooLarge before any model call. Re-asks add the
	// malformed answer (cut to 1,000 characters) and a short note on top.
	PromptBudget int
	// SampleValues shows the model the cell values of the context (items
	// of kind text2sql.ItemValue), quoted as data in a delimited block.
	// Off by default: the model then sees no database content.
	SampleValues bool
	// Instructions are rules the host adds to every prompt's system
	// instruction, after the built-in ones: trusted text, such as how the
	// tables of a catalog of databases are named and combined
	// (catalog.Catalog.Rule). Never put user input here.
	Instructions []string
}

// Generator writes SQL with a language model. It implements
// text2sql.Generator and is safe for concurrent use.
type Generator struct {
	model text2sql.Model
	opts  Options
	// readOnly caches the lexical check of example SQL (string → bool): the
	// same examples come back request after request.
	readOnly sync.Map
	// strip removes what follows the SQL of an answer by the target
	// engine's lexical rules (MySQL's for DialectMySQL: "#" comments,
	// "--" only before white space, executable comments kept).
	strip func(string) string
}

var _ text2sql.Generator = (*Generator)(nil)

// DefaultVariantTemperature is the sampling temperature of prompt variants
// when Options.VariantTemperature is 0: the temperature of the sampled
// reasoning paths of self-consistency (Wang et al. 2023, "Self-Consistency
// Improves Chain of Thought Reasoning in Language Models").
const DefaultVariantTemperature = 0.7

// stripMySQL cuts what follows the SQL by MySQL's lexical rules, but
// keeps a text holding an executable comment (/*! … */), which MySQL runs,
// whole but for white space and semicolons, for the guard to refuse.
func stripMySQL(s string) string {
	for _, t := range sqltext.LexMySQL(s, sqltext.MySQLMode{}) {
		if sqltext.ExecutableComment(t) != "" {
			return sqltext.TrimTerminators(s)
		}
	}
	return sqltext.StripTrailingMySQL(s, sqltext.MySQLMode{})
}

// New returns a Generator calling model. model may be nil for a Generator
// that only renders prompts (Prompt); Generate then fails.
//
// Errors wrap text2sql.ErrInvalidConfig: an unknown Dialect, a
// Temperature or VariantTemperature outside [0, 2] or a negative
// PromptBudget.
func New(model text2sql.Model, opts Options) (*Generator, error) {
	if err := stagekit.CheckDialect("generator", opts.Dialect); err != nil {
		return nil, err
	}
	if err := stagekit.CheckTemperature("generator", opts.Temperature); err != nil {
		return nil, err
	}
	if err := stagekit.CheckTemperature("generator: variant", opts.VariantTemperature); err != nil {
		return nil, err
	}
	if opts.VariantTemperature == 0 {
		opts.VariantTemperature = DefaultVariantTemperature
	}
	if opts.PromptBudget < 0 {
		return nil, fmt.Errorf("%w: generator: negative prompt budget %d", text2sql.ErrInvalidConfig, opts.PromptBudget)
	}
	opts.MaxReasks = stagekit.Reasks(opts.MaxReasks)
	strip := sqltext.StripTrailing
	if opts.Dialect == text2sql.DialectMySQL {
		strip = stripMySQL
	}
	return &Generator{model: model, opts: opts, strip: strip}, nil
}

// Prompt returns the system instruction and the user message Generate
// would send for req, without calling a model: what a CLI shows as "the
// exact prompt". Re-asks add turns after these (see Generate).
//
// A prompt variant (req.Variant k > 0) shows the same verified examples
// rotated by k places (the k-th best first, the best after the last) and
// asks, before the question, for one of three ways of working in turn
// (the joins first; divide and conquer; the order the database runs the
// query, after CHASE-SQL's generators), so each variant differs
// deterministically.
//
// Errors: text2sql.ErrEmptyQuestion when req.Question (or, when empty,
// req.Retrieval.Question) is blank; text2sql.ErrSchemaTooLarge when the top
// table does not fit in Options.PromptBudget; text2sql.ErrInvalidConfig
// when req.Variant is negative.
func (g *Generator) Prompt(req text2sql.GenerateRequest) (system, user string, err error) {
	p, err := g.build(req)
	if err != nil {
		return "", "", err
	}
	return p.system, p.user, nil
}

// maxEcho bounds the malformed answer echoed back in a re-ask, in runes.
const maxEcho = 1000

// Generate asks the model for SQL answering req and returns the candidate:
// Answerable with the SQL (without a final semicolon) and the model's
// explanation, or Answerable false with an empty SQL when the model
// declines. Candidate.Calls records every model call with its prompt.
//
// The model gets the system instruction, the user message, AnswerSchema as
// the structured-output schema and Options.Temperature, or for a prompt
// variant (req.Variant k > 0) Options.VariantTemperature, the verified
// examples then being rotated by k (see Prompt). When its answer
// cannot be used (see Parse), the model is told so and asked again, at most
// Options.MaxReasks times; the conversation then holds the earlier answer
// (cut to 1,000 characters) and a note on what was wrong.
//
// Errors:
//   - an *text2sql.OutputError (wrapping text2sql.ErrInvalidOutput or
//     text2sql.ErrNoSQL, with the last raw answer) when no answer was
//     usable; the returned Candidate is then non-nil, not answerable, and
//     carries the Calls made, so a trace can count them;
//   - a model failure, wrapped: errors.As finds a *text2sql.ModelError
//     when the model returned one; the Candidate carries the calls that
//     succeeded before it;
//   - text2sql.ErrEmptyQuestion, text2sql.ErrSchemaTooLarge (before any
//     call), text2sql.ErrInvalidConfig when the Generator has no model or
//     req.Variant is negative;
//   - ctx's error when it ends between calls.
func (g *Generator) Generate(ctx context.Context, req text2sql.GenerateRequest) (*text2sql.Candidate, error) {
	p, err := g.build(req)
	if err != nil {
		return nil, err
	}
	if g.model == nil {
		return nil, fmt.Errorf("%w: generator: no model", text2sql.ErrInvalidConfig)
	}
	temp := g.opts.Temperature
	if req.Variant > 0 {
		temp = g.opts.VariantTemperature
	}
	msgs := []text2sql.Message{{Role: text2sql.RoleUser, Content: p.user}}
	var calls []text2sql.ModelCall
	for n := 0; ; n++ {
		if err := ctx.Err(); err != nil {
			return &text2sql.Candidate{Calls: calls}, err
		}
		mreq := text2sql.ModelRequest{
			System:      p.system,
			Messages:    append([]text2sql.Message(nil), msgs...),
			Schema:      AnswerSchema(),
			Temperature: &temp,
		}
		start := time.Now()
		resp, err := g.model.Complete(ctx, mreq)
		if err != nil {
			return &text2sql.Candidate{Calls: calls}, fmt.Errorf("generator: model call: %w", err)
		}
		if resp == nil {
			return &text2sql.Candidate{Calls: calls}, fmt.Errorf("generator: model call: %w: no response", text2sql.ErrModel)
		}
		calls = append(calls, text2sql.ModelCall{
			Model:    resp.Model,
			Usage:    resp.Usage,
			Start:    start,
			Duration: time.Since(start),
			Attempts: resp.Attempts,
			Prompt:   Transcript(mreq.System, mreq.Messages),
		})
		c, perr := parse(resp.Text, g.strip)
		if perr == nil {
			c.Calls = calls
			return c, nil
		}
		var oe *text2sql.OutputError
		if !errors.As(perr, &oe) || n >= g.opts.MaxReasks {
			return &text2sql.Candidate{Calls: calls}, perr
		}
		msgs = append(msgs,
			text2sql.Message{Role: text2sql.RoleAssistant, Content: stagekit.Cut(resp.Text, maxEcho)},
			text2sql.Message{Role: text2sql.RoleUser, Content: reaskNote(oe)},
		)
	}
}

// reaskNote tells the model what was wrong with its answer.
func reaskNote(oe *text2sql.OutputError) string {
	var b strings.Builder
	if errors.Is(oe, text2sql.ErrNoSQL) {
		b.WriteString("Your last answer held no SQL query I could use")
	} else {
		b.WriteString("Your last answer was malformed and could not be read")
	}
	if d := detail(oe.Err); d != "" {
		b.WriteString(" (" + d + ")")
	}
	b.WriteString(".\nReply again with exactly one JSON object and nothing else — no prose, no code fences:\n")
	b.WriteString(`{"answerable": true or false, "sql": "…", "explanation": "…"}`)
	b.WriteString("\nIf the question cannot be answered from this database, set answerable to false and leave sql empty.")
	return b.String()
}

// detail returns what an output error adds to its sentinel, if anything.
func detail(err error) string {
	s := err.Error()
	for _, sentinel := range []error{text2sql.ErrNoSQL, text2sql.ErrInvalidOutput} {
		s = strings.TrimPrefix(strings.TrimPrefix(s, sentinel.Error()), ": ")
	}
	return s
}

// Transcript renders a system instruction and messages as one text, the
// form kept in ModelCall.Prompt by every LLM-backed stage:
//
//	[system]
//	…
//
//	[user]
//	…
func Transcript(system string, msgs []text2sql.Message) string {
	return stagekit.Transcript(system, msgs)
}

// answerSchema is the JSON Schema of an answer.
const answerSchema = `{
  "type": "object",
  "properties": {
    "answerable": {"type": "boolean", "description": "false when the question cannot be answered from this database"},
    "sql": {"type": "string", "description": "one read-only query, without a trailing semicolon; empty when not answerable"},
    "explanation": {"type": "string", "description": "what the query returns, or why the question cannot be answered"}
  },
  "required": ["answerable", "sql", "explanation"],
  "additionalProperties": false
}`

// AnswerSchema returns the JSON Schema the model's answer must follow, as
// passed in ModelRequest.Schema: an object with the boolean answerable and
// the strings sql and explanation, all required, nothing else. Each call
// returns a new copy.
func AnswerSchema() json.RawMessage { return json.RawMessage(answerSchema) }

// EstimateTokens estimates the number of tokens of s as a model would
// count them: one per four characters (runes), rounded up (the estimate
// of every stage, stagekit.EstimateTokens).
func EstimateTokens(s string) int { return stagekit.EstimateTokens(s) }

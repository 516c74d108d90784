// Package stagekit holds what the LLM-backed stages share: the checks of
// their options and the dialect they write for, one structured model call
// with a bounded re-ask (planner, judge, selector) and the errors it ends
// in, lenient reading of a JSON object from a model's answer, and
// rendering of the retrieved context, plans and earlier attempts for a
// prompt (generator, planner, judge).
package stagekit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/extract"
)

// Retry is returned by a Call's Parse when the answer cannot be used and
// the model should be asked again: Note is what it is told, Err is the
// error returned when no re-ask is left (an *text2sql.OutputError).
type Retry struct {
	Note string // sent to the model as the next user message
	Err  error  // returned when no re-ask is left
}

// Error returns Err's message.
func (r *Retry) Error() string { return r.Err.Error() }

// Unwrap returns Err.
func (r *Retry) Unwrap() error { return r.Err }

// Invalid is the error of an unusable answer raw: an
// *text2sql.OutputError holding raw, whose message is format and args
// after text2sql.ErrInvalidOutput's, which it wraps.
func Invalid(raw, format string, args ...any) *text2sql.OutputError {
	return &text2sql.OutputError{Raw: raw, Err: fmt.Errorf("%w: "+format, append([]any{text2sql.ErrInvalidOutput}, args...)...)}
}

// StageError is the error a stage returns for err, what a Call's Run
// returned: err itself when it is an *text2sql.OutputError (the answer
// was unusable) or ctx has ended, else err wrapped with the stage's name
// ("judge: model call: …").
func StageError(ctx context.Context, stage string, err error) error {
	var oe *text2sql.OutputError
	if errors.As(err, &oe) || ctx.Err() != nil {
		return err
	}
	return fmt.Errorf("%s: %w", stage, err)
}

// Call is one structured model call with a bounded re-ask.
type Call struct {
	Model       text2sql.Model  // the model called
	System      string          // the system instruction
	User        string          // the first user message
	Schema      json.RawMessage // the answer's JSON Schema (structured output)
	Temperature float64         // in [0, 2]
	// MaxReasks bounds the extra calls made when Parse returns a *Retry.
	MaxReasks int
	// Parse reads an answer: nil when it is usable, a *Retry when the
	// model should try again, any other error to stop at once.
	Parse func(text string) error
}

// maxEcho bounds the malformed answer echoed back in a re-ask, in runes.
const maxEcho = 1000

// Run makes the call and returns every model call made, each with its
// prompt (Transcript), and the error that ended it: nil, the
// *Retry's Err when the re-asks are spent, the model's error wrapped, or
// ctx's error.
func (c Call) Run(ctx context.Context) ([]text2sql.ModelCall, error) {
	if c.Model == nil {
		return nil, fmt.Errorf("%w: no model", text2sql.ErrInvalidConfig)
	}
	temp := c.Temperature
	msgs := []text2sql.Message{{Role: text2sql.RoleUser, Content: c.User}}
	var calls []text2sql.ModelCall
	for n := 0; ; n++ {
		if err := ctx.Err(); err != nil {
			return calls, err
		}
		req := text2sql.ModelRequest{System: c.System, Messages: append([]text2sql.Message(nil), msgs...), Schema: c.Schema, Temperature: &temp}
		start := time.Now()
		resp, err := c.Model.Complete(ctx, req)
		if err != nil {
			return calls, fmt.Errorf("model call: %w", err)
		}
		if resp == nil {
			return calls, fmt.Errorf("model call: %w: no response", text2sql.ErrModel)
		}
		calls = append(calls, text2sql.ModelCall{Model: resp.Model, Usage: resp.Usage, Start: start, Duration: time.Since(start),
			Attempts: resp.Attempts, Prompt: Transcript(req.System, req.Messages)})
		perr := c.Parse(resp.Text)
		if perr == nil {
			return calls, nil
		}
		var r *Retry
		if !errors.As(perr, &r) {
			return calls, perr
		}
		if n >= c.MaxReasks {
			return calls, r.Err
		}
		msgs = append(msgs,
			text2sql.Message{Role: text2sql.RoleAssistant, Content: Cut(resp.Text, maxEcho)},
			text2sql.Message{Role: text2sql.RoleUser, Content: r.Note})
	}
}

// Object is a decoded JSON object with its values kept raw.
type Object map[string]json.RawMessage

// Get returns the value of the first of keys present: an exact match,
// else one that differs in case or in "_" and "-".
func (o Object) Get(keys ...string) (json.RawMessage, bool) {
	for _, k := range keys {
		if v, ok := o[k]; ok {
			return v, true
		}
	}
	norm := func(s string) string {
		return strings.NewReplacer("_", "", "-", "", " ", "").Replace(strings.ToLower(s))
	}
	for _, k := range keys {
		for ok, v := range o {
			if norm(ok) == norm(k) {
				return v, true
			}
		}
	}
	return nil, false
}

// String reads a string value (any other JSON value is rendered as JSON;
// null is "").
func String(v json.RawMessage) string {
	var s string
	if err := json.Unmarshal(v, &s); err == nil {
		return strings.TrimSpace(s)
	}
	if t := strings.TrimSpace(string(v)); t != "null" {
		return t
	}
	return ""
}

// Strings reads a list of strings: an array (non-string entries rendered
// as JSON, empty ones dropped), or one string split into lines.
func Strings(v json.RawMessage) []string {
	var arr []json.RawMessage
	if err := json.Unmarshal(v, &arr); err == nil {
		var out []string
		for _, x := range arr {
			if s := String(x); s != "" {
				out = append(out, s)
			}
		}
		return out
	}
	var out []string
	for _, line := range strings.Split(String(v), "\n") {
		line = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(line), "-*•"))
		if line != "" {
			out = append(out, line)
		}
	}
	return out
}

// Bool reads a boolean leniently: true/false, or the strings "true",
// "false", "yes", "no".
func Bool(v json.RawMessage) (b, ok bool) {
	if err := json.Unmarshal(v, &b); err == nil {
		return b, true
	}
	var s string
	if err := json.Unmarshal(v, &s); err == nil {
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "true", "yes":
			return true, true
		case "false", "no":
			return false, true
		}
	}
	return false, false
}

// maxObjectStarts bounds the "{" positions tried, so a pathological
// answer costs little.
const maxObjectStarts = 256

// FindObject returns the last JSON object in text (whole, in a code
// fence or after prose) for which accept is true, searching nested
// objects too. It never panics.
func FindObject(text string, accept func(Object) bool) (Object, bool) {
	return FindObjectIn(text, nil, accept)
}

// FindObjectIn is FindObject for a text whose code blocks are blocks
// (extract.Fences, in order): a "{" inside a block that holds no JSON (no
// json tag, content not starting with "{"), such as SQL with a JSON
// literal, is skipped. A decoder is started at each other "{" that can
// open an object; an object is decoded from the whole rest of the text, so
// a fence inside one of its strings does not cut it. Nested objects are
// searched in key order.
func FindObjectIn(text string, blocks []extract.Fence, accept func(Object) bool) (Object, bool) {
	var (
		last  Object
		found bool
		tries int
		bi    int // the first block that does not end before i
	)
	for i := 0; i < len(text) && tries < maxObjectStarts; i++ {
		if text[i] != '{' || !ObjectStart(text[i+1:]) {
			continue
		}
		for bi < len(blocks) && blocks[bi].End <= i {
			bi++
		}
		if bi < len(blocks) && blocks[bi].Start <= i {
			if b := blocks[bi]; b.Lang != "json" && !strings.HasPrefix(strings.TrimSpace(b.Content), "{") {
				continue
			}
		}
		tries++
		dec := json.NewDecoder(strings.NewReader(text[i:]))
		var v any
		if err := dec.Decode(&v); err != nil {
			continue
		}
		if o, ok := find(v, accept, 0); ok {
			last, found = o, true
		}
		i += int(dec.InputOffset()) - 1 // skip the object: nested ones were searched
	}
	return last, found
}

// ObjectStart reports whether what follows a "{" can continue a JSON
// object: white space, then a quote or "}".
func ObjectStart(s string) bool {
	s = strings.TrimLeft(s, " \t\r\n")
	return s != "" && (s[0] == '"' || s[0] == '}')
}

// find returns v as an Object when it is an object accept takes, else the
// first such object nested in it.
func find(v any, accept func(Object) bool, depth int) (Object, bool) {
	if depth > 4 {
		return nil, false
	}
	switch x := v.(type) {
	case map[string]any:
		o := Object{}
		for k, val := range x {
			b, err := json.Marshal(val)
			if err != nil {
				return nil, false
			}
			o[k] = b
		}
		if accept(o) {
			return o, true
		}
		for _, k := range slices.Sorted(maps.Keys(x)) {
			if o, ok := find(x[k], accept, depth+1); ok {
				return o, true
			}
		}
	case []any:
		for _, val := range x {
			if o, ok := find(val, accept, depth+1); ok {
				return o, true
			}
		}
	}
	return nil, false
}

// Question is a request's question: q trimmed, else the retrieval's
// question trimmed (c may be nil); "" when both are blank.
func Question(q string, c *text2sql.Retrieval) string {
	q = strings.TrimSpace(q)
	if q == "" && c != nil {
		q = strings.TrimSpace(c.Question)
	}
	return q
}

// Cut returns s cut to at most n runes, with "…" when it was cut.
func Cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i := 0
	for k := 0; k < n; k++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return s[:i] + "…"
}

// OneLine collapses white space, newlines included.
func OneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// Indent indents the lines after the first of s by pad.
func Indent(s, pad string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\n", "\n"+pad)
}

// Transcript renders a system instruction and messages as one text, the
// form kept in ModelCall.Prompt: "[system]\n…" then "\n\n[role]\n…" per
// message.
func Transcript(system string, msgs []text2sql.Message) string {
	var b strings.Builder
	b.WriteString("[system]\n")
	b.WriteString(system)
	for _, m := range msgs {
		b.WriteString("\n\n[" + string(m.Role) + "]\n")
		b.WriteString(m.Content)
	}
	return b.String()
}

// EstimateTokens estimates the number of tokens of s as a model would
// count them: one per four characters (runes), rounded up. It is the one
// estimate every stage budgets its prompts with.
func EstimateTokens(s string) int { return (utf8.RuneCountInString(s) + 3) / 4 }

// AskText asks model for a JSON object {field: text} (structured output
// where the provider has it) and returns the text, trimmed; an answer
// without the field, or with it empty, is re-asked up to maxReasks times.
// Errors as Run's: the last one an *text2sql.OutputError wrapping
// ErrInvalidOutput.
func AskText(ctx context.Context, model text2sql.Model, system, user, field string, maxReasks int) (string, []text2sql.ModelCall, error) {
	schema, err := json.Marshal(map[string]any{"type": "object", "properties": map[string]any{field: map[string]string{"type": "string"}}, "required": []string{field}})
	if err != nil {
		return "", nil, err
	}
	var text string
	calls, err := Call{
		Model: model, System: system, User: user, Schema: schema, MaxReasks: maxReasks,
		Parse: func(answer string) error {
			if obj, ok := FindObject(answer, func(o Object) bool { return o[field] != nil }); ok {
				text = strings.TrimSpace(String(obj[field]))
			}
			if text == "" {
				return &Retry{Note: fmt.Sprintf("Answer as JSON: {%q: \"...\"}.", field),
					Err: Invalid(answer, "no %s", field)}
			}
			return nil
		},
	}.Run(ctx)
	return text, calls, err
}

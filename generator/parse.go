package generator

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/extract"
	"github.com/text2sql-go/text2sql/internal/sqltext"
	"github.com/text2sql-go/text2sql/internal/stagekit"
)

// Parse reads a model's answer. It never panics, whatever text holds.
//
// The expected answer is a JSON object {"answerable": bool, "sql": string,
// "explanation": string}. Parse finds it as the whole text, in a fenced
// block (```json) or after prose ("Final answer: {…}"): a JSON decoder is
// started at each "{", and the last object with one of those keys wins
// ("query" and "sql_query" are read as "sql"; a missing answerable counts
// as true). Without such an object, the SQL is taken from the text itself
// — a fenced block, a "SQLQuery:"-style label, a statement between lines
// of prose — recognised with the SQL lexer, whole, so clauses like WITH
// ROLLUP or WITHIN GROUP never cut it short. Writes and several
// statements are returned as written: refusing them is the guard's job.
//
// The SQL returned has no fences, labels or final semicolon; leading
// comments stay.
//
// Results:
//   - answerable false → a Candidate with Answerable false and empty SQL
//     (a decline, not an error);
//   - SQL found → a Candidate with Answerable true and the SQL;
//   - text that tries to be JSON but is not valid, or a JSON sql that is
//     not a string → an *text2sql.OutputError wrapping
//     text2sql.ErrInvalidOutput;
//   - no SQL at all (prose, an empty answer, answerable true with an empty
//     sql) → an *text2sql.OutputError wrapping text2sql.ErrNoSQL.
//
// The OutputError's Raw is text, unchanged.
func Parse(text string) (*text2sql.Candidate, error) { return parse(text, sqltext.StripTrailing) }

// parse is Parse with strip, which removes the comments and semicolons
// after the SQL of a JSON answer by the target engine's lexical rules.
func parse(text string, strip func(string) string) (*text2sql.Candidate, error) {
	fail := func(sentinel error, format string, args ...any) error {
		err := sentinel
		if format != "" {
			err = fmt.Errorf("%w: "+format, append([]any{sentinel}, args...)...)
		}
		return &text2sql.OutputError{Raw: text, Err: err}
	}
	if strings.TrimSpace(text) == "" {
		return nil, fail(text2sql.ErrNoSQL, "empty answer")
	}
	blocks := extract.Fences(text)
	if obj, ok := lastAnswerObject(text, blocks); ok {
		return fromJSON(obj, fail, strip)
	}
	if sql, ok := extract.SQL(text); ok {
		return &text2sql.Candidate{Answerable: true, SQL: sql}, nil
	}
	if looksLikeJSON(text, blocks) {
		return nil, fail(text2sql.ErrInvalidOutput, "the answer looks like JSON but is not a valid JSON object with answerable, sql and explanation")
	}
	return nil, fail(text2sql.ErrNoSQL, "")
}

// answer is a decoded answer object, fields kept raw for lenient reading.
type answer map[string]json.RawMessage

// get returns the first of keys present: an exact match, else one that
// differs in case (the first in sorted order).
func (a answer) get(keys ...string) (json.RawMessage, bool) {
	for _, k := range keys {
		if v, ok := a[k]; ok {
			return v, true
		}
	}
	names := slices.Sorted(maps.Keys(a))
	for _, k := range keys {
		for _, ak := range names {
			if strings.EqualFold(ak, k) {
				return a[ak], true
			}
		}
	}
	return nil, false
}

var (
	sqlKeys         = []string{"sql", "query", "sql_query", "sqlquery"}
	answerableKeys  = []string{"answerable"}
	explanationKeys = []string{"explanation", "reasoning", "reason"}
)

// isAnswer reports whether a has one of an answer's keys, with values of
// the right types (sql a string or null, answerable a boolean or a string),
// so an unrelated object that happens to have a "query" key is skipped.
func (a answer) isAnswer() bool {
	s, hasSQL := a.get(sqlKeys...)
	ok, hasOK := a.get(answerableKeys...)
	_, hasExp := a.get("explanation")
	if !hasSQL && !hasOK && !hasExp {
		return false
	}
	if hasSQL && !isNull(s) && (len(bytes.TrimSpace(s)) == 0 || bytes.TrimSpace(s)[0] != '"') {
		return false
	}
	if hasOK {
		if _, valid := stagekit.Bool(ok); !valid {
			return false
		}
	}
	return true
}

// fromJSON turns an answer object into a candidate.
func fromJSON(a answer, fail func(error, string, ...any) error, strip func(string) string) (*text2sql.Candidate, error) {
	c := &text2sql.Candidate{Answerable: true}
	if v, ok := a.get(explanationKeys...); ok {
		c.Explanation = stagekit.String(v)
	}
	if v, ok := a.get(answerableKeys...); ok {
		b, valid := stagekit.Bool(v)
		if !valid {
			return nil, fail(text2sql.ErrInvalidOutput, "answerable is %s, not a boolean", stagekit.Cut(string(v), 40))
		}
		c.Answerable = b
	}
	if !c.Answerable {
		return c, nil
	}
	v, ok := a.get(sqlKeys...)
	if !ok || isNull(v) {
		return nil, fail(text2sql.ErrNoSQL, "the answer has no sql")
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return nil, fail(text2sql.ErrInvalidOutput, "sql is %s, not a string", stagekit.Cut(string(v), 40))
	}
	c.SQL = cleanSQL(s, strip)
	if c.SQL == "" {
		return nil, fail(text2sql.ErrNoSQL, "answerable is true but sql is empty")
	}
	return c, nil
}

// cleanSQL tidies the sql of a JSON answer: the statement inside a code
// fence, without a "SQL:" label and the final semicolon. Anything else is
// kept as written — the model meant it as SQL, and the guard decides.
func cleanSQL(s string, strip func(string) string) string {
	s = strings.TrimSpace(s)
	if strings.Contains(s, "```") || strings.Contains(s, "~~~") {
		if x, ok := extract.SQL(s); ok {
			return x
		}
	}
	if i := strings.IndexByte(s, ':'); i > 0 && i <= 40 && !strings.ContainsAny(s[:i], "\n'\"`();") {
		if rest := s[i+1:]; extract.StartsStatement(rest) && !extract.StartsStatement(s) {
			s = rest
		}
	}
	return strip(strings.TrimSpace(s))
}

func isNull(v json.RawMessage) bool { return string(bytes.TrimSpace(v)) == "null" }

// lastAnswerObject finds the last JSON answer object in text, skipping
// "{" inside code blocks that hold no JSON (stagekit.FindObjectIn).
func lastAnswerObject(text string, blocks []extract.Fence) (answer, bool) {
	o, ok := stagekit.FindObjectIn(text, blocks, func(o stagekit.Object) bool { return answer(o).isAnswer() })
	return answer(o), ok
}

// looksLikeJSON reports whether text tries to be a JSON answer: it starts
// with "{" or "[", has a json block, or has an object opening with a quoted
// key outside SQL blocks.
func looksLikeJSON(text string, blocks []extract.Fence) bool {
	t := strings.TrimSpace(text)
	if strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[") {
		return true
	}
	pos := 0
	check := func(r string) bool {
		for i := 0; i < len(r); i++ {
			if r[i] == '{' && stagekit.ObjectStart(r[i+1:]) && strings.TrimLeft(r[i+1:], " \t\r\n")[0] == '"' {
				return true
			}
		}
		return false
	}
	for _, b := range blocks {
		if b.Lang == "json" || check(text[pos:b.Start]) {
			return true
		}
		pos = b.End
	}
	return check(text[pos:])
}

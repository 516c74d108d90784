package judge

import (
	"encoding/json"
	"strings"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/stagekit"
)

// verdictSchema is the JSON Schema of a verdict.
const verdictSchema = `{
  "type": "object",
  "properties": {
    "ok": {"type": "boolean", "description": "true when the result answers the question"},
    "stage": {"type": "string", "enum": ["retrieval", "plan", "sql", ""], "description": "the earliest faulty stage when ok is false; empty when ok is true"},
    "reason": {"type": "string", "description": "what is wrong, or why the answer is right"},
    "hints": {"type": "array", "items": {"type": "string"}, "description": "concrete instructions for the redo of the faulty stage"},
    "terms": {"type": "array", "items": {"type": "string"}, "description": "for a retrieval fault: words to search the knowledge base with"},
    "tables": {"type": "array", "items": {"type": "string"}, "description": "for a retrieval fault: tables that must be shown"}
  },
  "required": ["ok", "stage", "reason", "hints", "terms", "tables"],
  "additionalProperties": false
}`

// VerdictSchema returns the JSON Schema a verdict must follow, as passed
// in ModelRequest.Schema: ok (boolean), stage ("retrieval", "plan", "sql"
// or ""), reason (string), hints, terms and tables (string arrays), all
// required. Each call returns a new copy.
func VerdictSchema() json.RawMessage { return json.RawMessage(verdictSchema) }

// stageNames maps the names models use for a stage.
var stageNames = map[string]text2sql.Stage{
	"retrieval": text2sql.StageRetrieval, "retrieve": text2sql.StageRetrieval, "schema": text2sql.StageRetrieval,
	"schemaretrieval": text2sql.StageRetrieval, "context": text2sql.StageRetrieval, "schemalinking": text2sql.StageRetrieval,
	"plan": text2sql.StagePlan, "planning": text2sql.StagePlan, "planner": text2sql.StagePlan,
	"sql": text2sql.StageSQL, "generation": text2sql.StageSQL, "sqlgeneration": text2sql.StageSQL, "generate": text2sql.StageSQL,
	"query": text2sql.StageSQL, "generator": text2sql.StageSQL,
}

// ParseVerdict reads a verdict from a model's answer: a JSON object with
// "ok" (or "correct", "valid"), whole, in a code fence or after prose.
// Lenient with shapes models produce: booleans as "yes"/"no" strings,
// hints as one string, stage names such as "generation" or "planning".
// It never panics.
//
// An accepted verdict has no stage, terms or tables. A rejection must
// name its stage: retrieval, plan or sql.
//
// Errors: an *text2sql.OutputError wrapping text2sql.ErrInvalidOutput,
// with text as Raw, when there is no such object, ok is not a boolean, or
// a rejection names no known stage.
func ParseVerdict(text string) (*text2sql.Verdict, error) {
	fail := func(format string, args ...any) error {
		return stagekit.Invalid(text, format, args...)
	}
	okKeys := []string{"ok", "correct", "valid", "accepted"}
	obj, found := stagekit.FindObject(text, func(o stagekit.Object) bool {
		_, ok := o.Get(okKeys...)
		return ok
	})
	if !found {
		return nil, fail("no JSON object with ok")
	}
	raw, _ := obj.Get(okKeys...)
	ok, valid := stagekit.Bool(raw)
	if !valid {
		return nil, fail("ok is %s, not a boolean", stagekit.Cut(string(raw), 40))
	}
	v := &text2sql.Verdict{OK: ok}
	if r, has := obj.Get("reason", "explanation", "reasoning"); has {
		v.Reason = stagekit.String(r)
	}
	if r, has := obj.Get("hints", "hint", "fix", "suggestions"); has {
		v.Hints = stagekit.Strings(r)
	}
	if ok {
		return v, nil
	}
	if r, has := obj.Get("terms", "search_terms", "keywords"); has {
		v.Terms = stagekit.Strings(r)
	}
	if r, has := obj.Get("tables", "missing_tables", "required_tables"); has {
		v.Tables = stagekit.Strings(r)
	}
	r, has := obj.Get("stage", "faulty_stage", "fault")
	if !has {
		return nil, fail("a rejection must name its stage (retrieval, plan or sql)")
	}
	name := strings.NewReplacer("_", "", "-", "", " ", "").Replace(strings.ToLower(stagekit.String(r)))
	st, known := stageNames[name]
	if !known {
		return nil, fail("stage %q is not retrieval, plan or sql", stagekit.Cut(stagekit.String(r), 40))
	}
	v.Stage = st
	if st != text2sql.StageRetrieval {
		v.Terms, v.Tables = nil, nil
	}
	return v, nil
}

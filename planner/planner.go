// Package planner is the default text2sql.Planner: before any SQL is
// written, a language model decomposes the question into a structured plan
// over the retrieved schema — the database, the objects it uses (tables,
// columns, literal values), the ordered steps (joins, filters, grouping,
// ordering) and the shape of the answer. The generator then translates
// the plan instead of re-interpreting the question.
//
// The model answers a JSON object (PlanSchema). The plan is validated
// against the schema model: a table or column that does not exist is not
// silently kept but fed back to the model, naming the unknown objects and
// the closest real names, a bounded number of times; names that exist are
// rewritten to the schema's spelling.
package planner

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/stagekit"
	"github.com/text2sql-go/text2sql/lint"
	"github.com/text2sql-go/text2sql/schema"
)

// Options configure a Planner. The zero value is usable: SQLite (or the
// context's dialect), temperature 0, one re-ask, no schema validation.
type Options struct {
	// Dialect is the target dialect. Empty means the request context's,
	// else the schema's, else SQLite.
	Dialect text2sql.Dialect
	// Schema is the schema model the plan's objects are validated
	// against. Nil skips name validation (the plan's shape is still
	// checked).
	Schema *schema.Database
	// MaxReasks bounds the extra calls made when an answer is malformed
	// or names unknown objects: 0 means the default, 1; a negative value
	// means none.
	MaxReasks int
	// Temperature is the sampling temperature, in [0, 2].
	Temperature float64
	// Catalog says Schema is a catalog of databases (executor/catalog,
	// tables named <database>.<table>): a plan's Database, when the model
	// leaves it empty or names the whole catalog, is then the database of
	// the plan's first table, where the question is routed.
	Catalog bool
}

// Planner plans with a language model. It implements text2sql.Planner and
// is safe for concurrent use.
type Planner struct {
	model text2sql.Model
	opts  Options
}

var _ text2sql.Planner = (*Planner)(nil)

// New returns a Planner calling model. model may be nil for a Planner
// that only renders prompts; Plan then fails.
//
// Errors wrap text2sql.ErrInvalidConfig: an unknown Dialect or a
// Temperature outside [0, 2].
func New(model text2sql.Model, opts Options) (*Planner, error) {
	if err := stagekit.CheckDialect("planner", opts.Dialect); err != nil {
		return nil, err
	}
	if err := stagekit.CheckTemperature("planner", opts.Temperature); err != nil {
		return nil, err
	}
	opts.MaxReasks = stagekit.Reasks(opts.MaxReasks)
	return &Planner{model: model, opts: opts}, nil
}

func (p *Planner) dialect(req text2sql.PlanRequest) text2sql.Dialect {
	var schemaDialect text2sql.Dialect
	if p.opts.Schema != nil {
		schemaDialect = p.opts.Schema.Dialect
	}
	return stagekit.ResolveDialect(p.opts.Dialect, req.Retrieval, schemaDialect)
}

// Prompt returns the system instruction and the user message Plan would
// send for req, without calling a model. Errors: text2sql.ErrEmptyQuestion
// when the question (req.Question, else req.Retrieval.Question) is blank.
func (p *Planner) Prompt(req text2sql.PlanRequest) (system, user string, err error) {
	q := stagekit.Question(req.Question, req.Retrieval)
	if q == "" {
		return "", "", text2sql.ErrEmptyQuestion
	}
	return systemInstruction(p.dialect(req)), userMessage(q, req), nil
}

// Plan asks the model for a plan of req and returns it validated, with
// every object named as the schema spells it and Plan.Calls recording
// every model call (with its prompt). Database is the schema's name when
// the model leaves it empty.
//
// When the answer is malformed (see Parse) or names tables or columns the
// schema does not have (see Validate), the model is told what is wrong —
// the unknown objects and the closest real names — and asked again, at
// most Options.MaxReasks times.
//
// Errors:
//   - an *text2sql.OutputError wrapping text2sql.ErrInvalidOutput, with
//     the last raw answer, when no answer was usable after the re-asks;
//     its message names the unknown objects. The returned Plan is then
//     non-nil, empty but for Calls, so a trace can count them;
//   - a model failure, wrapped (errors.As finds a *text2sql.ModelError
//     when the model returned one), with the calls made before it;
//   - text2sql.ErrEmptyQuestion; text2sql.ErrInvalidConfig without a
//     model; ctx's error when it ends between calls.
func (p *Planner) Plan(ctx context.Context, req text2sql.PlanRequest) (*text2sql.Plan, error) {
	system, user, err := p.Prompt(req)
	if err != nil {
		return nil, err
	}
	if p.model == nil {
		return nil, fmt.Errorf("%w: planner: no model", text2sql.ErrInvalidConfig)
	}
	var plan *text2sql.Plan
	calls, err := stagekit.Call{
		Model: p.model, System: system, User: user, Schema: PlanSchema(),
		Temperature: p.opts.Temperature, MaxReasks: p.opts.MaxReasks,
		Parse: func(text string) error {
			pl, err := Parse(text)
			if err != nil {
				return &stagekit.Retry{Note: reaskMalformed(err), Err: err}
			}
			if probs := p.Validate(pl); len(probs) > 0 {
				return &stagekit.Retry{Note: reaskUnknown(probs), Err: stagekit.Invalid(text, "the plan names objects not in the schema: %s", describe(probs))}
			}
			plan = pl
			return nil
		},
	}.Run(ctx)
	if err != nil {
		return &text2sql.Plan{Calls: calls}, stagekit.StageError(ctx, "planner", err)
	}
	if p.opts.Schema != nil && (plan.Database == "" || plan.Database == p.opts.Schema.Name) {
		plan.Database = p.opts.Schema.Name
		if p.opts.Catalog {
			if db := p.routed(plan); db != "" {
				plan.Database = db
			}
		}
	}
	plan.Calls = calls
	return plan, nil
}

// Problem is an object of a plan that the schema does not have.
type Problem struct {
	// Object is the object as the plan wrote it.
	Object text2sql.PlanObject
	// Reason says what is wrong: "no such table", "no such column",
	// "unknown kind".
	Reason string
	// Hint names the closest real object, or "".
	Hint string
}

// String renders the problem for a re-ask: "column students.gpa: no such
// column in table students (the columns of students are …)".
func (pr Problem) String() string {
	s := string(pr.Object.Kind) + " " + strings.TrimSpace(pr.Object.Name) + ": " + pr.Reason
	if pr.Hint != "" {
		s += " (" + pr.Hint + ")"
	}
	return s
}

func describe(probs []Problem) string {
	var parts []string
	for _, pr := range probs {
		parts = append(parts, pr.String())
	}
	return strings.Join(parts, "; ")
}

// Validate checks plan's objects against Options.Schema and returns what
// is wrong, or nil. Objects that exist are rewritten in place to the
// schema's spelling ("Students.First_Name" → "students.first_name").
// A table object names a table ("name" or "schema.name"); a column or
// value object names a column as "table.column" (or "schema.table.column"),
// or a bare column that some table has. Without a schema only the kinds
// are checked.
func (p *Planner) Validate(plan *text2sql.Plan) []Problem {
	var probs []Problem
	db := p.opts.Schema
	for i := range plan.Objects {
		o := &plan.Objects[i]
		o.Kind = normKind(string(o.Kind))
		switch o.Kind {
		case text2sql.ObjectTable, text2sql.ObjectColumn, text2sql.ObjectValue:
		default:
			probs = append(probs, Problem{Object: *o, Reason: "unknown kind (use table, column or value)"})
			continue
		}
		if db == nil {
			continue
		}
		parts := splitName(o.Name)
		if len(parts) == 0 {
			if o.Kind == text2sql.ObjectValue {
				continue // a value that filters no particular column
			}
			probs = append(probs, Problem{Object: *o, Reason: "empty name"})
			continue
		}
		if o.Kind == text2sql.ObjectTable {
			t := lookup(db, parts)
			if t == nil {
				name := strings.Join(parts, ".")
				probs = append(probs, Problem{Object: *o, Reason: "no such table", Hint: lint.Suggest(db, text2sql.KindUnknownTable, name, "")})
				continue
			}
			o.Name = t.QualifiedName()
			continue
		}
		name, pr := resolveColumn(db, parts)
		if pr != nil {
			pr.Object = *o
			probs = append(probs, *pr)
			continue
		}
		o.Name = name
	}
	return probs
}

// resolveColumn finds the column parts name and returns it as
// "table.column" in the schema's spelling.
// routed returns the catalog database of plan's first table or column:
// the first part of its table's name, "" when it names none.
func (p *Planner) routed(plan *text2sql.Plan) string {
	for _, o := range plan.Objects {
		name := o.Name
		if o.Kind != text2sql.ObjectTable {
			name = name[:max(strings.LastIndexByte(name, '.'), 0)]
		}
		if t := p.opts.Schema.Lookup(name); t != nil && t.Schema != "" {
			db, _, _ := strings.Cut(t.Schema, ".")
			return db
		}
	}
	return ""
}

func resolveColumn(db *schema.Database, parts []string) (string, *Problem) {
	col := parts[len(parts)-1]
	if len(parts) == 1 {
		var owners []*schema.Table
		for _, t := range db.Tables {
			if t.Column(col) != nil {
				owners = append(owners, t)
			}
		}
		switch len(owners) {
		case 0:
			return "", &Problem{Reason: "no such column in any table", Hint: closestColumn(db, nil, col)}
		case 1:
			return owners[0].QualifiedName() + "." + owners[0].Column(col).Name, nil
		}
		return col, nil // several tables have it; the plan's steps say which
	}
	// A name may itself hold a dot: try every split, the last first.
	for i := len(parts) - 1; i >= 1; i-- {
		if t := lookup(db, parts[:i]); t != nil {
			if c := t.Column(strings.Join(parts[i:], ".")); c != nil {
				return t.QualifiedName() + "." + c.Name, nil
			}
		}
	}
	tname := strings.Join(parts[:len(parts)-1], ".")
	t := lookup(db, parts[:len(parts)-1])
	if t == nil {
		hint := lint.Suggest(db, text2sql.KindUnknownTable, tname, "")
		return "", &Problem{Reason: "no such table " + tname, Hint: hint}
	}
	c := t.Column(col)
	if c == nil {
		hint := closestColumn(db, t, col)
		if hint == "" {
			hint = "the columns of " + t.QualifiedName() + " are " + columnList(t)
		}
		return "", &Problem{Reason: "no such column in table " + t.QualifiedName(), Hint: hint}
	}
	return t.QualifiedName() + "." + c.Name, nil
}

// lookup finds the table parts names; a qualifier naming the default
// namespace (SQLite's main, PostgreSQL's public, the database's own name)
// may be left out.
func lookup(db *schema.Database, parts []string) *schema.Table {
	if len(parts) == 0 {
		return nil
	}
	if t := db.Lookup(strings.Join(parts, ".")); t != nil {
		return t
	}
	if len(parts) > 1 {
		switch q := strings.ToLower(parts[len(parts)-2]); {
		case q == "main" || q == "temp" || q == "public" || strings.EqualFold(q, db.Name):
			return db.Lookup(parts[len(parts)-1])
		}
	}
	return nil
}

// maxListed bounds the columns a hint lists.
const maxListed = 40

// columnList lists t's columns for a hint.
func columnList(t *schema.Table) string {
	var names []string
	for i, c := range t.Columns {
		if i == maxListed {
			names = append(names, fmt.Sprintf("… (%d more)", len(t.Columns)-maxListed))
			break
		}
		names = append(names, c.Name)
	}
	return strings.Join(names, ", ")
}

// closestColumn suggests where col is: the tables that have it, else the
// closest column of t (or of any table).
func closestColumn(db *schema.Database, t *schema.Table, col string) string {
	q := ""
	name := col
	if t != nil {
		q = "SELECT 1 FROM " + schema.QuoteTable(db.Dialect, t)
		name = t.Name + "." + col
	} else if len(db.Tables) > 0 {
		var names []string
		for _, x := range db.Tables {
			names = append(names, schema.QuoteTable(db.Dialect, x))
		}
		q = "SELECT 1 FROM " + strings.Join(names, ", ")
	}
	return lint.Suggest(db, text2sql.KindUnknownColumn, name, q)
}

// normKind lower-cases a kind and maps plurals and synonyms.
func normKind(k string) text2sql.ObjectKind {
	k = strings.ToLower(strings.TrimSpace(k))
	switch k {
	case "tables", "relation", "view":
		return text2sql.ObjectTable
	case "columns", "field", "attribute":
		return text2sql.ObjectColumn
	case "values", "literal", "filter", "constant":
		return text2sql.ObjectValue
	}
	return text2sql.ObjectKind(k)
}

// splitName splits a dotted name and unquotes its parts.
func splitName(name string) []string {
	var parts []string
	for _, p := range strings.Split(strings.TrimSpace(name), ".") {
		p = strings.TrimSpace(p)
		if len(p) >= 2 {
			switch {
			case p[0] == '"' && p[len(p)-1] == '"', p[0] == '`' && p[len(p)-1] == '`', p[0] == '[' && p[len(p)-1] == ']':
				p = p[1 : len(p)-1]
			}
		}
		if p != "" {
			parts = append(parts, p)
		}
	}
	return parts
}

// reaskMalformed tells the model its answer could not be read.
func reaskMalformed(err error) string {
	d := strings.TrimPrefix(strings.TrimPrefix(err.Error(), text2sql.ErrInvalidOutput.Error()), ": ")
	return "Your last answer could not be read as a plan (" + d + ").\n" + replyFormat
}

// reaskUnknown tells the model which objects do not exist.
func reaskUnknown(probs []Problem) string {
	var b strings.Builder
	b.WriteString("Your plan names objects that are not in the schema:\n")
	for _, pr := range probs {
		b.WriteString("- " + pr.String() + "\n")
	}
	b.WriteString("Use only the tables and columns of the schema shown, spelled exactly as there, and correct the steps that used these objects.\n")
	b.WriteString(replyFormat)
	return b.String()
}

const replyFormat = `Reply again with exactly one JSON object and nothing else — no prose, no code fences:
{"database": "…", "objects": [{"kind": "table" | "column" | "value", "name": "…", "value": "…"}], "instruction": ["step 1", "…"], "output": "…"}`

// planSchema is the JSON Schema of a plan.
const planSchema = `{
  "type": "object",
  "properties": {
    "database": {"type": "string", "description": "the database the plan reads"},
    "objects": {
      "type": "array",
      "description": "every table, column and literal value the query needs",
      "items": {
        "type": "object",
        "properties": {
          "kind": {"type": "string", "enum": ["table", "column", "value"]},
          "name": {"type": "string", "description": "a table, a column as table.column, or for a value the column it filters"},
          "value": {"type": "string", "description": "for a value, the literal as stored; empty otherwise"}
        },
        "required": ["kind", "name", "value"],
        "additionalProperties": false
      }
    },
    "instruction": {"type": "array", "items": {"type": "string"}, "description": "ordered steps: joins with their keys, filters, grouping, aggregation, ordering, limits"},
    "output": {"type": "string", "description": "the columns of the answer, in order, and its shape"}
  },
  "required": ["database", "objects", "instruction", "output"],
  "additionalProperties": false
}`

// PlanSchema returns the JSON Schema a plan must follow, as passed in
// ModelRequest.Schema: database and output strings, objects (kind, name,
// value) and instruction (strings), all required. Each call returns a new
// copy.
func PlanSchema() json.RawMessage { return json.RawMessage(planSchema) }

// Parse reads a plan from a model's answer: a JSON object with
// "instruction" (or "steps") and/or "objects", whole, in a code fence or
// after prose. It is lenient with shapes models produce: instruction as
// one string (split into lines), objects with "type" for "kind" or
// "table"/"column" fields, output as any JSON value. It never panics.
//
// Errors: an *text2sql.OutputError wrapping text2sql.ErrInvalidOutput,
// with text as Raw, when there is no such object or it has neither steps
// nor objects.
func Parse(text string) (*text2sql.Plan, error) {
	fail := func(format string, args ...any) error {
		return stagekit.Invalid(text, format, args...)
	}
	obj, ok := stagekit.FindObject(text, func(o stagekit.Object) bool {
		_, hasSteps := o.Get("instruction", "instructions", "steps")
		_, hasObjects := o.Get("objects")
		return hasSteps || hasObjects
	})
	if !ok {
		return nil, fail("no JSON object with objects and instruction")
	}
	plan := &text2sql.Plan{}
	if v, ok := obj.Get("database", "db"); ok {
		plan.Database = stagekit.String(v)
	}
	if v, ok := obj.Get("instruction", "instructions", "steps"); ok {
		plan.Instruction = stagekit.Strings(v)
	}
	if v, ok := obj.Get("output", "answer_shape"); ok {
		plan.Output = stagekit.String(v)
	}
	if v, ok := obj.Get("objects"); ok {
		var raw []json.RawMessage
		if err := json.Unmarshal(v, &raw); err != nil {
			return nil, fail("objects is not a list")
		}
		for _, r := range raw {
			o, err := parseObject(r)
			if err != nil {
				return nil, fail("%v", err)
			}
			plan.Objects = append(plan.Objects, o)
		}
	}
	if len(plan.Instruction) == 0 && len(plan.Objects) == 0 {
		return nil, fail("the plan has neither steps nor objects")
	}
	return plan, nil
}

// parseObject reads one plan object: {"kind","name","value"}, or a
// string "table t" / "t.c", or {"type", "table", "column", "value"}.
func parseObject(r json.RawMessage) (text2sql.PlanObject, error) {
	var s string
	if err := json.Unmarshal(r, &s); err == nil {
		s = strings.TrimSpace(s)
		if f := strings.Fields(s); len(f) == 2 && (normKind(f[0]) == text2sql.ObjectTable || normKind(f[0]) == text2sql.ObjectColumn) {
			return text2sql.PlanObject{Kind: normKind(f[0]), Name: f[1]}, nil
		}
		if strings.Contains(s, ".") {
			return text2sql.PlanObject{Kind: text2sql.ObjectColumn, Name: s}, nil
		}
		return text2sql.PlanObject{Kind: text2sql.ObjectTable, Name: s}, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(r, &m); err != nil {
		return text2sql.PlanObject{}, fmt.Errorf("an object of the plan is %s, not an object", stagekit.Cut(string(r), 40))
	}
	o := stagekit.Object(m)
	var po text2sql.PlanObject
	if v, ok := o.Get("kind", "type"); ok {
		po.Kind = normKind(stagekit.String(v))
	}
	if v, ok := o.Get("name"); ok {
		po.Name = stagekit.String(v)
	}
	if v, ok := o.Get("value"); ok {
		po.Value = stagekit.String(v)
	}
	if po.Name == "" {
		tbl, hasT := o.Get("table")
		col, hasC := o.Get("column")
		switch {
		case hasT && hasC:
			po.Name = stagekit.String(tbl) + "." + stagekit.String(col)
		case hasC:
			po.Name = stagekit.String(col)
		case hasT:
			po.Name = stagekit.String(tbl)
		}
	}
	if po.Kind == "" {
		switch {
		case po.Value != "":
			po.Kind = text2sql.ObjectValue
		case strings.Contains(po.Name, "."):
			po.Kind = text2sql.ObjectColumn
		default:
			po.Kind = text2sql.ObjectTable
		}
	}
	return po, nil
}

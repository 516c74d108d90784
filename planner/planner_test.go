package planner_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/demotest"
	"github.com/text2sql-go/text2sql/internal/stagekit/stagekittest"
	"github.com/text2sql-go/text2sql/llm/llmtest"
	"github.com/text2sql-go/text2sql/planner"
	"github.com/text2sql-go/text2sql/schema"
)

// demoSchema returns the schema model of the demo registrar database.
func demoSchema(t *testing.T) *schema.Database {
	t.Helper()
	_, ex := demotest.Open(t)
	return ex.Schema()
}

// demoContext is a retrieved context over students and enrollments.
func demoContext(db *schema.Database) *text2sql.Retrieval {
	tables := []*schema.Table{db.Lookup("students"), db.Lookup("enrollments")}
	return &text2sql.Retrieval{
		Question: "Which students have the highest average grade?",
		Dialect:  text2sql.DialectSQLite,
		Tables: []text2sql.TableRef{
			{Name: "students", Reason: "retrieved", Score: 0.03},
			{Name: "enrollments", Reason: "via example q3", Score: 0},
		},
		Schema: db.DDL(tables),
		Items: []text2sql.Item{
			{ID: "column:enrollments.grade_points", Kind: text2sql.ItemColumn, Text: "enrollments.grade_points: grade on a 0–4 scale, NULL unless completed.", Score: 0.03},
			{ID: "rule:average-grade", Kind: text2sql.ItemRule, Text: "An average grade means avg(grade_points) over completed enrollments.", Score: 0.02},
			{ID: "example:q3", Kind: text2sql.ItemExample, Text: "What is the average grade of each student?", SQL: "SELECT student_id, AVG(grade_points) FROM enrollments GROUP BY student_id", Score: 0.02},
			{ID: "example:bad", Kind: text2sql.ItemExample, Text: "Drop it", SQL: "DROP TABLE students", Score: 0.01},
		},
	}
}

func newPlanner(t *testing.T, m text2sql.Model, opts planner.Options) *planner.Planner {
	t.Helper()
	p, err := planner.New(m, opts)
	require.NoError(t, err)
	return p
}

const goodPlan = `{"database": "registrar",
 "objects": [{"kind": "table", "name": "Students", "value": ""},
             {"kind": "column", "name": "enrollments.grade_points", "value": ""},
             {"kind": "value", "name": "enrollments.status", "value": "completed"}],
 "instruction": ["Join enrollments to students on student_id.", "Keep completed enrollments.", "Average grade_points per student.", "Keep the students whose average equals the maximum (ties included)."],
 "output": "first_name, last_name, average grade; one row per top student"}`

// The plan's objects are validated and named as the schema spells them;
// Calls records the call with its prompt.
func TestPlanValid(t *testing.T) {
	db := demoSchema(t)
	m := llmtest.New(goodPlan)
	p := newPlanner(t, m, planner.Options{Schema: db})
	req := text2sql.PlanRequest{Question: "Which students have the highest average grade?", Retrieval: demoContext(db)}
	plan, err := p.Plan(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, "registrar", plan.Database)
	assert.Len(t, plan.Instruction, 4)
	assert.Contains(t, plan.Output, "one row per top student")
	require.Len(t, plan.Objects, 3)
	assert.Equal(t, "students", plan.Objects[0].Name)
	assert.Equal(t, "enrollments.grade_points", plan.Objects[1].Name)
	assert.Equal(t, text2sql.PlanObject{Kind: "value", Name: "enrollments.status", Value: "completed"}, plan.Objects[2])
	require.Len(t, plan.Calls, 1, "calls recorded")
	require.Equal(t, 1, m.CallCount(), "calls made")
	system, user, err := p.Prompt(req)
	require.NoError(t, err)
	got := m.Calls()[0]
	assert.Equal(t, system, got.System, "the model got a different prompt than Prompt returns")
	assert.Equal(t, user, got.Messages[0].Content, "the model got a different prompt than Prompt returns")
	assert.Contains(t, plan.Calls[0].Prompt, user)
	var sch map[string]any
	require.NoError(t, json.Unmarshal(got.Schema, &sch), "schema = %s", got.Schema)
	assert.Equal(t, "object", sch["type"])
	if assert.NotNil(t, got.Temperature) {
		assert.Zero(t, *got.Temperature)
	}
}

// Unknown objects are fed back with the closest real names; one re-ask
// fixes them.
func TestPlanUnknownObjectsReask(t *testing.T) {
	db := demoSchema(t)
	bad := `{"database": "registrar", "objects": [
	  {"kind": "table", "name": "student", "value": ""},
	  {"kind": "column", "name": "students.firstname", "value": ""},
	  {"kind": "column", "name": "enrollments.grade", "value": ""},
	  {"kind": "column", "name": "enrolments.status", "value": ""}],
	 "instruction": ["Join student to enrollments."], "output": "names"}`
	m := llmtest.New(bad, goodPlan)
	p := newPlanner(t, m, planner.Options{Schema: db})
	plan, err := p.Plan(context.Background(), text2sql.PlanRequest{Question: "Top students?", Retrieval: demoContext(db)})
	require.NoError(t, err)
	require.Equal(t, 2, m.CallCount())
	require.Len(t, plan.Calls, 2)
	second := m.Calls()[1]
	require.Len(t, second.Messages, 3, "re-ask conversation")
	require.Equal(t, text2sql.RoleAssistant, second.Messages[1].Role)
	require.Equal(t, bad, second.Messages[1].Content)
	note := second.Messages[2].Content
	for _, want := range []string{
		`table student: no such table (did you mean "students"?)`,
		`column students.firstname: no such column in table students (did you mean "first_name"`,
		`column enrollments.grade: no such column in table enrollments`,
		`grade_points, letter_grade`,
		`no such table enrolments (did you mean "enrollments"?)`,
	} {
		assert.Contains(t, note, want, "re-ask note")
	}
	assert.Equal(t, "students", plan.Objects[0].Name, "the corrected plan was not used")
}

// Unknown objects are never silently kept: after the re-asks, an
// OutputError names them and the calls are still recorded.
func TestPlanUnknownObjectsExhausted(t *testing.T) {
	db := demoSchema(t)
	bad := `{"database": "", "objects": [{"kind": "column", "name": "students.gpa", "value": ""}], "instruction": ["Sort by gpa."], "output": "names"}`
	for _, reasks := range []int{0, 2, -1} {
		m := llmtest.New(bad).RepeatLast()
		p := newPlanner(t, m, planner.Options{Schema: db, MaxReasks: reasks})
		plan, err := p.Plan(context.Background(), text2sql.PlanRequest{Question: "Best students?", Retrieval: demoContext(db)})
		var oe *text2sql.OutputError
		require.ErrorAs(t, err, &oe, "MaxReasks %d", reasks)
		assert.ErrorIs(t, err, text2sql.ErrInvalidOutput)
		assert.Equal(t, bad, oe.Raw)
		assert.Contains(t, err.Error(), "students.gpa")
		want := 1 + max(reasks, 0)
		if reasks == 0 {
			want = 2 // the default is one re-ask
		}
		assert.Equal(t, want, m.CallCount(), "MaxReasks %d: calls", reasks)
		require.NotNil(t, plan, "MaxReasks %d: the calls are recorded on an empty plan", reasks)
		assert.Len(t, plan.Calls, want, "MaxReasks %d", reasks)
		assert.Empty(t, plan.Objects, "MaxReasks %d", reasks)
	}
}

// A malformed answer is re-asked once, then an OutputError.
func TestPlanMalformed(t *testing.T) {
	m := llmtest.New(`{"objects": [`, "```json\n"+goodPlan+"\n```")
	p := newPlanner(t, m, planner.Options{})
	plan, err := p.Plan(context.Background(), text2sql.PlanRequest{Question: "q"})
	require.NoError(t, err)
	require.Len(t, plan.Instruction, 4)
	require.Equal(t, 2, m.CallCount())
	note := m.Calls()[1].Messages[2].Content
	assert.Contains(t, note, "could not be read as a plan")
	assert.Contains(t, note, `"instruction"`)
	m = llmtest.New("I would join the tables.").RepeatLast()
	_, err = newPlanner(t, m, planner.Options{}).Plan(context.Background(), text2sql.PlanRequest{Question: "q"})
	var oe *text2sql.OutputError
	if assert.ErrorAs(t, err, &oe) {
		assert.Equal(t, "I would join the tables.", oe.Raw)
	}
	assert.Equal(t, 2, m.CallCount())
}

// The prompt shows the question, the context (tables and why, schema,
// notes, rules, checked examples), the previous plan, the earlier attempts
// with their errors and reviews, and the hints.
func TestPlanPrompt(t *testing.T) {
	db := demoSchema(t)
	p := newPlanner(t, nil, planner.Options{Schema: db})
	prev := &text2sql.Plan{Objects: []text2sql.PlanObject{{Kind: "table", Name: "students"}}, Instruction: []string{"Average all enrollments."}, Output: "names"}
	req := text2sql.PlanRequest{
		Question:  "Which students have the highest average grade?",
		Retrieval: demoContext(db),
		Attempts: []text2sql.Attempt{
			{N: 1, Plan: prev, Candidate: &text2sql.Candidate{Answerable: true, SQL: "SELECT nope FROM students"},
				Result: &text2sql.Result{Error: &text2sql.SQLError{Kind: text2sql.KindUnknownColumn, Message: "no such column: nope"}}},
			{N: 2, Plan: prev, Candidate: &text2sql.Candidate{Answerable: true, SQL: "SELECT first_name FROM students"},
				Result:  &text2sql.Result{Columns: []string{"first_name"}, RowCount: 200},
				Verdict: &text2sql.Verdict{Stage: text2sql.StagePlan, Reason: "averages include withdrawn enrollments", Hints: []string{"only completed enrollments"}}},
		},
		Hints: []string{"Keep only status = 'completed'."},
	}
	system, user, err := p.Prompt(req)
	require.NoError(t, err)
	for _, want := range []string{"SQLite", "You do not write SQL", "table.column", "ties", `"instruction"`} {
		assert.Contains(t, system, want)
	}
	for _, want := range []string{
		"- students (retrieved)", "- enrollments (via example q3)", "CREATE TABLE students", "grade_points",
		"## Column notes", "0–4 scale", "## Business rules", "avg(grade_points)",
		"## Verified examples", "GROUP BY student_id",
		"## Previous plan", "1. Average all enrollments.",
		"Attempt 1:", "no such column: nope", "Attempt 2:", "fault in stage plan", "averages include withdrawn", "Review hint: only completed enrollments",
		"## Reviewer hints", "status = 'completed'",
		"## Question\nWhich students have the highest average grade?",
	} {
		assert.Contains(t, user, want, "user message")
	}
	assert.NotContains(t, user, "DROP TABLE", "an example that fails the read-only check reached the prompt")
	_, _, err = p.Prompt(text2sql.PlanRequest{Question: "  "})
	assert.ErrorIs(t, err, text2sql.ErrEmptyQuestion, "blank question")
	_, err = p.Plan(context.Background(), req)
	assert.ErrorIs(t, err, text2sql.ErrInvalidConfig, "nil model")
	pg := newPlanner(t, nil, planner.Options{Dialect: text2sql.DialectPostgres})
	s, _, err := pg.Prompt(req)
	require.NoError(t, err)
	assert.Contains(t, s, "PostgreSQL")
	assert.NotContains(t, s, "SQLite", "PostgreSQL system instruction names another dialect")
}

func TestParse(t *testing.T) {
	cases := map[string]text2sql.Plan{
		`{"objects": [{"type": "tables", "name": "t"}], "steps": "1. Count rows\n- Group by x", "output": {"cols": ["a"]}}`:                                                                                     text2sql.Plan{Objects: []text2sql.PlanObject{{Kind: "table", Name: "t"}}, Instruction: []string{"1. Count rows", "Group by x"}, Output: `{"cols":["a"]}`},
		"Here is the plan:\n```json\n{\"database\": \"d\", \"objects\": [\"students.first_name\", \"table students\", {\"table\": \"e\", \"column\": \"s\", \"value\": \"x\"}], \"instruction\": [\"a\"]}\n```": text2sql.Plan{Database: "d", Objects: []text2sql.PlanObject{{Kind: "column", Name: "students.first_name"}, {Kind: "table", Name: "students"}, {Kind: "value", Name: "e.s", Value: "x"}}, Instruction: []string{"a"}},
		`{"plan": {"instruction": ["only"], "objects": []}}`: text2sql.Plan{Instruction: []string{"only"}},
	}
	bad := []string{"", "no json", `{"sql": "SELECT 1"}`, `{"objects": [], "instruction": []}`, `{"objects": 3}`, `{"objects": [`}
	stagekittest.CheckParse(t, planner.Parse, cases, bad)
}

func TestValidate(t *testing.T) {
	db := demoSchema(t)
	p := newPlanner(t, nil, planner.Options{Schema: db})
	plan := &text2sql.Plan{Objects: []text2sql.PlanObject{
		{Kind: "TABLE", Name: `"Students"`},
		{Kind: "column", Name: "ENROLLMENTS.Grade_Points"},
		{Kind: "column", Name: "entry_year"},    // one table has it: qualified
		{Kind: "column", Name: "department_id"}, // several do: kept
		{Kind: "value", Name: "main.courses.code", Value: "CS 310"},
		{Kind: "value", Name: "", Value: "Fall 2025"},
	}}
	require.Empty(t, p.Validate(plan))
	want := []string{"table students", "column enrollments.grade_points", "column students.entry_year", "column department_id", "value courses.code", "value "}
	var got []string
	for _, o := range plan.Objects {
		got = append(got, string(o.Kind)+" "+o.Name)
	}
	assert.Equal(t, want, got)
	probs := p.Validate(&text2sql.Plan{Objects: []text2sql.PlanObject{{Kind: "index", Name: "x"}, {Kind: "column", Name: "gpa"}, {Kind: "table", Name: ""}}})
	require.Len(t, probs, 3)
	assert.Contains(t, probs[0].Reason, "unknown kind")
	assert.Contains(t, probs[1].Reason, "no such column")
	assert.Equal(t, "empty name", probs[2].Reason)
	// Without a schema, only the kinds are checked.
	assert.Empty(t, newPlanner(t, nil, planner.Options{}).Validate(&text2sql.Plan{Objects: []text2sql.PlanObject{{Kind: "table", Name: "nothere"}}}), "no schema")
}

func TestPlanErrors(t *testing.T) {
	_, err := planner.New(nil, planner.Options{Dialect: "oracle"})
	assert.ErrorIs(t, err, text2sql.ErrInvalidConfig, "dialect")
	_, err = planner.New(nil, planner.Options{Temperature: 3})
	assert.ErrorIs(t, err, text2sql.ErrInvalidConfig, "temperature")
	boom := &text2sql.ModelError{Provider: "test", StatusCode: 503, Message: "down", Retryable: true}
	m := llmtest.Func(func(text2sql.ModelRequest) (string, error) { return "", boom })
	plan, err := newPlanner(t, m, planner.Options{}).Plan(context.Background(), text2sql.PlanRequest{Question: "q"})
	var me *text2sql.ModelError
	assert.ErrorAs(t, err, &me)
	if assert.NotNil(t, plan) {
		assert.Empty(t, plan.Calls)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = newPlanner(t, llmtest.New(goodPlan), planner.Options{}).Plan(ctx, text2sql.PlanRequest{Question: "q"})
	assert.ErrorIs(t, err, context.Canceled)
}

// Over a catalog of databases, a plan that leaves its database to the
// planner (or names the whole catalog) is routed to its first table's.
func TestPlanCatalogDatabase(t *testing.T) {
	db := &schema.Database{Name: "concert+pets", Dialect: text2sql.DialectSQLite, Tables: []*schema.Table{
		{Schema: "concert", Name: "singer", Columns: []schema.Column{{Name: "Name"}, {Name: "Age"}}},
		{Schema: "pets", Name: "Pets", Columns: []schema.Column{{Name: "PetType"}, {Name: "weight"}}},
	}}
	for _, database := range []string{"", "concert+pets", "pets"} {
		m := llmtest.New(`{"database": "` + database + `", "objects": [{"kind": "column", "name": "pets.Pets.weight", "value": ""}, {"kind": "table", "name": "concert.singer", "value": ""}],
 "instruction": ["Average weight."], "output": "one number"}`)
		plan, err := newPlanner(t, m, planner.Options{Schema: db, Catalog: true}).Plan(context.Background(),
			text2sql.PlanRequest{Question: "What is the average weight of the pets?"})
		require.NoError(t, err, database)
		assert.Equal(t, "pets", plan.Database, "the model said %q", database)
	}
	m := llmtest.New(`{"database": "", "objects": [{"kind": "table", "name": "pets.Pets", "value": ""}], "instruction": ["x"], "output": "y"}`)
	plan, err := newPlanner(t, m, planner.Options{Schema: db}).Plan(context.Background(), text2sql.PlanRequest{Question: "q"})
	require.NoError(t, err)
	assert.Equal(t, "concert+pets", plan.Database, "not a catalog: the schema's name")
}

package planner_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/demo"
	"github.com/text2sql-go/text2sql/executor/sqlite"
	"github.com/text2sql-go/text2sql/llm/llmtest"
	"github.com/text2sql-go/text2sql/planner"
	"github.com/text2sql-go/text2sql/schema"
)

// demoSchema returns the schema model of the demo registrar database.
func demoSchema(t *testing.T) *schema.Database {
	t.Helper()
	path := filepath.Join(t.TempDir(), "registrar.sqlite")
	if err := demo.Create(path); err != nil {
		t.Fatal(err)
	}
	ex, err := sqlite.Open(path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ex.Close()
	return ex.Schema()
}

// demoContext is a retrieved context over students and enrollments.
func demoContext(db *schema.Database) *text2sql.Context {
	tables := []*schema.Table{db.Lookup("students"), db.Lookup("enrollments")}
	return &text2sql.Context{
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
	if err != nil {
		t.Fatal(err)
	}
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
	req := text2sql.PlanRequest{Question: "Which students have the highest average grade?", Context: demoContext(db)}
	plan, err := p.Plan(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if plan.Database != "registrar" || len(plan.Objects) != 3 || len(plan.Instruction) != 4 || !strings.Contains(plan.Output, "one row per top student") {
		t.Errorf("plan = %+v", plan)
	}
	if plan.Objects[0].Name != "students" || plan.Objects[1].Name != "enrollments.grade_points" || plan.Objects[2] != (text2sql.PlanObject{Kind: "value", Name: "enrollments.status", Value: "completed"}) {
		t.Errorf("objects = %+v", plan.Objects)
	}
	if len(plan.Calls) != 1 || m.CallCount() != 1 {
		t.Fatalf("%d calls recorded, %d made", len(plan.Calls), m.CallCount())
	}
	system, user, err := p.Prompt(req)
	if err != nil {
		t.Fatal(err)
	}
	got := m.Calls()[0]
	if got.System != system || got.Messages[0].Content != user || !strings.Contains(plan.Calls[0].Prompt, user) {
		t.Errorf("the model got a different prompt than Prompt returns")
	}
	var sch map[string]any
	if err := json.Unmarshal(got.Schema, &sch); err != nil || sch["type"] != "object" {
		t.Errorf("schema = %s (%v)", got.Schema, err)
	}
	if got.Temperature == nil || *got.Temperature != 0 {
		t.Errorf("temperature = %v", got.Temperature)
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
	plan, err := p.Plan(context.Background(), text2sql.PlanRequest{Question: "Top students?", Context: demoContext(db)})
	if err != nil {
		t.Fatal(err)
	}
	if m.CallCount() != 2 || len(plan.Calls) != 2 {
		t.Fatalf("%d calls, %d recorded; want 2", m.CallCount(), len(plan.Calls))
	}
	second := m.Calls()[1]
	if len(second.Messages) != 3 || second.Messages[1].Role != text2sql.RoleAssistant || second.Messages[1].Content != bad {
		t.Fatalf("re-ask conversation = %+v", second.Messages)
	}
	note := second.Messages[2].Content
	for _, want := range []string{
		`table student: no such table (did you mean "students"?)`,
		`column students.firstname: no such column in table students (did you mean "first_name"`,
		`column enrollments.grade: no such column in table enrollments`,
		`grade_points, letter_grade`,
		`no such table enrolments (did you mean "enrollments"?)`,
	} {
		if !strings.Contains(note, want) {
			t.Errorf("re-ask note misses %q:\n%s", want, note)
		}
	}
	if plan.Objects[0].Name != "students" {
		t.Errorf("the corrected plan was not used: %+v", plan.Objects)
	}
}

// Unknown objects are never silently kept: after the re-asks, an
// OutputError names them and the calls are still recorded.
func TestPlanUnknownObjectsExhausted(t *testing.T) {
	db := demoSchema(t)
	bad := `{"database": "", "objects": [{"kind": "column", "name": "students.gpa", "value": ""}], "instruction": ["Sort by gpa."], "output": "names"}`
	for _, reasks := range []int{0, 2, -1} {
		m := llmtest.New(bad).RepeatLast()
		p := newPlanner(t, m, planner.Options{Schema: db, MaxReasks: reasks})
		plan, err := p.Plan(context.Background(), text2sql.PlanRequest{Question: "Best students?", Context: demoContext(db)})
		var oe *text2sql.OutputError
		if !errors.As(err, &oe) || !errors.Is(err, text2sql.ErrInvalidOutput) || oe.Raw != bad || !strings.Contains(err.Error(), "students.gpa") {
			t.Fatalf("MaxReasks %d: err = %v", reasks, err)
		}
		want := 1 + max(reasks, 0)
		if reasks == 0 {
			want = 2 // the default is one re-ask
		}
		if m.CallCount() != want || plan == nil || len(plan.Calls) != want || len(plan.Objects) != 0 {
			t.Errorf("MaxReasks %d: %d calls, plan %+v; want %d calls recorded on an empty plan", reasks, m.CallCount(), plan, want)
		}
	}
}

// A malformed answer is re-asked once, then an OutputError.
func TestPlanMalformed(t *testing.T) {
	m := llmtest.New(`{"objects": [`, "```json\n"+goodPlan+"\n```")
	p := newPlanner(t, m, planner.Options{})
	plan, err := p.Plan(context.Background(), text2sql.PlanRequest{Question: "q"})
	if err != nil || len(plan.Instruction) != 4 || m.CallCount() != 2 {
		t.Fatalf("plan %+v, err %v, %d calls", plan, err, m.CallCount())
	}
	if note := m.Calls()[1].Messages[2].Content; !strings.Contains(note, "could not be read as a plan") || !strings.Contains(note, `"instruction"`) {
		t.Errorf("re-ask note = %q", note)
	}
	m = llmtest.New("I would join the tables.").RepeatLast()
	_, err = newPlanner(t, m, planner.Options{}).Plan(context.Background(), text2sql.PlanRequest{Question: "q"})
	var oe *text2sql.OutputError
	if !errors.As(err, &oe) || oe.Raw != "I would join the tables." || m.CallCount() != 2 {
		t.Errorf("err = %v, %d calls", err, m.CallCount())
	}
}

// The prompt shows the question, the context (tables and why, schema,
// notes, rules, checked examples), the previous plan, the earlier attempts
// with their errors and reviews, and the hints.
func TestPlanPrompt(t *testing.T) {
	db := demoSchema(t)
	p := newPlanner(t, nil, planner.Options{Schema: db})
	prev := &text2sql.Plan{Objects: []text2sql.PlanObject{{Kind: "table", Name: "students"}}, Instruction: []string{"Average all enrollments."}, Output: "names"}
	req := text2sql.PlanRequest{
		Question: "Which students have the highest average grade?",
		Context:  demoContext(db),
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
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"SQLite", "You do not write SQL", "table.column", "ties", `"instruction"`} {
		if !strings.Contains(system, want) {
			t.Errorf("system misses %q", want)
		}
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
		if !strings.Contains(user, want) {
			t.Errorf("user message misses %q\n%s", want, user)
		}
	}
	if strings.Contains(user, "DROP TABLE") {
		t.Errorf("an example that fails the read-only check reached the prompt")
	}
	if _, _, err := p.Prompt(text2sql.PlanRequest{Question: "  "}); !errors.Is(err, text2sql.ErrEmptyQuestion) {
		t.Errorf("blank question: %v", err)
	}
	if _, err := p.Plan(context.Background(), req); !errors.Is(err, text2sql.ErrInvalidConfig) {
		t.Errorf("nil model: %v", err)
	}
	pg := newPlanner(t, nil, planner.Options{Dialect: text2sql.DialectPostgres})
	if s, _, _ := pg.Prompt(req); !strings.Contains(s, "PostgreSQL") || strings.Contains(s, "SQLite") {
		t.Errorf("PostgreSQL system instruction names another dialect")
	}
}

func TestParse(t *testing.T) {
	cases := []struct {
		text string
		want text2sql.Plan
	}{
		{`{"objects": [{"type": "tables", "name": "t"}], "steps": "1. Count rows\n- Group by x", "output": {"cols": ["a"]}}`,
			text2sql.Plan{Objects: []text2sql.PlanObject{{Kind: "table", Name: "t"}}, Instruction: []string{"1. Count rows", "Group by x"}, Output: `{"cols":["a"]}`}},
		{"Here is the plan:\n```json\n{\"database\": \"d\", \"objects\": [\"students.first_name\", \"table students\", {\"table\": \"e\", \"column\": \"s\", \"value\": \"x\"}], \"instruction\": [\"a\"]}\n```",
			text2sql.Plan{Database: "d", Objects: []text2sql.PlanObject{{Kind: "column", Name: "students.first_name"}, {Kind: "table", Name: "students"}, {Kind: "value", Name: "e.s", Value: "x"}}, Instruction: []string{"a"}}},
		{`{"plan": {"instruction": ["only"], "objects": []}}`, text2sql.Plan{Instruction: []string{"only"}}},
	}
	for _, tc := range cases {
		got, err := planner.Parse(tc.text)
		if err != nil {
			t.Errorf("%q: %v", tc.text, err)
			continue
		}
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(tc.want)
		if string(g) != string(w) {
			t.Errorf("%q:\n got %s\nwant %s", tc.text, g, w)
		}
	}
	for _, bad := range []string{"", "no json", `{"sql": "SELECT 1"}`, `{"objects": [], "instruction": []}`, `{"objects": 3}`, `{"objects": [`} {
		if _, err := planner.Parse(bad); !errors.Is(err, text2sql.ErrInvalidOutput) {
			t.Errorf("%q: err = %v", bad, err)
		}
	}
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
	if probs := p.Validate(plan); len(probs) != 0 {
		t.Fatalf("problems %v", probs)
	}
	want := []string{"table students", "column enrollments.grade_points", "column students.entry_year", "column department_id", "value courses.code", "value "}
	for i, o := range plan.Objects {
		if got := string(o.Kind) + " " + o.Name; got != want[i] {
			t.Errorf("object %d = %q, want %q", i, got, want[i])
		}
	}
	probs := p.Validate(&text2sql.Plan{Objects: []text2sql.PlanObject{{Kind: "index", Name: "x"}, {Kind: "column", Name: "gpa"}, {Kind: "table", Name: ""}}})
	if len(probs) != 3 || !strings.Contains(probs[0].Reason, "unknown kind") || !strings.Contains(probs[1].Reason, "no such column") || probs[2].Reason != "empty name" {
		t.Errorf("problems %v", probs)
	}
	// Without a schema, only the kinds are checked.
	if probs := newPlanner(t, nil, planner.Options{}).Validate(&text2sql.Plan{Objects: []text2sql.PlanObject{{Kind: "table", Name: "nothere"}}}); len(probs) != 0 {
		t.Errorf("no schema: %v", probs)
	}
}

func TestPlanErrors(t *testing.T) {
	if _, err := planner.New(nil, planner.Options{Dialect: "oracle"}); !errors.Is(err, text2sql.ErrInvalidConfig) {
		t.Errorf("dialect: %v", err)
	}
	if _, err := planner.New(nil, planner.Options{Temperature: 3}); !errors.Is(err, text2sql.ErrInvalidConfig) {
		t.Errorf("temperature: %v", err)
	}
	boom := &text2sql.ModelError{Provider: "test", StatusCode: 503, Message: "down", Retryable: true}
	m := llmtest.Func(func(text2sql.ModelRequest) (string, error) { return "", boom })
	plan, err := newPlanner(t, m, planner.Options{}).Plan(context.Background(), text2sql.PlanRequest{Question: "q"})
	var me *text2sql.ModelError
	if !errors.As(err, &me) || plan == nil || len(plan.Calls) != 0 {
		t.Errorf("model error: %v, plan %+v", err, plan)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := newPlanner(t, llmtest.New(goodPlan), planner.Options{}).Plan(ctx, text2sql.PlanRequest{Question: "q"}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

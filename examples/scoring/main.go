// Scoring measures execution accuracy (EX) from Go: a question set with gold
// SQL on the demo database, built in code, and one system's predictions,
// scored by eval.Score as the Spider evaluator scores them (rows compared
// as a multiset, any column order). A prediction is correct when its result
// equals the gold query's, whatever its text. Offline, no key, no model.
//
//	go run ./examples/scoring
package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/text2sql-go/text2sql/accuracy"
	"github.com/text2sql-go/text2sql/demo"
	"github.com/text2sql-go/text2sql/eval"
)

func main() {
	if err := run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "scoring:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	path, err := demo.Ensure("")
	if err != nil {
		return err
	}
	ds := &eval.Dataset{
		Name: "registrar", Format: eval.FormatFile, Mode: accuracy.ModeSpider,
		Databases: map[string]*eval.Database{"registrar": {ID: "registrar", Path: path}},
	}
	gold := []struct{ id, question, sql string }{
		{"students", "How many students are there?", "SELECT COUNT(*) FROM students"},
		{"titles", "List the titles of 4-credit courses.", "SELECT title FROM courses WHERE credits = 4"},
		{"undeclared", "How many students have not declared a major?", "SELECT COUNT(*) FROM students WHERE major_department_id IS NULL"},
		{"busiest", "Which department has the most courses?",
			"SELECT d.name FROM departments AS d JOIN courses AS c ON c.department_id = d.department_id GROUP BY d.department_id ORDER BY COUNT(*) DESC LIMIT 1"},
	}
	for i, g := range gold {
		ds.Questions = append(ds.Questions, eval.Question{
			ID: g.id, Index: i, DB: "registrar", Question: g.question, GoldSQL: g.sql,
			Difficulty: eval.SpiderHardnessOfSQL(g.sql),
		})
	}
	// What a system predicted, by question ID (a predictions file read with
	// eval.ReadPredictions has the same shape).
	preds := &eval.Predictions{Name: "my-system", Keyed: true, ByID: map[string]string{
		"students":   "SELECT count(student_id) AS n FROM students",                           // other text, same result: correct
		"titles":     "SELECT title FROM courses WHERE credits >= 3",                          // too many rows: wrong
		"undeclared": "SELECT COUNT(*) FROM students WHERE major_department_id = ''",          // '' is not NULL: wrong
		"busiest":    "SELECT d.name FROM department AS d JOIN courses USING (department_id)", // no such table: fails
	}}

	reports, err := eval.Score(ctx, ds, []*eval.Predictions{preds}, eval.Options{})
	if err != nil {
		return err
	}
	r := reports[0]
	for _, rec := range r.Records {
		detail := rec.Diff // a wrong result: how it differs from the gold one
		if detail == "" {
			detail = rec.Error // a failed query: the engine's or the guard's message
		}
		fmt.Println(strings.TrimSpace(fmt.Sprintf("%-10s %-8s %-16s %s", rec.ID, rec.Outcome, rec.Kind, detail)))
	}
	if r.EX == nil { // nothing could be scored
		return fmt.Errorf("not comparable: %s", r.Note)
	}
	fmt.Printf("EX %.2f (%d of %d correct)\n", *r.EX, r.Correct, r.Total)
	return nil
}

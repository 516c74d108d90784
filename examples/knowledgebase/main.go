// Knowledgebase builds a knowledge base in Go for the demo database: a table
// note with synonyms, a column note, a business rule and a verified example
// that the guard checks as it is added. It shows Validate naming a note on a
// column that does not exist, what the retriever ranks first for a question
// that uses a synonym ("class roster": enrollments), the verified example
// matched for reuse without a model call, and the base written as a
// knowledge file.
// Offline, no key, no model.
//
//	go run ./examples/knowledgebase
package main

import (
	"context"
	"fmt"
	"os"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/demo"
	"github.com/text2sql-go/text2sql/executor/sqlite"
	"github.com/text2sql-go/text2sql/knowledge"
	"github.com/text2sql-go/text2sql/retriever"
)

func main() {
	if err := run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "knowledgebase:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	path, err := demo.Ensure("")
	if err != nil {
		return err
	}
	ex, err := sqlite.Open(path, sqlite.Options{MaxRows: 100})
	if err != nil {
		return err
	}
	defer ex.Close()

	kb := &knowledge.Base{}
	if err := kb.AddTable(knowledge.TableNote{
		Table:       "enrollments",
		Description: "Which student takes which course, per term, with the grade.",
		Synonyms:    []string{"registration", "class roster"},
	}); err != nil {
		return err
	}
	if err := kb.AddColumn(knowledge.ColumnNote{
		Table: "enrollments", Column: "grade_points",
		Description: `"Average grade" means AVG(grade_points).`, Units: "grade points", Range: "0.00 to 4.00, NULL while in progress",
	}); err != nil {
		return err
	}
	if err := kb.AddRule(knowledge.Rule{
		ID: "enrolled", Text: `"Enrolled" excludes rows whose status is 'withdrawn'.`, Tables: []string{"enrollments"},
	}); err != nil {
		return err
	}
	// The executor is the guard: an example whose SQL it refuses never enters the base.
	if err := kb.AddExample(ctx, ex, knowledge.Example{ID: "purge", Question: "Remove old students", SQL: "DELETE FROM students"}); err != nil {
		fmt.Println("refused:", err)
	}
	if err := kb.AddExample(ctx, ex, knowledge.Example{
		ID: "fall-headcount", Question: "How many students are enrolled in Fall 2025?",
		SQL: "SELECT COUNT(DISTINCT student_id) FROM enrollments WHERE term = 'Fall 2025' AND status <> 'withdrawn'",
	}); err != nil {
		return err
	}
	if err := kb.Validate(ctx, ex.Schema(), ex); err != nil { // a file from knowledge.Load gets the same checks
		return err
	}
	typo := &knowledge.Base{Columns: []knowledge.ColumnNote{{Table: "students", Column: "gpa", Description: "grade point average"}}}
	fmt.Println("a base with a typo:", typo.Validate(ctx, ex.Schema(), ex))

	ret, err := retriever.NewHybrid(ctx, retriever.HybridOptions{Schema: ex.Schema(), Knowledge: kb})
	if err != nil {
		return err
	}
	for _, q := range []string{"Who is on the class roster of Calculus I?", "how many students are enrolled in fall 2025"} {
		c, err := ret.Retrieve(ctx, text2sql.RetrieveRequest{Question: q})
		if err != nil {
			return err
		}
		fmt.Printf("\n%s\n  tables:", q)
		for _, t := range c.Tables {
			fmt.Printf(" %s (%s)", t.Name, t.Why())
		}
		fmt.Println()
		for _, it := range c.Items[:min(3, len(c.Items))] {
			fmt.Printf("  %-28s score %.4f\n", it.ID, it.Score)
		}
		if c.Match != nil {
			fmt.Printf("  reusable example %s (similarity %.2f): %s\n", c.Match.ID, c.Match.Similarity, c.Match.SQL)
		}
	}

	file, err := kb.Encode(knowledge.FormatYAML) // kb.Save("registrar.yaml") writes it; knowledge.Load reads it back
	if err != nil {
		return err
	}
	fmt.Printf("\nas a knowledge file:\n%s", file)
	return nil
}

package text2sql_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/demo"
	"github.com/text2sql-go/text2sql/executor/sqlite"
	"github.com/text2sql-go/text2sql/generator"
	"github.com/text2sql-go/text2sql/llm/llmtest"
	"github.com/text2sql-go/text2sql/retriever"
)

// A pipeline on the demo database. The scripted model stands in for Gemini
// or an OpenAI-compatible server: its first answer fails, the executor's
// error goes back to it, and its second answer runs.
func ExamplePipeline_Ask() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "text2sql-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "registrar.sqlite")
	if err := demo.Create(path); err != nil {
		panic(err)
	}
	ex, err := sqlite.Open(path, sqlite.Options{MaxRows: 100})
	if err != nil {
		panic(err)
	}
	defer ex.Close()
	kb, _ := demo.Knowledge()
	ret, err := retriever.NewHybrid(ctx, retriever.HybridOptions{Schema: ex.Schema(), Knowledge: kb})
	if err != nil {
		panic(err)
	}
	model := llmtest.New(
		`{"answerable": true, "sql": "SELECT count(*) FROM teachers", "explanation": "first try"}`,
		`{"answerable": true, "sql": "SELECT count(*) AS instructors FROM instructors", "explanation": "counts the teaching staff"}`,
	)
	gen, _ := generator.New(model, generator.Options{Dialect: text2sql.DialectSQLite})
	p, err := text2sql.New(text2sql.Config{Retriever: ret, Generator: gen, Executor: ex})
	if err != nil {
		panic(err)
	}
	ans, err := p.Ask(ctx, "How many professors are there?")
	if err != nil {
		panic(err)
	}
	for _, a := range ans.Attempts {
		if a.Result.Error != nil {
			fmt.Printf("attempt %d: %s\n", a.N, a.Result.Error.Kind)
		}
	}
	fmt.Println(ans.Status, ans.SQL)
	fmt.Println(ans.Result.Columns, ans.Result.Rows)
	// Output:
	// attempt 1: unknown_table
	// answered SELECT count(*) AS instructors FROM instructors
	// [instructors] [[20]]
}

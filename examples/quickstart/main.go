// Quickstart asks the pipeline two questions about the bundled demo database
// (a university registrar), offline and with no key: a scripted model stands
// in for Gemini or an OpenAI-compatible server. The first question is
// answered; the second is declined, which is not an error.
//
//	go run ./examples/quickstart
package main

import (
	"context"
	"fmt"
	"os"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/demo"
	"github.com/text2sql-go/text2sql/executor/sqlite"
	"github.com/text2sql-go/text2sql/generator"
	"github.com/text2sql-go/text2sql/lint"
	"github.com/text2sql-go/text2sql/llm/llmtest"
	"github.com/text2sql-go/text2sql/retriever"
)

func main() {
	if err := run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	path, err := demo.Ensure("") // the demo database, created once in the user cache directory
	if err != nil {
		return err
	}
	ex, err := sqlite.Open(path, sqlite.Options{MaxRows: 100}) // read-only and guarded; your own: sqlite.Open("shop.sqlite", …)
	if err != nil {
		return err
	}
	defer ex.Close()

	kb, err := demo.Knowledge() // notes, rules, verified examples; your own: knowledge.Load("shop.yaml")
	if err != nil {
		return err
	}
	if err := kb.Validate(ctx, ex.Schema(), ex); err != nil { // every example passes the guard
		return err
	}
	ret, err := retriever.NewHybrid(ctx, retriever.HybridOptions{
		Schema: ex.Schema(), Knowledge: kb, // Embedder nil: the offline hashing embedder
		// Store nil: in memory; retriever.OpenChromem(dir) keeps the index between runs
	})
	if err != nil {
		return err
	}

	// The scripted model gives these answers in turn. A real model plugs in here:
	//	model, err := gemini.New(ctx, gemini.Options{APIKey: os.Getenv("GEMINI_API_KEY")})
	//	model, err := openai.New(openai.Options{APIKey: os.Getenv("OPENAI_API_KEY")}) // BaseURL: "http://localhost:11434/v1" for Ollama
	model := llmtest.New(
		`{"answerable": true, "explanation": "Counts the instructors of each department.",
		  "sql": "SELECT d.name, COUNT(*) AS instructors FROM departments AS d JOIN instructors AS i USING (department_id) GROUP BY d.name ORDER BY instructors DESC, d.name"}`,
		`{"answerable": false, "sql": "", "explanation": "The registrar database holds no weather data."}`,
	)
	gen, err := generator.New(model, generator.Options{Dialect: text2sql.DialectSQLite})
	if err != nil {
		return err
	}
	p, err := text2sql.New(text2sql.Config{
		Retriever: ret, Generator: gen, Executor: ex,
		// The deterministic checks: unknown names and other dialects'
		// syntax get a hint before execution, as on the CLI.
		Checker: lint.New(ex.Schema(), "").WithProbe(ex),
	})
	if err != nil {
		return err
	}

	for _, q := range []string{"How many instructors does each department have?", "Will it rain tomorrow?"} {
		ans, err := p.Ask(ctx, q)
		if err != nil { // ans is StatusFailed; its Attempts say what was tried
			return fmt.Errorf("%q: %s after %d attempts: %w", q, ans.Status, len(ans.Attempts), err)
		}
		fmt.Printf("\n%s\n%s: %s\n", q, ans.Status, ans.Explanation)
		if ans.Result == nil { // StatusDeclined: nothing was executed
			continue
		}
		fmt.Println(ans.SQL)
		fmt.Println(ans.Result.Columns)
		for _, row := range ans.Result.Rows {
			fmt.Println(row...)
		}
	}
	return nil
}

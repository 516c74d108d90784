// Customstage plugs stages of its own into the pipeline: every stage is an
// interface, and a plain function can be one. Here a text2sql.RetrieverFunc
// shows the model the whole schema (enough for a database of a few tables,
// with no index to build), and a text2sql.ExecutorFunc logs each statement
// before handing it to the guarded SQLite executor. The scripted model's
// first answer names a table that does not exist; the log shows the error
// and hint the model is given, and the repair.
// Offline, no key.
//
//	go run ./examples/customstage
package main

import (
	"context"
	"fmt"
	"os"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/demo"
	"github.com/text2sql-go/text2sql/executor/sqlite"
	"github.com/text2sql-go/text2sql/generator"
	"github.com/text2sql-go/text2sql/llm/llmtest"
)

func main() {
	if err := run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "customstage:", err)
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
	db := ex.Schema()

	// A retriever: the question's context is every table, as DDL.
	wholeSchema := text2sql.RetrieverFunc(func(ctx context.Context, req text2sql.RetrieveRequest) (*text2sql.Retrieval, error) {
		c := &text2sql.Retrieval{Question: req.Question, Dialect: db.Dialect, Schema: db.DDL(db.Tables)}
		for _, t := range db.Tables {
			c.Tables = append(c.Tables, text2sql.TableRef{Name: t.QualifiedName(), Reason: text2sql.ReasonRequired})
		}
		return c, nil
	})

	// An executor: log the statement, then let the guarded executor run it
	// (it stays the only thing between generated SQL and the database).
	logged := text2sql.ExecutorFunc(func(ctx context.Context, req text2sql.ExecuteRequest) (*text2sql.Result, error) {
		res, err := ex.Execute(ctx, req)
		switch {
		case err != nil:
			fmt.Printf("executor: %s\n  cannot run: %v\n", req.SQL, err)
		case res.Error != nil: // the pipeline shows this error, and its hint, to the model for the repair
			fmt.Printf("executor: %s\n  %s: %s\n", req.SQL, res.Error.Kind, res.Error.Message)
			if res.Error.Hint != "" {
				fmt.Printf("  hint: %s\n", res.Error.Hint)
			}
		default:
			fmt.Printf("executor: %s\n  %d rows in %v\n", req.SQL, res.RowCount, res.Duration)
		}
		return res, err
	})

	model := llmtest.New(
		`{"answerable": true, "sql": "SELECT COUNT(*) AS courses FROM course", "explanation": "first try"}`,
		`{"answerable": true, "sql": "SELECT COUNT(*) AS courses FROM courses", "explanation": "Counts the courses."}`,
	)
	gen, err := generator.New(model, generator.Options{Dialect: db.Dialect})
	if err != nil {
		return err
	}
	p, err := text2sql.New(text2sql.Config{Retriever: wholeSchema, Generator: gen, Executor: logged})
	if err != nil {
		return err
	}
	ans, err := p.Ask(ctx, "How many courses are offered?")
	if err != nil {
		return fmt.Errorf("%s after %d attempts: %w", ans.Status, len(ans.Attempts), err)
	}
	if ans.Result == nil { // StatusDeclined
		fmt.Println("declined:", ans.Explanation)
		return nil
	}
	fmt.Printf("%s after %d attempts: %s = %v\n", ans.Status, len(ans.Attempts), ans.Result.Columns[0], ans.Result.Rows[0][0])
	return nil
}

package generator_test

import (
	"context"
	"fmt"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/generator"
	"github.com/text2sql-go/text2sql/llm/llmtest"
)

func Example() {
	// A scripted model stands in for Gemini or OpenAI.
	model := llmtest.New(`{"answerable": true, "sql": "SELECT COUNT(*) FROM artists;", "explanation": "Counts the artists."}`)
	gen, err := generator.New(model, generator.Options{Dialect: text2sql.DialectSQLite})
	if err != nil {
		panic(err)
	}
	c, err := gen.Generate(context.Background(), text2sql.GenerateRequest{
		Question: "How many artists are there?",
		Retrieval: &text2sql.Retrieval{
			Tables: []text2sql.TableRef{{Name: "artists", Reason: "retrieved"}},
			Schema: "CREATE TABLE artists (\n  id INTEGER NOT NULL,\n  name TEXT,\n  PRIMARY KEY (id)\n);\n",
		},
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(c.SQL)
	fmt.Println(c.Explanation)
	fmt.Println(len(c.Calls), "model call")
	// Output:
	// SELECT COUNT(*) FROM artists
	// Counts the artists.
	// 1 model call
}

func ExampleParse() {
	// A model that ignored JSON mode and answered in Markdown.
	c, err := generator.Parse("Here you go:\n```sql\n-- artists by name\nSELECT name FROM artists ORDER BY name, id;\n```")
	if err != nil {
		panic(err)
	}
	fmt.Println(c.SQL)
	// Output:
	// -- artists by name
	// SELECT name FROM artists ORDER BY name, id
}

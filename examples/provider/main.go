// Provider is the quick start (examples/quickstart) with a real model: the
// demo database, its knowledge file, the default hybrid retriever and a
// model chosen from the environment (GEMINI_API_KEY, or OPENAI_API_KEY with
// optional OPENAI_BASE_URL for Ollama, vLLM or LM Studio). Without either it
// exits with status 1, saying which variable to set.
//
//	GEMINI_API_KEY=... go run ./examples/provider "Which course has the most students?"
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"strings"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/demo"
	"github.com/text2sql-go/text2sql/executor/sqlite"
	"github.com/text2sql-go/text2sql/generator"
	"github.com/text2sql-go/text2sql/llm/gemini"
	"github.com/text2sql-go/text2sql/llm/openai"
	"github.com/text2sql-go/text2sql/retriever"
)

func main() {
	question := "Which course has the most students?"
	if len(os.Args) > 1 {
		question = strings.Join(os.Args[1:], " ")
	}
	ctx := context.Background()

	path, err := demo.Ensure("") // creates the demo database once, in the user cache directory
	if err != nil {
		log.Fatal(err)
	}
	ex, err := sqlite.Open(path, sqlite.Options{MaxRows: 50})
	if err != nil {
		log.Fatal(err)
	}
	defer ex.Close()

	kb, err := demo.Knowledge()
	if err != nil {
		log.Fatal(err)
	}
	if err := kb.Validate(ctx, ex.Schema(), ex); err != nil { // every example passes the guard
		log.Fatal(err)
	}
	ret, err := retriever.NewHybrid(ctx, retriever.HybridOptions{Schema: ex.Schema(), Knowledge: kb})
	if err != nil {
		log.Fatal(err)
	}

	var model text2sql.Model
	switch {
	case os.Getenv("GEMINI_API_KEY") != "":
		model, err = gemini.FromEnv(ctx, gemini.Options{})
	case os.Getenv("OPENAI_API_KEY") != "" || os.Getenv("OPENAI_BASE_URL") != "":
		model, err = openai.FromEnv(openai.Options{})
	default:
		log.Fatal("set GEMINI_API_KEY, or OPENAI_API_KEY / OPENAI_BASE_URL, to choose a model")
	}
	if err != nil {
		log.Fatal(err)
	}
	gen, err := generator.New(model, generator.Options{Dialect: text2sql.DialectSQLite})
	if err != nil {
		log.Fatal(err)
	}

	p, err := text2sql.New(text2sql.Config{Retriever: ret, Generator: gen, Executor: ex})
	if err != nil {
		log.Fatal(err)
	}
	ans, err := p.Ask(ctx, question)
	if err != nil {
		log.Fatalf("%v (status %s after %d attempts)", err, ans.Status, len(ans.Attempts))
	}
	fmt.Printf("%s\n\n%s\n\n%s\n", ans.Status, ans.SQL, ans.Explanation)
	if ans.Result != nil {
		fmt.Println(ans.Result.Columns)
		for _, row := range ans.Result.Rows {
			fmt.Println(row)
		}
	}
}

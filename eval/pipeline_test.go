package eval

import (
	"context"
	"errors"
	"strings"
	"testing"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/generator"
	"github.com/text2sql-go/text2sql/llm/llmtest"
	"github.com/text2sql-go/text2sql/schema"
)

// A provider outage is an error, not an EX of 0.
func TestRunPipelineModelOutage(t *testing.T) {
	ds := birdFixture(t, 3)
	model := llmtest.Func(func(text2sql.ModelRequest) (string, error) {
		return "", &text2sql.ModelError{Provider: "fake", StatusCode: 503, Message: "unavailable"}
	})
	gen, err := generator.New(model, generator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := RunPipeline(context.Background(), ds, PipelineOptions{
		Generator: func(context.Context, *Question, *schema.Database) (text2sql.Generator, error) { return gen, nil }})
	if !errors.Is(err, text2sql.ErrModel) || rep == nil || !strings.Contains(rep.Note, "model provider error") {
		t.Fatalf("%v %+v", err, rep)
	}
	if _, err := RunPipeline(context.Background(), ds, PipelineOptions{}); !errors.Is(err, text2sql.ErrInvalidConfig) {
		t.Fatal(err)
	}
}

func TestCancelled(t *testing.T) {
	ds := birdFixture(t, 3)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p := &Predictions{Keyed: true, ByID: map[string]string{"0": "SELECT 1", "1": "SELECT 1", "2": "SELECT 1"}}
	if _, err := Score(ctx, ds, []*Predictions{p}, Options{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
	if _, err := RunPipeline(ctx, ds, PipelineOptions{Generator: OracleGenerator(nil)}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
	if _, err := Recall(ctx, ds, RecallOptions{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
	if _, err := Score(context.Background(), ds, nil, Options{}); !errors.Is(err, ErrPredictions) {
		t.Fatal(err)
	}
	if _, err := Score(context.Background(), ds, []*Predictions{p}, Options{Mode: "fuzzy"}); err == nil {
		t.Fatal("unknown mode")
	}
}

// The oracle declines, with the missing tables, when retrieval did not
// show every table the gold reads; it never calls a model.
func TestOracle(t *testing.T) {
	db := testSchema()
	o := &Oracle{Gold: "SELECT c.name FROM customers c JOIN orders o ON o.customer_id = c.id", Schema: db}
	ctx := context.Background()
	c, err := o.Generate(ctx, text2sql.GenerateRequest{Question: "q", Context: &text2sql.Context{Tables: []text2sql.TableRef{{Name: "orders"}}}})
	if err != nil || c.Answerable || !strings.Contains(c.Explanation, "customers") || len(c.Calls) != 0 {
		t.Fatalf("%v %+v", err, c)
	}
	gen, _ := generator.New(nil, generator.Options{})
	o.Prompter = gen
	c, err = o.Generate(ctx, text2sql.GenerateRequest{Question: "q", Context: &text2sql.Context{Question: "q",
		Tables: []text2sql.TableRef{{Name: "orders"}, {Name: "customers"}}, Schema: "CREATE TABLE orders(id INT)"}})
	if err != nil || !c.Answerable || c.SQL != o.Gold || len(c.Calls) != 1 || c.Calls[0].Model != OracleModel || c.Calls[0].Usage.InputTokens == 0 {
		t.Fatalf("%v %+v", err, c)
	}
	// A prompt that cannot be built fails as it would with a model.
	if _, err := o.Generate(ctx, text2sql.GenerateRequest{Question: " "}); !errors.Is(err, text2sql.ErrEmptyQuestion) {
		t.Fatal(err)
	}
}

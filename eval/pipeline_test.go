package eval

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
	require.NoError(t, err)
	rep, err := RunPipeline(context.Background(), ds, PipelineOptions{
		Generator: func(context.Context, *Question, *schema.Database) (text2sql.Generator, error) { return gen, nil }})
	assert.ErrorIs(t, err, text2sql.ErrModel)
	require.NotNil(t, rep)
	assert.Contains(t, rep.Note, "model provider error")
	_, err = RunPipeline(context.Background(), ds, PipelineOptions{})
	assert.ErrorIs(t, err, text2sql.ErrInvalidConfig)
}

func TestCancelled(t *testing.T) {
	ds := birdFixture(t, 3)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p := &Predictions{Keyed: true, ByID: map[string]string{"0": "SELECT 1", "1": "SELECT 1", "2": "SELECT 1"}}
	_, err := Score(ctx, ds, []*Predictions{p}, Options{})
	assert.ErrorIs(t, err, context.Canceled)
	_, err = RunPipeline(ctx, ds, PipelineOptions{Generator: OracleGenerator(nil)})
	assert.ErrorIs(t, err, context.Canceled)
	_, err = Recall(ctx, ds, RecallOptions{})
	assert.ErrorIs(t, err, context.Canceled)
	_, err = Score(context.Background(), ds, nil, Options{})
	assert.ErrorIs(t, err, ErrPredictions)
	_, err = Score(context.Background(), ds, []*Predictions{p}, Options{Mode: "fuzzy"})
	assert.Error(t, err, "unknown mode")
}

// The oracle declines, with the missing tables, when retrieval did not
// show every table the gold reads; it never calls a model.
func TestOracle(t *testing.T) {
	db := testSchema()
	o := &Oracle{Gold: "SELECT c.name FROM customers c JOIN orders o ON o.customer_id = c.id", Schema: db}
	ctx := context.Background()
	c, err := o.Generate(ctx, text2sql.GenerateRequest{Question: "q", Retrieval: &text2sql.Retrieval{Tables: []text2sql.TableRef{{Name: "orders"}}}})
	require.NoError(t, err)
	assert.False(t, c.Answerable)
	assert.Contains(t, c.Explanation, "customers")
	assert.Empty(t, c.Calls)
	gen, err := generator.New(nil, generator.Options{})
	require.NoError(t, err)
	o.Prompter = gen
	c, err = o.Generate(ctx, text2sql.GenerateRequest{Question: "q", Retrieval: &text2sql.Retrieval{Question: "q",
		Tables: []text2sql.TableRef{{Name: "orders"}, {Name: "customers"}}, Schema: "CREATE TABLE orders(id INT)"}})
	require.NoError(t, err)
	assert.True(t, c.Answerable)
	assert.Equal(t, o.Gold, c.SQL)
	require.Len(t, c.Calls, 1)
	assert.Equal(t, OracleModel, c.Calls[0].Model)
	assert.NotZero(t, c.Calls[0].Usage.InputTokens)
	// A prompt that cannot be built fails as it would with a model.
	_, err = o.Generate(ctx, text2sql.GenerateRequest{Question: " "})
	assert.ErrorIs(t, err, text2sql.ErrEmptyQuestion)
}

package eval

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/schema"
)

// One stuck question (its generator never returns on its own) is recorded
// as a timeout at QuestionTimeout, and the others are still answered.
func TestRunPipelineQuestionTimeout(t *testing.T) {
	ds := birdFixture(t, 3)
	stuck := ds.Questions[1].ID
	gen := func(_ context.Context, q *Question, _ *schema.Database) (text2sql.Generator, error) {
		return text2sql.GeneratorFunc(func(ctx context.Context, _ text2sql.GenerateRequest) (*text2sql.Candidate, error) {
			if q.ID == stuck {
				<-ctx.Done()
				return nil, ctx.Err()
			}
			return &text2sql.Candidate{Answerable: true, SQL: q.GoldSQL}, nil
		}), nil
	}
	start := time.Now()
	rep, err := RunPipeline(context.Background(), ds, PipelineOptions{Generator: gen, QuestionTimeout: 300 * time.Millisecond})
	require.NoError(t, err)
	assert.Less(t, time.Since(start), 5*time.Second)
	assert.Equal(t, 2, rep.Correct)
	require.Len(t, rep.Records, 3)
	rec := rep.Records[1]
	assert.Equal(t, OutcomeNoSQL, rec.Outcome)
	assert.Equal(t, "timeout", rec.Kind)
	assert.Contains(t, rec.Error, "no answer within 300ms (QuestionTimeout)")
	assert.Equal(t, OutcomeCorrect, rep.Records[0].Outcome)
	assert.Equal(t, OutcomeCorrect, rep.Records[2].Outcome)
}

// A model call's own time limit is a timeout too, not a provider outage.
func TestNoSQLKindModelTimeout(t *testing.T) {
	err := &text2sql.ModelError{Provider: "openai", Message: "no answer within 2s", Timeout: true}
	assert.Equal(t, "timeout", noSQLKind(nil, err))
	assert.Equal(t, "model", noSQLKind(nil, &text2sql.ModelError{Provider: "openai", StatusCode: 503}))
}

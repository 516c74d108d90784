package embedtest_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/embed/embedtest"
)

// broken ignores its context, drops the last text of a batch, answers
// random vectors, changes its input, fails with untyped errors and takes
// long when the provider hangs.
type broken struct{ b embedtest.Backend }

func (e broken) EmbedDocuments(_ context.Context, texts []string) ([][]float32, error) {
	if e.b.Reject {
		return nil, errors.New("bad key")
	}
	if e.b.Hang {
		time.Sleep(2500 * time.Millisecond)
	}
	if len(texts) == 0 {
		panic("no texts")
	}
	texts[0] = "changed"
	out := make([][]float32, len(texts)-1)
	for i := range out {
		out[i] = []float32{rand.Float32(), 1, 0}
	}
	return out, nil
}

func (e broken) EmbedQuery(context.Context, string) ([]float32, error) {
	if e.b.Reject {
		return nil, errors.New("bad key")
	}
	return []float32{1, 0}, nil // one value short
}

func (broken) Name() string   { return "" }
func (broken) Dimension() int { return 3 }

func TestBrokenEmbedderFails(t *testing.T) {
	err := embedtest.TestEmbedder(func(b embedtest.Backend) (text2sql.Embedder, error) { return broken{b}, nil },
		embedtest.Options{Deterministic: true})
	require.Error(t, err)
	assert.Equal(t, []string{
		embedtest.RuleIdentity, embedtest.RuleDocuments, embedtest.RuleQuery, embedtest.RuleEmptyBatch,
		embedtest.RuleLargeBatch, embedtest.RuleInputKept, embedtest.RuleDeterministic, embedtest.RuleOrder,
		embedtest.RuleCancelledBefore, embedtest.RuleCancelledDuring, embedtest.RuleCallerDeadline,
		embedtest.RuleProviderError,
	}, embedtest.Violations(err))
	assert.Contains(t, err.Error(), "panic: no texts")
	t.Log(err)
}

// An embedder that conforms by construction passes, hanging and refused
// backends included.
type good struct{ b embedtest.Backend }

func (e good) wait(ctx context.Context) error {
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case e.b.Hang:
		<-ctx.Done()
		return ctx.Err()
	case e.b.Reject:
		return &text2sql.ModelError{Provider: "good", StatusCode: 401, Message: "bad key"}
	}
	return nil
}

func (e good) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	if err := e.wait(ctx); err != nil {
		return nil, err
	}
	out := make([][]float32, len(texts))
	for i, s := range texts {
		out[i] = []float32{float32(len(s)), 1, 0}
	}
	return out, nil
}

func (e good) EmbedQuery(ctx context.Context, s string) ([]float32, error) {
	vs, err := e.EmbedDocuments(ctx, []string{s})
	if err != nil {
		return nil, err
	}
	return vs[0], nil
}

func (good) Name() string   { return "good" }
func (good) Dimension() int { return 3 }

func TestConformingEmbedderPasses(t *testing.T) {
	assert.NoError(t, embedtest.TestEmbedder(func(b embedtest.Backend) (text2sql.Embedder, error) { return good{b}, nil },
		embedtest.Options{Deterministic: true}))
}

func TestConstructorFailure(t *testing.T) {
	boom := errors.New("boom")
	err := embedtest.TestEmbedder(func(b embedtest.Backend) (text2sql.Embedder, error) {
		if b.Reject {
			return nil, boom
		}
		return nil, embedtest.ErrUnsupported
	}, embedtest.Options{})
	require.ErrorIs(t, err, boom)
	assert.Equal(t, []string{embedtest.RuleProviderError}, embedtest.Violations(err))
}

package modeltest_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/llm/modeltest"
)

// broken ignores its context, answers the wrong text, changes the
// request, panics on an empty one and fails with untyped errors.
func broken(b modeltest.Backend) (text2sql.Model, error) {
	return text2sql.ModelFunc(func(_ context.Context, req text2sql.ModelRequest) (*text2sql.ModelResponse, error) {
		if len(req.Messages) == 0 {
			panic("no messages")
		}
		req.Messages[0].Content = "changed"
		switch {
		case b.Hang:
			time.Sleep(2500 * time.Millisecond)
		case b.Reject:
			return nil, errors.New("bad key")
		}
		return &text2sql.ModelResponse{Text: "something else"}, nil
	}), nil
}

func TestBrokenModelFails(t *testing.T) {
	err := modeltest.TestModel(broken)
	require.Error(t, err)
	assert.Equal(t, []string{
		modeltest.RuleAnswer, modeltest.RuleRequestKept, modeltest.RuleEmptyRequest,
		modeltest.RuleCancelledBefore, modeltest.RuleCancelledDuring, modeltest.RuleCallerDeadline,
		modeltest.RuleProviderError,
	}, modeltest.Violations(err))
	assert.Contains(t, err.Error(), "panic: no messages")
	t.Log(err)
}

func TestConstructorFailure(t *testing.T) {
	boom := errors.New("boom")
	err := modeltest.TestModel(func(b modeltest.Backend) (text2sql.Model, error) {
		if b.Reject {
			return nil, boom
		}
		return nil, modeltest.ErrUnsupported
	})
	require.ErrorIs(t, err, boom)
	assert.Equal(t, []string{modeltest.RuleProviderError}, modeltest.Violations(err))
}

// A model that conforms by construction passes.
func TestConformingFuncPasses(t *testing.T) {
	assert.NoError(t, modeltest.TestModel(func(b modeltest.Backend) (text2sql.Model, error) {
		return text2sql.ModelFunc(func(ctx context.Context, req text2sql.ModelRequest) (*text2sql.ModelResponse, error) {
			switch {
			case b.Hang:
				<-ctx.Done()
				return nil, ctx.Err()
			case ctx.Err() != nil:
				return nil, ctx.Err()
			case b.Reject:
				return nil, &text2sql.ModelError{Provider: "func", StatusCode: 401, Message: "bad key"}
			}
			return &text2sql.ModelResponse{Text: b.Answer, Model: "func"}, nil
		}), nil
	}))
}

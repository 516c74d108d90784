package llmtest_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/llm/llmtest"
	"github.com/text2sql-go/text2sql/llm/modeltest"
)

// TestConformance runs the scripted model through the Model kit. A
// scripted model answers at once, so it cannot hang: the kit's hanging
// rules are not checked.
func TestConformance(t *testing.T) {
	assert.NoError(t, modeltest.TestModel(func(b modeltest.Backend) (text2sql.Model, error) {
		switch {
		case b.Hang:
			return nil, modeltest.ErrUnsupported
		case b.Reject:
			return llmtest.Func(func(text2sql.ModelRequest) (string, error) {
				return "", &text2sql.ModelError{Provider: "scripted", StatusCode: 400, Message: "rejected"}
			}), nil
		}
		return llmtest.New(b.Answer).RepeatLast(), nil
	}))
}

package openai

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/httpfake"
	"github.com/text2sql-go/text2sql/llm/modeltest"
)

// TestConformance runs the OpenAI model, against a local fake of the
// API, through the Model kit.
func TestConformance(t *testing.T) {
	assert.NoError(t, modeltest.TestModel(func(b modeltest.Backend) (text2sql.Model, error) {
		var rep httpfake.Reply
		switch {
		case b.Hang:
			rep = httpfake.Reply{Block: true}
		case b.Reject:
			rep = httpfake.Reply{Status: 401, Body: badKeyBody}
		default:
			text, err := json.Marshal(b.Answer)
			require.NoError(t, err)
			rep = httpfake.Reply{Body: `{"id": "chatcmpl-1", "object": "chat.completion", "created": 1733956455, "model": "gpt-4o-mini-2024-07-18",
				"choices": [{"index": 0, "message": {"role": "assistant", "content": ` + string(text) + `}, "finish_reason": "stop"}],
				"usage": {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17}}`}
		}
		m, _ := newModel(t, httpfake.New(t, rep), Options{})
		return m, nil
	}))
}

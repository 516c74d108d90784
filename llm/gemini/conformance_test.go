package gemini

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/httpfake"
	"github.com/text2sql-go/text2sql/llm/modeltest"
)

// TestConformance runs the Gemini model, against a local fake of the
// API, through the Model kit.
func TestConformance(t *testing.T) {
	assert.NoError(t, modeltest.TestModel(func(b modeltest.Backend) (text2sql.Model, error) {
		var rep httpfake.Reply
		switch {
		case b.Hang:
			rep = httpfake.Reply{Block: true}
		case b.Reject:
			rep = httpfake.Reply{Status: 400, Body: badKeyBody}
		default:
			text, err := json.Marshal(b.Answer)
			require.NoError(t, err)
			rep = httpfake.Reply{Body: `{"candidates": [{"content": {"parts": [{"text": ` + string(text) + `}], "role": "model"}, "finishReason": "STOP", "index": 0}],
				"usageMetadata": {"promptTokenCount": 12, "candidatesTokenCount": 5, "totalTokenCount": 17}, "modelVersion": "gemini-2.5-flash-001"}`}
		}
		m, _ := newModel(t, httpfake.New(t, rep), Options{})
		return m, nil
	}))
}

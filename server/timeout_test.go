package server

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/text2sql-go/text2sql/internal/httpfake"
	"github.com/text2sql-go/text2sql/llm/openai"
	"github.com/text2sql-go/text2sql/provider"
)

// A provider that takes the request and never answers: the model call's
// own limit ends /v1/ask well before the request timeout, as a 504 timeout
// that says it was the model.
func TestAskModelTimeout(t *testing.T) {
	hang := httpfake.New(t, httpfake.Reply{Block: true})
	model, err := openai.New(openai.Options{BaseURL: hang.URL + "/v1", HTTP: provider.HTTP{Timeout: 300 * time.Millisecond}})
	require.NoError(t, err)
	srv := testServer(t, Config{Pipeline: newPipeline(t, model, 0)})
	start := time.Now()
	r := do(t, srv, "POST", "/v1/ask", testToken, map[string]string{"question": "Which instructor teaches the most courses?"})
	assert.Less(t, time.Since(start), 2*time.Second)
	assert.Equal(t, 504, r.status)
	var e ErrorBody
	r.json(t, &e)
	assert.Equal(t, CodeTimeout, e.Error.Code)
	assert.Equal(t, "the model provider did not answer within the time limit of a model call", e.Error.Message)
}

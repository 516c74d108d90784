package openai

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/embed/embedtest"
	"github.com/text2sql-go/text2sql/internal/httpfake"
)

// TestConformance runs the OpenAI embedder, against a local fake of the
// API that answers each text with a vector computed from it, through the
// Embedder kit.
func TestConformance(t *testing.T) {
	assert.NoError(t, embedtest.TestEmbedder(func(b embedtest.Backend) (text2sql.Embedder, error) {
		var srv *httpfake.Server
		switch {
		case b.Hang:
			srv = httpfake.New(t, httpfake.Reply{Block: true})
		case b.Reject:
			srv = httpfake.New(t, httpfake.Reply{Status: 401, Body: `{"error": {"message": "Incorrect API key provided.", "type": "invalid_request_error", "param": null, "code": "invalid_api_key"}}`})
		default:
			srv = httpfake.New(t)
			srv.Handle = answer(16, true)
		}
		e, _ := newEmbedder(t, srv, Options{Dimension: 16})
		return e, nil
	}, embedtest.Options{Deterministic: true}))
}

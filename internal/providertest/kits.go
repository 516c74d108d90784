package providertest

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/embed/embedtest"
	"github.com/text2sql-go/text2sql/internal/httpfake"
	"github.com/text2sql-go/text2sql/llm/modeltest"
)

// fake is the server behind a kit's backend: one that never answers when
// hang, one that refuses every request with refusal when reject, and else
// one that answers each request with answer.
func fake(t testing.TB, hang, reject bool, refusal httpfake.Reply, answer func(httpfake.Request) httpfake.Reply) *httpfake.Server {
	switch {
	case hang:
		return httpfake.New(t, httpfake.Reply{Block: true})
	case reject:
		return httpfake.New(t, refusal)
	}
	srv := httpfake.New(t)
	srv.Handle = answer
	return srv
}

// ModelKit runs a model client through the Model kit
// (modeltest.TestModel), each backend a fake server: build makes the
// client against it. The fake refuses with refusal (the provider's
// answer to a bad key) and answers with the body body returns for the
// kit's answer, given as a JSON string literal.
func ModelKit(t *testing.T, refusal httpfake.Reply, body func(text string) string, build func(srv *httpfake.Server) text2sql.Model) {
	assert.NoError(t, modeltest.TestModel(func(b modeltest.Backend) (text2sql.Model, error) {
		text, err := json.Marshal(b.Answer)
		require.NoError(t, err)
		answer := httpfake.Reply{Body: body(string(text))}
		return build(fake(t, b.Hang, b.Reject, refusal, func(httpfake.Request) httpfake.Reply { return answer })), nil
	}))
}

// EmbedderKit runs an embedding client through the Embedder kit
// (embedtest.TestEmbedder, deterministic), each backend a fake server:
// build makes the client against it. The fake refuses with refusal (the
// provider's answer to a bad key) and answers each request with answer,
// which must embed each text the same way whatever its batch.
func EmbedderKit(t *testing.T, refusal httpfake.Reply, answer func(httpfake.Request) httpfake.Reply, build func(srv *httpfake.Server) text2sql.Embedder) {
	assert.NoError(t, embedtest.TestEmbedder(func(b embedtest.Backend) (text2sql.Embedder, error) {
		return build(fake(t, b.Hang, b.Reject, refusal, answer)), nil
	}, embedtest.Options{Deterministic: true}))
}

// ModelSuite is what the shared model-client tests need of a provider.
type ModelSuite struct {
	Client      Client                                    // one Complete call, as Errors and Timeout drive it
	OK          httpfake.Reply                            // a successful answer
	Unavailable httpfake.Reply                            // a retryable 503
	Refusal     httpfake.Reply                            // the provider's answer to a bad key
	Body        func(text string) string                  // an answer whose text is the JSON string literal text
	Build       func(srv *httpfake.Server) text2sql.Model // the client against srv, default options
}

// Build is ModelSuite.Build from a test's constructor of the client:
// newModel against srv with the zero options (the defaults).
func Build[O any, M text2sql.Model](t *testing.T, newModel func(t *testing.T, srv *httpfake.Server, opts O) (M, *Sleeps)) func(srv *httpfake.Server) text2sql.Model {
	return func(srv *httpfake.Server) text2sql.Model {
		var defaults O
		m, _ := newModel(t, srv, defaults)
		return m
	}
}

// Model runs a model client through the tests every provider shares, as
// subtests: Concurrent (8 calls at once), the Model kit (ModelKit),
// Timeout, and Attempts (a 503 then an answer: 2 attempts).
func Model(t *testing.T, s ModelSuite) {
	t.Run("Concurrent", func(t *testing.T) { Concurrent(t, s.Client, httpfake.New(t, s.OK), 16) })
	t.Run("Kit", func(t *testing.T) { ModelKit(t, s.Refusal, s.Body, s.Build) })
	t.Run("Timeout", func(t *testing.T) { Timeout(t, s.Client, s.Unavailable) })
	t.Run("Attempts", func(t *testing.T) { Attempts(t, s.Unavailable, s.OK, s.Build) })
}

package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/text2sql-go/text2sql/embed/fastembed"
	"github.com/text2sql-go/text2sql/internal/onnxrt/onnxrttest"
	"github.com/text2sql-go/text2sql/internal/shareddata"
	"github.com/text2sql-go/text2sql/internal/tinymodel"
	"github.com/text2sql-go/text2sql/rerank/crossencoder"
	"github.com/text2sql-go/text2sql/retriever"
	"github.com/text2sql-go/text2sql/server"
)

// filledModelDir returns a --model-dir holding stand-ins for the default
// fastembed model (a tiny embedder of its 384 dimensions) and the default
// cross-encoder, as a user's directory filled from the archives would.
func filledModelDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	tok, err := tinymodel.Tokenizer()
	require.NoError(t, err)
	require.NoError(t, tinymodel.Write(filepath.Join(dir, fastembed.BGESmallENV15.Name), map[string][]byte{
		fastembed.DefaultFile: tinymodel.Embedder(fastembed.BGESmallENV15.Dimension), tinymodel.TokenizerFile: tok,
	}))
	_, cross, err := tinymodel.Files()
	require.NoError(t, err)
	require.NoError(t, tinymodel.Write(filepath.Join(dir, crossencoder.MiniLML6.Name), cross))
	return dir
}

// context works from a filled --model-dir with no download, and names the
// embedder and reranker it used in doctor.
func TestContextLocalModelsOffline(t *testing.T) {
	onnxrttest.Require(t)
	dir := filledModelDir(t)
	for _, offline := range []bool{true, false} {
		args := []string{"context", "--demo", "--json", "--embedder", "fastembed", "--reranker", "cross-encoder", "--model-dir", dir}
		if offline {
			args = append(args, "--offline")
		}
		out, errOut, code := cli(t, append(args, "How many students take each class?")...)
		require.Equal(t, 0, code, "exit %d: %s", code, errOut)
		var c struct {
			Tables []struct{ Name string }
			Items  []struct{ ID string }
		}
		require.NoError(t, json.Unmarshal([]byte(out), &c), out)
		assert.NotEmpty(t, c.Tables)
		assert.NotEmpty(t, c.Items)
	}

	noProviderEnv(t)
	fs, _, code := doctorJSON(t, "--demo", "--embedder", "fastembed", "--reranker", "cross-encoder", "--model-dir", dir, "--offline")
	assert.Equal(t, 0, code)
	assert.Contains(t, fs["index"].Detail, "embedder fastembed/fast-bge-small-en-v1.5 (384 dimensions)")
	assert.Contains(t, fs["index"].Detail, "reranker cross-encoder/ms-marco-MiniLM-L-6-v2")
	assert.Equal(t, checkOK, fs["onnxruntime"].Status, fs["onnxruntime"].Detail)
	assert.Contains(t, fs["onnxruntime"].Detail, "ONNX Runtime 1.24.1")
}

// An empty --model-dir offline: exit 1 and one line saying what to
// download and where.
func TestContextEmptyModelDir(t *testing.T) {
	dir := t.TempDir()
	_, errOut, code := cli(t, "context", "--demo", "--embedder", "fastembed", "--model-dir", dir, "--offline", "How many students?")
	assert.Equal(t, exitError, code)
	line := strings.TrimSpace(errOut)
	assert.NotContains(t, line, "\n")
	assert.Contains(t, line, filepath.Join(dir, "fast-bge-small-en-v1.5"))
	assert.Contains(t, line, "https://storage.googleapis.com/qdrant-fastembed/fast-bge-small-en-v1.5.tar.gz")
	assert.Contains(t, line, "unpack it into "+dir)

	_, errOut, code = cli(t, "context", "--demo", "--reranker", "cross-encoder", "--model-dir", dir, "--offline", "How many students?")
	assert.Equal(t, exitError, code)
	line = strings.TrimSpace(errOut)
	assert.NotContains(t, line, "\n")
	assert.Contains(t, line, crossencoder.MiniLML6.Source+"/onnx/model.onnx")
	assert.Contains(t, line, "into "+filepath.Join(dir, "ms-marco-MiniLM-L-6-v2"))
}

func TestModelFlagUsage(t *testing.T) {
	for _, args := range [][]string{
		{"--embedder", "word2vec"},
		{"--reranker", "bm25"},
		{"--embedder", "fastembed", "--embedding-model", "nope"},
		{"--embedding-model", "x"}, // hashing has no model
	} {
		_, errOut, code := cli(t, append(append([]string{"context", "--demo"}, args...), "How many?")...)
		assert.Equal(t, exitUsage, code, "%v: %s", args, errOut)
	}
}

// The service's /health names the embedder and the reranker the flags
// chose.
func TestHealthNamesLocalModels(t *testing.T) {
	onnxrttest.Require(t)
	o := &options{demo: true, indexDir: t.TempDir(), maxRows: 10, timeout: time.Second, maxTables: retriever.DefaultMaxTables, budget: retriever.DefaultBudget,
		models: modelFlags{embedder: "fastembed", reranker: "cross-encoder", modelDir: filledModelDir(t), offline: true}}
	ctx := context.Background()
	env, err := o.open(ctx, false)
	require.NoError(t, err)
	defer env.Close()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg, release, err := serviceConfig(ctx, o, nil, env, logger)
	require.NoError(t, err)
	defer release()
	cfg.Auth = server.NoAuth()
	h, err := server.New(cfg)
	require.NoError(t, err)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/health", nil))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	var health server.HealthResponse
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &health))
	assert.Equal(t, "fastembed/fast-bge-small-en-v1.5", health.Index.Embedder)
	assert.Equal(t, "cross-encoder/ms-marco-MiniLM-L-6-v2", health.Index.Reranker)
}

// --reranker llm: the provider's model selects the tables, which are shown
// first, and the selection is in context --json; without a provider it is
// a usage error.
func TestContextLLMReranker(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("GEMINI_API_KEY", "")
	db := shareddata.SpiderDB(t, "concert_singer")
	model, calls := openAIServer(t, func(string) string {
		return `{"reasoning": "stadium capacities", "tables": ["stadium"]}`
	})
	out, errOut, code := cli(t, "context", "--db", db, "--json", "--budget", "-1", "--reranker", "llm",
		"--base-url", model.URL+"/v1", "--model", "local-model", "How many singers do we have?")
	require.Equal(t, 0, code, "exit %d: %s", code, errOut)
	var c struct {
		Tables []struct{ Name string }
		Rerank struct {
			Reranker string
			Calls    []json.RawMessage
			Tables   []string
		}
	}
	require.NoError(t, json.Unmarshal([]byte(out), &c), out)
	require.NotEmpty(t, c.Tables)
	assert.Equal(t, "stadium", c.Tables[0].Name, "the model's table comes first: %s", out)
	assert.Equal(t, "llm", c.Rerank.Reranker)
	assert.Equal(t, []string{"stadium"}, c.Rerank.Tables)
	assert.Equal(t, 1, *calls)

	_, errOut, code = cli(t, "context", "--db", db, "--reranker", "llm", "How many singers do we have?")
	assert.Equal(t, exitUsage, code, errOut)
	assert.Contains(t, errOut, "--reranker llm")
}

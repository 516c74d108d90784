package onnxrt_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/text2sql-go/text2sql/internal/onnxrt"
	"github.com/text2sql-go/text2sql/internal/onnxrt/onnxrttest"
)

var (
	bertInputs   = []string{"input_ids", "attention_mask"}
	optionalType = []string{"token_type_ids"}
	embedderFile = "../../embed/fastembed/testdata/tiny/model_optimized.onnx"
	crossFile    = "../../rerank/crossencoder/testdata/tiny/onnx/model.onnx"
)

func TestRunShapes(t *testing.T) {
	onnxrttest.Require(t)
	ids := []int64{2, 60, 3, 2, 61, 3}
	mask := []int64{1, 1, 1, 1, 1, 1}
	types := make([]int64, 6)

	s, err := onnxrt.Open(embedderFile, bertInputs, optionalType, "last_hidden_state", 1)
	require.NoError(t, err)
	defer s.Close()
	assert.Equal(t, []string{"input_ids", "attention_mask", "token_type_ids"}, s.Inputs())
	out, shape, err := s.Run([]int64{2, 3}, ids, mask, types)
	require.NoError(t, err)
	assert.Equal(t, []int64{2, 3, 64}, shape)
	assert.Len(t, out, 2*3*64)

	c, err := onnxrt.Open(crossFile, bertInputs, optionalType, "logits", 0)
	require.NoError(t, err)
	defer c.Close()
	out, shape, err = c.Run([]int64{2, 3}, ids, mask, []int64{0, 0, 1, 0, 0, 1})
	require.NoError(t, err)
	assert.Equal(t, []int64{2, 1}, shape)
	assert.Len(t, out, 2)

	_, _, err = s.Run([]int64{2, 3}, ids)
	assert.ErrorContains(t, err, "1 inputs given, the model has 3")
}

func TestOpenRejects(t *testing.T) {
	onnxrttest.Require(t)
	_, err := onnxrt.Open(embedderFile, bertInputs, optionalType, "logits", 0)
	assert.ErrorContains(t, err, `model has no output "logits"`)
	_, err = onnxrt.Open(embedderFile, bertInputs, nil, "last_hidden_state", 0)
	assert.ErrorContains(t, err, `unexpected model input "token_type_ids"`)
	_, err = onnxrt.Open(embedderFile, []string{"input_ids", "pixel_values"}, optionalType, "last_hidden_state", 0)
	assert.Error(t, err)

	bad := filepath.Join(t.TempDir(), "model.onnx")
	require.NoError(t, os.WriteFile(bad, []byte("not a model"), 0o644))
	_, err = onnxrt.Open(bad, bertInputs, optionalType, "last_hidden_state", 0)
	assert.Error(t, err)
	_, err = onnxrt.Open(filepath.Join(t.TempDir(), "absent.onnx"), bertInputs, optionalType, "last_hidden_state", 0)
	assert.Error(t, err)
}

func TestFind(t *testing.T) {
	dir := t.TempDir()
	lib := filepath.Join(dir, "libonnxruntime.so")
	require.NoError(t, os.WriteFile(lib, nil, 0o644))

	file, source, err := onnxrt.Find(lib)
	require.NoError(t, err)
	assert.Equal(t, lib, file)
	assert.Equal(t, "option", source)

	t.Setenv(onnxrt.LibraryEnv, lib)
	file, source, err = onnxrt.Find("")
	require.NoError(t, err)
	assert.Equal(t, lib, file)
	assert.Equal(t, onnxrt.LibraryEnv, source)

	t.Setenv(onnxrt.LibraryEnv, filepath.Join(dir, "absent.so"))
	_, _, err = onnxrt.Find("")
	var rerr *onnxrt.RuntimeError
	require.ErrorAs(t, err, &rerr)
	assert.ErrorIs(t, err, onnxrt.ErrRuntime)
	assert.Contains(t, err.Error(), "absent.so")
	assert.Contains(t, err.Error(), onnxrt.LibraryEnv)

	_, _, err = onnxrt.Find(dir)
	assert.ErrorIs(t, err, onnxrt.ErrRuntime)
}

// Once loaded, the runtime stays; asking for another library is an error.
func TestInitOnce(t *testing.T) {
	onnxrttest.Require(t)
	require.NoError(t, onnxrt.Init(""))
	other := filepath.Join(t.TempDir(), "libonnxruntime.so")
	require.NoError(t, os.WriteFile(other, nil, 0o644))
	err := onnxrt.Init(other)
	assert.ErrorIs(t, err, onnxrt.ErrRuntime)
	assert.ErrorContains(t, err, "already loaded")
}

package modelfiles

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func tarGz(t *testing.T, files map[string]string) []byte {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for name, data := range files {
		require.NoError(t, tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg}))
		_, err := tw.Write([]byte(data))
		require.NoError(t, err)
	}
	require.NoError(t, tw.Close())
	require.NoError(t, gz.Close())
	return buf.Bytes()
}

// The archive's top directory is dropped when it is named as the model,
// whatever the directory is called.
func TestArchiveTopDirectory(t *testing.T) {
	body := tarGz(t, map[string]string{"m1/model.onnx": "x", "m1/tokenizer.json": "{}", "m1/sub/extra.txt": "e"})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(body) }))
	defer srv.Close()
	dir := filepath.Join(t.TempDir(), "elsewhere")
	require.NoError(t, Ensure(context.Background(), Spec{Model: "m1", Dir: dir, Files: []string{"model.onnx", "tokenizer.json"}, Archive: srv.URL}))
	assert.FileExists(t, filepath.Join(dir, "model.onnx"))
	assert.FileExists(t, filepath.Join(dir, "sub", "extra.txt"))
}

// An archive without the files is a *MissingError saying so.
func TestArchiveLacksFiles(t *testing.T) {
	body := tarGz(t, map[string]string{"m1/model.onnx": "x"})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(body) }))
	defer srv.Close()
	err := Ensure(context.Background(), Spec{Model: "m1", Dir: filepath.Join(t.TempDir(), "m1"), Files: []string{"model.onnx", "tokenizer.json"}, Archive: srv.URL})
	var miss *MissingError
	require.ErrorAs(t, err, &miss)
	assert.Equal(t, []string{"tokenizer.json"}, miss.Missing)
	assert.ErrorContains(t, err, "does not contain them")
}

// A download cut short leaves no file under its final name.
func TestInterruptedDownloadLeavesNoFile(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000")
		w.Write([]byte("partial"))
	}))
	defer srv.Close()
	dir := t.TempDir()
	err := Ensure(context.Background(), Spec{Model: "m", Dir: dir, Files: []string{"onnx/model.onnx"}, BaseURL: srv.URL})
	var miss *MissingError
	require.ErrorAs(t, err, &miss)
	assert.NoFileExists(t, filepath.Join(dir, "onnx", "model.onnx"))
	entries, _ := os.ReadDir(filepath.Join(dir, "onnx"))
	assert.Empty(t, entries, "no temporary file left")
	assert.Equal(t, []string{srv.URL + "/onnx/model.onnx"}, miss.URLs)
	assert.Contains(t, err.Error(), "download "+srv.URL+"/onnx/model.onnx into "+dir)
}

func TestFileError(t *testing.T) {
	err := &FileError{Path: "/m/tokenizer.json", Err: os.ErrInvalid}
	assert.ErrorIs(t, err, os.ErrInvalid)
	assert.Contains(t, err.Error(), "/m/tokenizer.json")
}

func TestDefaultRoot(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", "/cache")
	t.Setenv("HOME", "/home/u")
	assert.Equal(t, filepath.Join("/cache", "text2sql", "models"), DefaultRoot())
}

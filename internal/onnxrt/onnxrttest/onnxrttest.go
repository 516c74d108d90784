// Package onnxrttest holds what the tests of the models on ONNX Runtime
// (embed/fastembed, rerank/crossencoder) share: the library (Require: they
// run where it is installed, are skipped where it is not, and fail under
// CI=true, where .ci/run installs it and a missing library is a broken
// build); a copy of a model directory (Copy); and the checks of their file
// errors (Missing, Corrupt) and of concurrent calls on one session
// (Concurrent).
package onnxrttest

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/text2sql-go/text2sql/internal/modelfiles"
	"github.com/text2sql-go/text2sql/internal/onnxrt"
)

// Require loads the library (onnxrt.Init with no path: ONNXRUNTIME_LIB or
// the usual directories); when it cannot, t fails under CI=true and is
// skipped otherwise, with the loader's message.
func Require(t testing.TB) {
	t.Helper()
	if err := onnxrt.Init(""); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and ONNX Runtime is missing: %v", err)
		}
		t.Skipf("ONNX Runtime not installed (run .ci/install-onnxruntime.sh and set %s): %v", onnxrt.LibraryEnv, err)
	}
}

// Copy copies files, paths relative to the model directory src (e.g.
// "onnx/model.onnx"), into a new temporary directory and returns it.
func Copy(t testing.TB, src string, files ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(src, f))
		require.NoError(t, err)
		p := filepath.Join(dir, f)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, data, 0o644))
	}
	return dir
}

// Missing checks err, a constructor's error for the empty model directory
// dir offline: a *modelfiles.MissingError of dir listing files, in order,
// whose message is one line naming dir. It returns the message, for the
// caller's checks of where the files come from.
func Missing(t *testing.T, err error, dir string, files ...string) string {
	t.Helper()
	var miss *modelfiles.MissingError
	require.ErrorAs(t, err, &miss)
	assert.Equal(t, dir, miss.Dir)
	assert.Equal(t, files, miss.Missing)
	msg := err.Error()
	assert.NotContains(t, msg, "\n")
	assert.Contains(t, msg, dir)
	return msg
}

// Damage is one damaged model file: File (a path in the model directory)
// overwritten with Data.
type Damage struct {
	File string
	Data []byte
}

// Corrupt checks, for each named case, that load (the constructor on a
// model directory) fails on a copy of the directory src (its files) with
// the case's damage, with a *modelfiles.FileError whose Path is the
// damaged file's.
func Corrupt(t *testing.T, src string, files []string, cases map[string]Damage, load func(dir string) error) {
	t.Helper()
	for name, c := range cases {
		dir := Copy(t, src, files...)
		require.NoError(t, os.WriteFile(filepath.Join(dir, c.File), c.Data, 0o644))
		var ferr *modelfiles.FileError
		require.ErrorAs(t, load(dir), &ferr, name)
		assert.Equal(t, filepath.Join(dir, c.File), ferr.Path, name)
	}
}

// Concurrent checks that n calls of call at once, on one model and so one
// session, each give what a call alone gives.
func Concurrent[T any](t *testing.T, n int, call func() (T, error)) {
	t.Helper()
	want, err := call()
	require.NoError(t, err)
	errs := make(chan error, n)
	for range n {
		go func() {
			got, err := call()
			if err == nil && !assert.ObjectsAreEqual(want, got) {
				err = fmt.Errorf("concurrent result %v, want %v", got, want)
			}
			errs <- err
		}()
	}
	for range n {
		assert.NoError(t, <-errs)
	}
}

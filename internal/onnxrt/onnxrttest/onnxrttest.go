// Package onnxrttest gives tests the ONNX Runtime library: they run where it
// is installed, are skipped where it is not, and fail under CI=true, where
// .ci/run installs it and a missing library is a broken build.
package onnxrttest

import (
	"os"
	"testing"

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

// Package shareddata locates the shared test data (Spider, BIRD, Chinook)
// that lives beside the repository as ../shared/data, for tests and
// benchmarks. Tests skip with a clear message where it is absent.
package shareddata

import (
	"os"
	"path/filepath"
	"testing"
)

// Dir returns the shared data directory: $TEXT2SQL_SHARED_DATA if set, else
// the first "shared/data" found beside the module root or one of its
// parents. It returns "" when there is none.
func Dir() string {
	if d := os.Getenv("TEXT2SQL_SHARED_DATA"); d != "" {
		return d
	}
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	for d := wd; ; d = filepath.Dir(d) {
		cand := filepath.Join(d, "shared", "data")
		if st, err := os.Stat(cand); err == nil && st.IsDir() {
			return cand
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}

// Path returns the path of elem under the shared data directory, or skips
// the test when the data is absent.
func Path(tb testing.TB, elem ...string) string {
	tb.Helper()
	d := Dir()
	if d == "" {
		tb.Skip("shared test data not found (expected ../shared/data beside the repository, or $TEXT2SQL_SHARED_DATA)")
	}
	p := filepath.Join(append([]string{d}, elem...)...)
	if _, err := os.Stat(p); err != nil {
		tb.Skipf("shared test data %s not found", p)
	}
	return p
}

package main

import (
	"fmt"
	"os"
	"testing"
)

// TestMain gives the tests a user config directory of their own: the
// example store's default file lives there (os.UserConfigDir), and a test
// must neither read the user's verified examples nor leave its own behind.
// It removes the benchmarks' synthetic databases.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "text2sql-test-config-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("XDG_CONFIG_HOME", dir)
	code := m.Run()
	os.RemoveAll(dir)
	if scaleFixtures.dir != "" {
		os.RemoveAll(scaleFixtures.dir)
	}
	os.Exit(code)
}

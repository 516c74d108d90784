// Package examples holds only this test; each subdirectory is a program of
// its own (go run ./examples/<name>).
package examples

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readme is the repository's README.md.
func readme(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "README.md"))
	require.NoError(t, err)
	return string(b)
}

// goBlock returns the body of the first ```go block in the section of md
// under heading (up to the next "## " heading), ending with a newline.
func goBlock(md, heading string) (string, bool) {
	_, section, ok := strings.Cut(md, "\n"+heading+"\n")
	if !ok {
		return "", false
	}
	if i := strings.Index(section, "\n## "); i >= 0 {
		section = section[:i]
	}
	_, code, ok := strings.Cut(section, "\n```go\n")
	if !ok {
		return "", false
	}
	code, _, ok = strings.Cut(code, "\n```")
	return code + "\n", ok
}

// The README's Go quick start is examples/quickstart/main.go as it is, so
// the snippet compiles and runs (TestExamplesRun) as the README shows it.
func TestQuickStartInREADME(t *testing.T) {
	file, err := os.ReadFile(filepath.Join("quickstart", "main.go"))
	require.NoError(t, err)
	snippet, ok := goBlock(readme(t), "## Go quick start")
	require.True(t, ok, "README.md has no ```go block under \"## Go quick start\"")
	assert.Equal(t, string(file), snippet, "README.md's Go quick start differs from examples/quickstart/main.go: copy the file into the README")
}

// run is one example's expected behaviour without a key.
type run struct {
	name string   // the directory under examples/
	code int      // exit status
	says []string // text of its standard output (status 0) or standard error
}

var runs = []run{
	{"quickstart", 0, []string{"\nanswered: Counts the instructors of each department.\n", "\nComputer Science 4\n", "\ndeclined: The registrar database holds no weather data.\n"}},
	{"customstage", 0, []string{"\n  unknown_table: no such table: course\n", "\n  hint: did you mean \"courses\"?\n", "\nanswered after 2 attempts: courses = 36\n"}},
	{"scoring", 0, []string{"\nstudents   correct", "\nEX 0.25 (1 of 4 correct)\n"}},
	{"knowledgebase", 0, []string{"\n  table:enrollments ", "\n  reusable example fall-headcount (similarity 1.00): SELECT", "\n    question: How many students are enrolled in Fall 2025?\n"}},
	{"provider", 1, []string{"set GEMINI_API_KEY, or OPENAI_API_KEY / OPENAI_BASE_URL, to choose a model\n"}}, // needs a key
}

// Every program under examples/ is in runs and has its line in the README.
func TestExamplesListed(t *testing.T) {
	entries, err := os.ReadDir(".")
	require.NoError(t, err)
	var dirs []string
	for _, e := range entries {
		if e.IsDir() {
			dirs = append(dirs, e.Name())
		}
	}
	var names []string
	for _, r := range runs {
		names = append(names, r.name)
	}
	assert.ElementsMatch(t, dirs, names, "an example directory without an entry in runs, or an entry without its directory")
	md := readme(t)
	for _, name := range dirs {
		assert.Contains(t, md, "go run ./examples/"+name, "README.md has no line for examples/%s", name)
	}
}

// Each example builds and, with no key in the environment, exits with its
// status and prints what it says, within a minute.
func TestExamplesRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the examples with the go command")
	}
	gobin, err := exec.LookPath("go")
	require.NoError(t, err, "the go command builds the examples")
	bin := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, gobin, "build", "-o", bin+string(filepath.Separator), "./...").CombinedOutput()
	require.NoError(t, err, "go build ./examples/...: %s", out)

	// No key and a cache directory of the test's own (demo.Ensure writes the demo database there).
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return slices.Contains([]string{"GEMINI_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "XDG_CACHE_HOME"}, name)
	})
	env = append(env, "XDG_CACHE_HOME="+t.TempDir())
	for _, r := range runs {
		t.Run(r.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(ctx, time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, filepath.Join(bin, r.name))
			cmd.Env = env
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			code := 0
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				code = exit.ExitCode()
			} else {
				require.NoError(t, err)
			}
			require.Equal(t, r.code, code, "exit status; standard error:\n%s", stderr.String())
			got := "\n" + stdout.String() // "\n" + s matches s at the start of a line
			if r.code != 0 {
				got = "\n" + stderr.String()
			}
			for _, s := range r.says {
				assert.Contains(t, got, s)
			}
		})
	}
}

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ask --chart writes one self-contained page for a result with a chart
// (the demo's verified example counts students per course: bars), and
// --json carries the chart; a single value writes no page.
func TestAskChart(t *testing.T) {
	t.Setenv("GEMINI_API_KEY", "")
	t.Setenv("OPENAI_API_KEY", "")
	page := filepath.Join(t.TempDir(), "chart.html")
	_, errOut, code := cli(t, "ask", "--demo", "--chart", page, "How many students are enrolled in each course?")
	require.Equal(t, 0, code, "exit %d: %s", code, errOut)
	assert.Contains(t, errOut, "Chart (bar) written to "+page)
	b, err := os.ReadFile(page)
	require.NoError(t, err)
	html := string(b)
	assert.True(t, strings.HasPrefix(html, "<!doctype html>"))
	assert.True(t, strings.Contains(html, `"mark":{"type":"bar"`), "the spec is in the page")
	assert.False(t, strings.Contains(html, "<script src"), "scripts are inline")

	out, _, code := cli(t, "ask", "--demo", "--json", "How many students are enrolled in each course?")
	require.Equal(t, 0, code)
	assert.Contains(t, out, `"chart": {`)

	single := filepath.Join(t.TempDir(), "none.html")
	_, errOut, code = cli(t, "ask", "--demo", "--chart", single, "How many students have not declared a major?")
	require.Equal(t, 0, code, "exit %d: %s", code, errOut)
	assert.Contains(t, errOut, "No chart")
	assert.NoFileExists(t, single)
}

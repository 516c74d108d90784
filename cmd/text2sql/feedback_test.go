package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An up-voted answer is reused on the next identical question without a
// model call, in the same process and after a restart; a write smuggled
// into feedback SQL is refused; the principal's feedback is audited.
func TestFeedbackServe(t *testing.T) {
	const q = "Which departments have the most majors?"
	const sql = "SELECT d.name, COUNT(*) AS majors FROM students s JOIN departments d ON d.department_id = s.major_department_id GROUP BY d.name ORDER BY majors DESC"
	model, calls := openAIServer(t, func(string) string {
		return modelAnswer(sql, "majors per department")
	})
	examples := filepath.Join(t.TempDir(), "examples.sqlite")
	args := []string{"--demo", "--examples", examples, "--provider", "openai", "--base-url", model.URL + "/v1", "--model", "m"}
	env := []string{"OPENAI_API_KEY=sk-test"}
	r := startReplica(t, env, args...)

	status, _, a := r.call(t, "POST", "/v1/ask", map[string]string{"question": q})
	require.Equal(t, 200, status, "%v", a)
	require.Equal(t, 1, *calls)

	status, _, fb := r.call(t, "POST", "/v1/feedback", map[string]string{"question": q, "sql": a["sql"].(string), "verdict": "up", "note": "checked by hand"})
	require.Equal(t, 200, status, "%v", fb)
	assert.Equal(t, true, fb["added"])
	id := fb["example_id"].(string)
	require.True(t, strings.HasPrefix(id, "fb-"), id)

	status, _, a = r.call(t, "POST", "/v1/ask", map[string]string{"question": "which departments have the most majors"})
	require.Equal(t, 200, status, "%v", a)
	assert.Equal(t, id, a["reused_example"], "reused in the same process")
	assert.Equal(t, 1, *calls, "no model call")

	status, _, bad := r.call(t, "POST", "/v1/feedback", map[string]string{"question": "Delete everyone", "sql": "SELECT 1; DELETE FROM students", "verdict": "up"})
	assert.Equal(t, 422, status, "%v", bad)
	assert.Equal(t, "refused_sql", bad["error"].(map[string]any)["code"])
	status, _, bad = r.call(t, "POST", "/v1/feedback", map[string]string{"question": q, "sql": sql, "verdict": "sideways"})
	assert.Equal(t, 400, status, "%v", bad)

	log := r.stderr.String()
	assert.True(t, strings.Contains(log, `"outcome":"feedback up"`) && strings.Contains(log, `"principal":"alice"`), "the audit log has alice's feedback:\n%s", log)

	restarted := startReplica(t, env, args...)
	status, _, a = restarted.call(t, "POST", "/v1/ask", map[string]string{"question": q})
	require.Equal(t, 200, status, "%v", a)
	assert.Equal(t, id, a["reused_example"], "reused after a restart, from the index")
	assert.Equal(t, 1, *calls, "no model call after the restart")
}

// The CLI: feedback adds an example that ask reuses offline; examples
// list, export and remove.
func TestFeedbackCLI(t *testing.T) {
	t.Setenv("GEMINI_API_KEY", "")
	t.Setenv("OPENAI_API_KEY", "")
	examples := filepath.Join(t.TempDir(), "examples.sqlite")
	const q = "How many courses does each department offer?"
	const sql = "SELECT d.name, COUNT(*) AS courses FROM courses c JOIN departments d USING (department_id) GROUP BY d.name"
	base := []string{"--demo", "--index-dir", t.TempDir(), "--examples", examples}
	out, errOut, code := cli(t, append(base, "feedback", "--verdict", "up", "--sql", sql, q)...)
	require.Equal(t, 0, code, "exit %d: %s", code, errOut)
	assert.Contains(t, out, "Added verified example fb-")

	out, errOut, code = cli(t, append(base, "ask", q)...)
	require.Equal(t, 0, code, "exit %d: %s", code, errOut)
	assert.Contains(t, out, "reused verified example fb-")

	_, errOut, code = cli(t, append(base, "feedback", "--verdict", "up", "--sql", "UPDATE courses SET credits = 0", "Zero the credits")...)
	assert.Equal(t, exitSQL, code, "a write: %s", errOut)

	out, _, code = cli(t, append(base, "feedback", "--verdict", "down", "--sql", sql, "courses per department")...)
	require.Equal(t, 0, code)
	assert.Contains(t, out, "flagged for review: fb-")
	out, _, code = cli(t, append(base, "examples", "list")...)
	require.Equal(t, 0, code)
	assert.Contains(t, out, "review")
	out, _, code = cli(t, append(base, "ask", q)...)
	assert.Equal(t, exitNoModel, code, "a flagged example is not reused: %s", out)

	_, _, code = cli(t, append(base, "feedback", "--verdict", "up", "--sql", sql, q)...)
	require.Equal(t, 0, code)
	out, _, code = cli(t, append(base, "examples", "export")...)
	require.Equal(t, 0, code)
	assert.Contains(t, out, "examples:")
	assert.Contains(t, out, q)
	id := out[strings.Index(out, "fb-"):][:len("fb-")+8]
	out, _, code = cli(t, append(base, "examples", "remove", id)...)
	require.Equal(t, 0, code)
	assert.Contains(t, out, "Removed "+id)
	_, _, code = cli(t, append(base, "examples", "remove", id)...)
	assert.Equal(t, exitError, code)
}

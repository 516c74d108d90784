package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	bobToken   = "tok-bob-replica-0123456789"
	carolToken = "tok-carol-replica-0123456789"
)

// callAs is r.call with another principal's token.
func (r *replica) callAs(t *testing.T, token, method, path string, body any) (int, map[string]any) {
	t.Helper()
	var b []byte
	if body != nil {
		var err error
		b, err = json.Marshal(body)
		require.NoError(t, err)
	}
	req, err := http.NewRequest(method, r.url+path, bytes.NewReader(b))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := replicaClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var out map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out), "%s %s: %d", method, path, resp.StatusCode)
	return resp.StatusCode, out
}

// Two serve processes on one example store, with carol the reviewer: bob's
// up-vote on one is not alice's answer on the other; carol's approval on
// the other is reused for both on the first; bob's down-vote stops
// nothing; the host's rejection with the CLI stops it on both.
func TestReviewReplicas(t *testing.T) {
	const q = "How many courses are offered by the university?"
	const planted = "SELECT 0 AS n"
	model, calls := openAIServer(t, func(string) string { return modelAnswer("SELECT count(*) AS n FROM courses", "counts the courses") })
	examples := filepath.Join(t.TempDir(), "examples.sqlite")
	args := []string{"--demo", "--examples", examples, "--reviewers", "carol", "--provider", "openai", "--base-url", model.URL + "/v1", "--model", "m"}
	env := []string{"OPENAI_API_KEY=sk-test", "TEXT2SQL_TOKENS=alice:" + replicaToken + ",bob:" + bobToken + ",carol:" + carolToken}
	a := startReplica(t, env, args...)
	b := startReplica(t, env, args...)
	reused := func(r *replica, token string) any {
		t.Helper()
		status, ans := r.callAs(t, token, "POST", "/v1/ask", map[string]string{"question": q})
		require.Equal(t, 200, status, "%v", ans)
		return ans["reused_example"]
	}

	status, fb := a.callAs(t, bobToken, "POST", "/v1/feedback", map[string]string{"question": q, "sql": planted, "verdict": "up"})
	require.Equal(t, 200, status, "%v", fb)
	assert.Equal(t, "pending", fb["status"])
	id := fb["example_id"].(string)
	assert.Nil(t, reused(b, replicaToken), "bob's vote on A answered alice on B")
	assert.Equal(t, 1, *calls)
	assert.Equal(t, id, reused(b, bobToken), "bob's own question")

	status, body := b.callAs(t, bobToken, "POST", "/v1/examples/"+id+"/approve", nil)
	assert.Equal(t, 403, status, "%v", body)
	status, body = b.callAs(t, carolToken, "POST", "/v1/examples/"+id+"/approve", nil)
	require.Equal(t, 200, status, "%v", body)
	assert.Equal(t, id, reused(a, replicaToken), "approved on B, reused for alice on A")
	assert.Equal(t, id, reused(a, bobToken))

	status, _ = b.callAs(t, bobToken, "POST", "/v1/feedback", map[string]string{"question": q, "sql": planted, "verdict": "down"})
	require.Equal(t, 200, status)
	assert.Equal(t, id, reused(a, replicaToken), "bob's down-vote stopped the reviewed example")
	assert.Equal(t, 1, *calls)
	assert.Contains(t, b.stderr.String(), `"outcome":"example approve"`)
	assert.Contains(t, b.stderr.String(), `"principal":"carol"`)

	out, errOut, code := cli(t, "--demo", "--examples", examples, "examples", "review")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, id+"  trusted  true", "flagged by bob's down-vote")
	out, errOut, code = cli(t, "--demo", "--examples", examples, "examples", "reject", id)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, id+" rejected (proposed by bob; 1 up, 1 down)")
	for _, r := range []*replica{a, b} {
		assert.Nil(t, reused(r, replicaToken), "rejected by the host")
		assert.Nil(t, reused(r, bobToken))
	}
}

// The CLI with --as votes as that principal: the example waits for review
// and the host's ask does not reuse it until examples approve.
func TestReviewCLI(t *testing.T) {
	t.Setenv("GEMINI_API_KEY", "")
	t.Setenv("OPENAI_API_KEY", "")
	const q = "How many courses does each department offer?"
	const sql = "SELECT d.name, COUNT(*) AS courses FROM courses c JOIN departments d USING (department_id) GROUP BY d.name"
	base := []string{"--demo", "--index-dir", t.TempDir(), "--examples", filepath.Join(t.TempDir(), "examples.sqlite")}
	out, errOut, code := cli(t, append(base, "--as", "bob", "feedback", "--verdict", "up", "--sql", sql, q)...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "waiting for review: it serves only bob")
	id := out[strings.Index(out, "fb-"):][:len("fb-")+8]

	out, _, code = cli(t, append(base, "ask", q)...)
	assert.Equal(t, exitNoModel, code, "bob's proposal answered the host: %s", out)
	out, _, code = cli(t, append(base, "--as", "bob", "ask", q)...)
	require.Equal(t, 0, code, out)
	assert.Contains(t, out, "reused verified example "+id)

	out, _, code = cli(t, append(base, "examples", "review")...)
	require.Equal(t, 0, code)
	assert.Contains(t, out, id+"  pending")
	_, _, code = cli(t, append(base, "examples", "approve", "fb-00000000")...)
	assert.Equal(t, exitError, code)
	out, errOut, code = cli(t, append(base, "examples", "approve", id)...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, id+" trusted (proposed by bob; 1 up, 0 down)")
	out, _, code = cli(t, append(base, "ask", q)...)
	require.Equal(t, 0, code, out)
	assert.Contains(t, out, "reused verified example "+id)
	out, _, code = cli(t, append(base, "examples", "review")...)
	require.Equal(t, 0, code)
	assert.NotContains(t, out, id)
}

package main

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/text2sql-go/text2sql/internal/dbtest"
	"github.com/text2sql-go/text2sql/internal/syncbuf"
)

// These tests run real `text2sql serve` processes (the test binary through
// TestHelperProcess) against a private redis-server each, so they can stop
// and restart Redis without touching the machine's own.

const replicaToken = "tok-replica-0123456789"

// redisServer is a private redis-server on a loopback port.
type redisServer struct {
	t    *testing.T
	port int
	cmd  *exec.Cmd
}

func startRedis(t *testing.T) *redisServer {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("redis-server is not installed: %v", err)
		}
		t.Skipf("redis-server is not installed: %v", err)
	}
	r := &redisServer{t: t, port: freePort(t)}
	r.start()
	t.Cleanup(r.stop)
	return r
}

func (r *redisServer) url() string { return fmt.Sprintf("redis://127.0.0.1:%d/0", r.port) }

// start runs redis-server on r's port, without persistence, and waits
// until it answers.
func (r *redisServer) start() {
	r.t.Helper()
	r.cmd = exec.Command("redis-server", "--port", strconv.Itoa(r.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	require.NoError(r.t, r.cmd.Start())
	rdb := redis.NewClient(&redis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", r.port), MaxRetries: -1})
	defer rdb.Close()
	require.Eventually(r.t, func() bool { return rdb.Ping(context.Background()).Err() == nil }, 10*time.Second, 20*time.Millisecond, "redis-server did not start")
}

func (r *redisServer) stop() {
	if r.cmd == nil {
		return
	}
	r.cmd.Process.Kill()
	r.cmd.Wait()
	r.cmd = nil
}

// freePort returns a loopback TCP port nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// replica is one `text2sql serve` process.
type replica struct {
	url    string
	stderr *syncbuf.Buffer
}

// startReplica runs `text2sql serve ARGS` on a free loopback port with a
// static token and an index directory of its own, and waits until it
// listens. The process is stopped with SIGTERM when the test ends.
func startReplica(t *testing.T, env []string, args ...string) *replica {
	t.Helper()
	args = append([]string{"-test.run=^TestHelperProcess$", "--", "serve", "--addr", "127.0.0.1:0", "--auth", "static",
		"--log-format", "json", "--index-dir", t.TempDir()}, args...)
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), append([]string{"TEXT2SQL_CLI_HELPER=1", "TEXT2SQL_TOKENS=alice:" + replicaToken,
		"GEMINI_API_KEY=", "OPENAI_API_KEY="}, env...)...)
	pipe, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	r := &replica{stderr: &syncbuf.Buffer{}}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			r.stderr.Write(append(sc.Bytes(), '\n'))
			var line struct{ Msg, Addr string }
			if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "listening" {
				addr <- line.Addr
			}
		}
		close(addr)
	}()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	})
	select {
	case a, ok := <-addr:
		require.True(t, ok, "serve exited before listening:\n%s", r.stderr.String())
		r.url = "http://" + a
	case <-time.After(2 * time.Minute):
		t.Fatalf("serve did not listen within 2 minutes:\n%s", r.stderr.String())
	}
	return r
}

var replicaClient = &http.Client{Timeout: 30 * time.Second}

// call sends method path with body (JSON, or nothing when nil) and the
// static token, and returns the status, the Retry-After header and the
// decoded JSON reply.
func (r *replica) call(t *testing.T, method, path string, body any) (int, string, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(t, err)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, r.url+path, rd)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+replicaToken)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := replicaClient.Do(req)
	require.NoError(t, err, "%s %s", method, path)
	defer resp.Body.Close()
	var out map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out), "%s %s: %d", method, path, resp.StatusCode)
	return resp.StatusCode, resp.Header.Get("Retry-After"), out
}

func errorCode(body map[string]any) any {
	if e, ok := body["error"].(map[string]any); ok {
		return e["code"]
	}
	return nil
}

// TestReplicasShareRateLimit: the limit is counted once in Redis for every
// replica, whatever the order and concurrency of the requests, fails
// closed while Redis is down and comes back with it.
func TestReplicasShareRateLimit(t *testing.T) {
	rs := startRedis(t)
	limit := []string{"--demo", "--redis", rs.url(), "--rate", "10", "--rate-window", "1m"}
	var reps []*replica
	for range 4 {
		reps = append(reps, startReplica(t, nil, limit...))
	}
	run := map[string]any{"sql": "SELECT 1"}

	// 30 requests alternated between two replicas: 10 pass.
	passed, limited := 0, 0
	for i := range 30 {
		code, retry, body := reps[i%2].call(t, "POST", "/v1/run", run)
		switch code {
		case http.StatusOK:
			passed++
		case http.StatusTooManyRequests:
			limited++
			assert.Equal(t, "rate_limited", errorCode(body))
			n, err := strconv.Atoi(retry)
			assert.True(t, err == nil && n >= 1, "Retry-After %q", retry)
		default:
			t.Fatalf("request %d: %d %v", i, code, body)
		}
	}
	assert.Equal(t, 10, passed, "alternated requests let through")
	assert.Equal(t, 20, limited)

	// 200 concurrent requests over four replicas, after the budget has
	// come back (a fresh Redis): still exactly 10.
	rs.stop()
	rs.start()
	codes := make(chan int, 200)
	var wg sync.WaitGroup
	for i := range 200 {
		wg.Go(func() {
			code, _, _ := reps[i%4].call(t, "POST", "/v1/run", run)
			codes <- code
		})
	}
	wg.Wait()
	close(codes)
	counts := map[int]int{}
	for c := range codes {
		counts[c]++
	}
	assert.Equal(t, map[int]int{http.StatusOK: 10, http.StatusTooManyRequests: 190}, counts, "200 concurrent requests over 4 replicas")

	// Redis down: the limit fails closed, readiness says why, liveness
	// stays up.
	rs.stop()
	code, retry, body := reps[0].call(t, "POST", "/v1/run", run)
	assert.Equal(t, http.StatusServiceUnavailable, code, "%v", body)
	assert.Equal(t, "rate_limit_unavailable", errorCode(body))
	assert.Equal(t, "1", retry)
	require.Eventually(t, func() bool {
		code, _, body := reps[1].call(t, "GET", "/health", nil)
		checks, _ := body["checks"].(map[string]any)
		return code == http.StatusServiceUnavailable && body["status"] == "unavailable" && checks["redis"] == "unreachable" && checks["database"] == "ok"
	}, 10*time.Second, 200*time.Millisecond, "/health while Redis is down")
	code, _, _ = reps[1].call(t, "GET", "/health/live", nil)
	assert.Equal(t, http.StatusOK, code)

	// A replica started during the outage starts (no crash loop) and
	// is not ready until Redis is back.
	late := startReplica(t, nil, limit...)
	code, _, _ = late.call(t, "GET", "/health", nil)
	assert.Equal(t, http.StatusServiceUnavailable, code)
	reps = append(reps, late)

	// Redis back: service resumes without a restart.
	rs.start()
	for i, r := range reps {
		require.Eventually(t, func() bool {
			code, _, _ := r.call(t, "POST", "/v1/run", run)
			return code == http.StatusOK
		}, 10*time.Second, 100*time.Millisecond, "replica %d after Redis came back", i)
	}
	require.Eventually(t, func() bool {
		code, _, _ := reps[2].call(t, "GET", "/health", nil)
		return code == http.StatusOK
	}, 10*time.Second, 200*time.Millisecond, "/health after Redis came back")
}

// TestReplicasShareAnswers: a question answered on one replica is answered
// from Redis on another with no model call, until the data or the
// knowledge changes.
func TestReplicasShareAnswers(t *testing.T) {
	rs := startRedis(t)
	var calls atomic.Int64 // read while the server's goroutines write
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		io.Copy(io.Discard, r.Body)
		writeCompletion(w, modelAnswer("SELECT count(*) AS n FROM singer", "counts the singers"), 500)
	}))
	defer srv.Close()
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "singers.sqlite")
	w, err := sql.Open("sqlite3", dbPath)
	require.NoError(t, err)
	defer w.Close()
	dbtest.Exec(t, w, "CREATE TABLE singer (singer_id INTEGER PRIMARY KEY, name TEXT, age INTEGER)",
		"INSERT INTO singer (name, age) VALUES ('Ada', 31), ('Grace', 45)")
	knowledge := func(name, description string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte("tables:\n  - table: singer\n    description: "+description+"\n"), 0o600))
		return p
	}
	k1 := knowledge("k1.yaml", "One row per singer.")
	args := func(k string) []string {
		return []string{"--db", dbPath, "--knowledge", k, "--redis", rs.url(), "--provider", "openai", "--base-url", srv.URL + "/v1", "--model", "local-model"}
	}
	env := []string{"OPENAI_API_KEY=sk-replica-secret"}
	a := startReplica(t, env, args(k1)...)
	b := startReplica(t, env, args(k1)...)

	ask := func(r *replica, q string) map[string]any {
		t.Helper()
		code, _, body := r.call(t, "POST", "/v1/ask", map[string]any{"question": q})
		require.Equal(t, http.StatusOK, code, "%v", body)
		return body
	}
	count := func(body map[string]any) any {
		res, _ := body["result"].(map[string]any)
		rows, _ := res["rows"].([]any)
		if len(rows) != 1 {
			return nil
		}
		return rows[0].([]any)[0]
	}

	first := ask(a, "How many singers are there?")
	assert.Nil(t, first["cached"])
	assert.EqualValues(t, 2, count(first))
	assert.EqualValues(t, 1, calls.Load())

	// The same question, spaced and punctuated differently, on the other
	// replica: from the cache, no model call, no statement run.
	again := ask(b, "How many  singers are there")
	assert.Equal(t, true, again["cached"])
	assert.EqualValues(t, 2, count(again))
	assert.EqualValues(t, 0, again["model_calls"])
	assert.EqualValues(t, 1, calls.Load(), "the second replica called the model")
	assert.Equal(t, "How many  singers are there", again["question"])

	// /v1/generate has entries of its own.
	code, _, gen := b.call(t, "POST", "/v1/generate", map[string]any{"question": "How many singers are there?"})
	require.Equal(t, http.StatusOK, code, "%v", gen)
	assert.Nil(t, gen["cached"])
	assert.EqualValues(t, 2, calls.Load())

	// A write to the database changes its data version: answered anew.
	dbtest.Exec(t, w, "INSERT INTO singer (name, age) VALUES ('Edsger', 72)")
	fresh := ask(b, "How many singers are there?")
	assert.Nil(t, fresh["cached"])
	assert.EqualValues(t, 3, count(fresh))
	assert.EqualValues(t, 3, calls.Load())
	assert.Equal(t, true, ask(a, "How many singers are there?")["cached"])
	assert.EqualValues(t, 3, calls.Load())

	// A replica with other knowledge has another fingerprint: its
	// answers are its own.
	c := startReplica(t, env, args(knowledge("k2.yaml", "One row per singer, with their age in years."))...)
	other := ask(c, "How many singers are there?")
	assert.Nil(t, other["cached"])
	assert.EqualValues(t, 4, calls.Load())

	for _, r := range []*replica{a, b, c} {
		assert.NotContains(t, r.stderr.String(), "sk-replica-secret")
	}
}

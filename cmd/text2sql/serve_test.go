package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/text2sql-go/text2sql/internal/syncbuf"
	"github.com/text2sql-go/text2sql/server"
)

func TestLoopback(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:8080": true, "[::1]:80": true, "localhost:1": true, "127.0.0.2:9": true,
		":8080": false, "0.0.0.0:8080": false, "10.0.0.1:80": false, "example.org:80": false, "nonsense": false,
	} {
		got := loopback(addr)
		assert.Equal(t, want, got, "loopback(%q) = %v", addr, got)
	}
}

func TestServeAuthenticator(t *testing.T) {
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	t.Setenv("TEXT2SQL_TOKENS", "")
	f := &serveFlags{addr: "0.0.0.0:8080"}
	_, _, err := f.authenticator(logger)
	assert.Error(t, err, "no auth settings accepted")
	f.auth = "none"
	_, _, err = f.authenticator(logger)
	assert.False(t, err == nil || !strings.Contains(err.Error(), "loopback"), "none on every interface: %v", err)
	f.addr = "127.0.0.1:8080"
	a, _, err := f.authenticator(logger)
	assert.False(t, err != nil || !server.IsNoAuth(a), "none on loopback: %v", err)
	f.auth = ""
	t.Setenv("TEXT2SQL_TOKENS", "ci:0123456789abcdef0123")
	a, _, err = f.authenticator(logger)
	if assert.NoError(t, err, "static from the environment") {
		assert.IsType(t, &server.StaticTokens{}, a, "static")
	}
	file := filepath.Join(t.TempDir(), "tokens")
	os.WriteFile(file, []byte("alice:0123456789abcdef0123\nbob:abcdef0123456789abcd\n"), 0o600)
	f.auth, f.tokensFile = "static", file
	_, _, err = f.authenticator(logger)
	assert.NoError(t, err, "tokens file")
	f.auth = "supabase"
	_, _, err = f.authenticator(logger)
	assert.Error(t, err, "supabase without URL accepted")
	f.supabaseURL = "https://abcd.supabase.co"
	t.Setenv("SUPABASE_ANON_KEY", "anon")
	_, _, err = f.authenticator(logger)
	assert.NoError(t, err, "supabase")
	f.auth = "kerberos"
	_, _, err = f.authenticator(logger)
	assert.Error(t, err, "unknown mode accepted")
}

func TestServeFlagsFromEnvironment(t *testing.T) {
	t.Setenv("TEXT2SQL_ADDR", "127.0.0.1:9999")
	t.Setenv("TEXT2SQL_RATE", "5")
	t.Setenv("TEXT2SQL_ORIGINS", "https://a.example,https://b.example")
	c := serveCmd(&options{})
	require.NoError(t, c.Flags().Parse([]string{"--rate", "7"}))
	require.NoError(t, applyEnv(c))
	get := func(name string) string { return c.Flags().Lookup(name).Value.String() }
	assert.False(t, get("addr") != "127.0.0.1:9999" || get("rate") != "7" || get("origins") != "https://a.example,https://b.example", "addr %s rate %s origins %s", get("addr"), get("rate"), get("origins"))
	t.Setenv("TEXT2SQL_MAX_BODY", "lots")
	assert.Error(t, applyEnv(serveCmd(&options{})), "bad environment value accepted")
}

func TestLoadAnswerKeys(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "keys.yaml")
	os.WriteFile(p, []byte("1: SELECT count(*) FROM students\nq2: |\n  SELECT name\n  FROM departments\n"), 0o600)
	keys, err := loadAnswerKeys(p)
	assert.False(t, err != nil || keys["1"] != "SELECT count(*) FROM students" || !strings.Contains(keys["q2"], "FROM departments"), "%v %v", keys, err)
	os.WriteFile(p, []byte(`{"1": 42}`), 0o600)
	_, err = loadAnswerKeys(p)
	assert.Error(t, err, "a number accepted as SQL")
}

// TestHelperProcess is not a test: TestMCPStdio runs the test binary
// as `text2sql mcp ...` through it, and the replica tests as `text2sql
// serve ...`.
func TestHelperProcess(t *testing.T) {
	if os.Getenv("TEXT2SQL_CLI_HELPER") != "1" {
		t.Skip("helper process: runs the command line given after --")
	}
	args := os.Args
	for i, a := range args {
		if a == "--" {
			args = args[i+1:]
			break
		}
	}
	os.Args = append([]string{"text2sql"}, args...)
	main()
	os.Exit(0)
}

// mcpStdio starts `text2sql mcp ARGS` as a child process and connects the
// MCP SDK's client to it over stdio; call calls a tool, returning whether
// it failed and its structured content.
func mcpStdio(t *testing.T, args ...string) (call func(name string, args map[string]any) (bool, map[string]any), stderr *syncbuf.Buffer) {
	t.Helper()
	argv := append([]string{"-test.run=^TestHelperProcess$", "--", "mcp", "--index-dir", t.TempDir(), "--log-format", "json"}, args...)
	cmd := exec.Command(os.Args[0], argv...)
	cmd.Env = append(os.Environ(), "TEXT2SQL_CLI_HELPER=1", "GEMINI_API_KEY=", "OPENAI_API_KEY=")
	stderr = &syncbuf.Buffer{}
	cmd.Stderr = stderr
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "stdio-test", Version: "v0"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err, "connect\n%s", stderr.String())
	t.Cleanup(func() {
		if err := cs.Close(); err != nil {
			t.Logf("close: %v", err)
		}
	})
	return func(name string, args map[string]any) (bool, map[string]any) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		require.NoError(t, err, "%s", name)
		var out map[string]any
		b, _ := json.Marshal(res.StructuredContent)
		json.Unmarshal(b, &out)
		return res.IsError, out
	}, stderr
}

// TestMCPStdio starts `text2sql mcp --demo` as a child process and talks
// to it with the MCP SDK's client over stdio: the same guard refuses a
// DROP TABLE (C1 #11, the CLI's MCP entry point).
func TestMCPStdio(t *testing.T) {
	call, stderr := mcpStdio(t, "--demo")
	isErr, out := call("run_sql", map[string]any{"sql": "DROP TABLE students"})
	assert.False(t, !isErr || out["ok"] != false ||
		out["error"].(map[string]any)["kind"] != "not_read_only", "DROP TABLE: %v %v", isErr, out)
	isErr, out = call("run_sql", map[string]any{"sql": "SELECT count(*) FROM students"})
	assert.False(t, isErr || out["row_count"] != float64(1), "count: %v %v", isErr, out)
	isErr, out = call("describe_schema", nil)
	assert.False(t, isErr || !strings.Contains(out["ddl"].(string), "enrollments"), "describe_schema: %v %v", isErr, out)
	isErr, out = call("list_examples", nil)
	assert.False(t, isErr || len(out["examples"].([]any)) == 0, "list_examples: %v %v", isErr, out)
	assert.Contains(t, stderr.String(), "serving MCP on stdio", "stderr: %s", stderr.String())
}

// The MCP tools over a catalog of two databases: the schema names tables
// by database, a query across both is merged, a write is refused.
func TestMCPStdioCatalog(t *testing.T) {
	call, _ := mcpStdio(t, catalogArgs(t)...)
	isErr, out := call("describe_schema", nil)
	require.False(t, isErr, "describe_schema: %v", out)
	assert.Contains(t, out["ddl"], "concert.singer")
	assert.Contains(t, out["ddl"], `pets."Student"`)
	isErr, out = call("run_sql", map[string]any{"sql": "WITH s AS (SELECT count(*) AS n FROM concert.singer), p AS (SELECT count(*) AS n FROM pets.Pets) SELECT s.n + p.n AS total FROM s, p"})
	require.False(t, isErr, "run_sql: %v", out)
	assert.Equal(t, []any{[]any{float64(9)}}, out["rows"])
	isErr, out = call("run_sql", map[string]any{"sql": "DELETE FROM pets.Pets"})
	assert.True(t, isErr || out["ok"] == false, "DELETE: %v", out)
	isErr, out = call("run_sql", map[string]any{"sql": "SELECT count(*) FROM pets.Pets"})
	require.False(t, isErr, "count: %v", out)
	assert.Equal(t, []any{[]any{float64(3)}}, out["rows"])
}

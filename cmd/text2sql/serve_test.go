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

	"github.com/text2sql-go/text2sql/server"
)

func TestLoopback(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:8080": true, "[::1]:80": true, "localhost:1": true, "127.0.0.2:9": true,
		":8080": false, "0.0.0.0:8080": false, "10.0.0.1:80": false, "example.org:80": false, "nonsense": false,
	} {
		if got := loopback(addr); got != want {
			t.Errorf("loopback(%q) = %v", addr, got)
		}
	}
}

func TestServeAuthenticator(t *testing.T) {
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	t.Setenv("TEXT2SQL_TOKENS", "")
	f := &serveFlags{addr: "0.0.0.0:8080"}
	if _, _, err := f.authenticator(logger); err == nil {
		t.Error("no auth settings accepted")
	}
	f.auth = "none"
	if _, _, err := f.authenticator(logger); err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Errorf("none on every interface: %v", err)
	}
	f.addr = "127.0.0.1:8080"
	if a, _, err := f.authenticator(logger); err != nil || !server.IsNoAuth(a) {
		t.Errorf("none on loopback: %v", err)
	}
	f.auth = ""
	t.Setenv("TEXT2SQL_TOKENS", "ci:0123456789abcdef0123")
	if a, _, err := f.authenticator(logger); err != nil {
		t.Errorf("static from the environment: %v", err)
	} else if _, ok := a.(*server.StaticTokens); !ok {
		t.Errorf("static: %T", a)
	}
	file := filepath.Join(t.TempDir(), "tokens")
	os.WriteFile(file, []byte("alice:0123456789abcdef0123\nbob:abcdef0123456789abcd\n"), 0o600)
	f.auth, f.tokensFile = "static", file
	if _, _, err := f.authenticator(logger); err != nil {
		t.Errorf("tokens file: %v", err)
	}
	f.auth = "supabase"
	if _, _, err := f.authenticator(logger); err == nil {
		t.Error("supabase without URL accepted")
	}
	f.supabaseURL = "https://abcd.supabase.co"
	t.Setenv("SUPABASE_ANON_KEY", "anon")
	if _, _, err := f.authenticator(logger); err != nil {
		t.Errorf("supabase: %v", err)
	}
	f.auth = "kerberos"
	if _, _, err := f.authenticator(logger); err == nil {
		t.Error("unknown mode accepted")
	}
}

func TestServeFlagsFromEnvironment(t *testing.T) {
	t.Setenv("TEXT2SQL_ADDR", "127.0.0.1:9999")
	t.Setenv("TEXT2SQL_RATE", "5")
	t.Setenv("TEXT2SQL_ORIGINS", "https://a.example,https://b.example")
	c := serveCmd(&options{})
	if err := c.Flags().Parse([]string{"--rate", "7"}); err != nil {
		t.Fatal(err)
	}
	if err := applyEnv(c); err != nil {
		t.Fatal(err)
	}
	get := func(name string) string { return c.Flags().Lookup(name).Value.String() }
	if get("addr") != "127.0.0.1:9999" || get("rate") != "7" || get("origins") != "https://a.example,https://b.example" {
		t.Errorf("addr %s rate %s origins %s", get("addr"), get("rate"), get("origins"))
	}
	t.Setenv("TEXT2SQL_MAX_BODY", "lots")
	if err := applyEnv(serveCmd(&options{})); err == nil {
		t.Error("bad environment value accepted")
	}
}

func TestLoadAnswerKeys(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "keys.yaml")
	os.WriteFile(p, []byte("1: SELECT count(*) FROM students\nq2: |\n  SELECT name\n  FROM departments\n"), 0o600)
	keys, err := loadAnswerKeys(p)
	if err != nil || keys["1"] != "SELECT count(*) FROM students" || !strings.Contains(keys["q2"], "FROM departments") {
		t.Errorf("%v %v", keys, err)
	}
	os.WriteFile(p, []byte(`{"1": 42}`), 0o600)
	if _, err := loadAnswerKeys(p); err == nil {
		t.Error("a number accepted as SQL")
	}
}

// TestMCPHelperProcess is not a test: TestMCPStdio runs the test binary
// as `text2sql mcp ...` through it.
func TestMCPHelperProcess(t *testing.T) {
	if os.Getenv("TEXT2SQL_MCP_HELPER") != "1" {
		t.Skip("helper process for TestMCPStdio")
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

// TestMCPStdio starts `text2sql mcp --demo` as a child process and talks
// to it with the MCP SDK's client over stdio: the same guard refuses a
// DROP TABLE (C1 #11, the CLI's MCP entry point).
func TestMCPStdio(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestMCPHelperProcess$", "--", "mcp", "--demo", "--index-dir", t.TempDir(), "--log-format", "json")
	cmd.Env = append(os.Environ(), "TEXT2SQL_MCP_HELPER=1", "GEMINI_API_KEY=", "OPENAI_API_KEY=")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "stdio-test", Version: "v0"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr.String())
	}
	call := func(name string, args map[string]any) (bool, map[string]any) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var out map[string]any
		b, _ := json.Marshal(res.StructuredContent)
		json.Unmarshal(b, &out)
		return res.IsError, out
	}
	if isErr, out := call("run_sql", map[string]any{"sql": "DROP TABLE students"}); !isErr || out["ok"] != false ||
		out["error"].(map[string]any)["kind"] != "not_read_only" {
		t.Errorf("DROP TABLE: %v %v", isErr, out)
	}
	if isErr, out := call("run_sql", map[string]any{"sql": "SELECT count(*) FROM students"}); isErr || out["row_count"] != float64(1) {
		t.Errorf("count: %v %v", isErr, out)
	}
	if isErr, out := call("describe_schema", nil); isErr || !strings.Contains(out["ddl"].(string), "enrollments") {
		t.Errorf("describe_schema: %v %v", isErr, out)
	}
	if isErr, out := call("list_examples", nil); isErr || len(out["examples"].([]any)) == 0 {
		t.Errorf("list_examples: %v %v", isErr, out)
	}
	if err := cs.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	if !strings.Contains(stderr.String(), "serving MCP on stdio") {
		t.Errorf("stderr: %s", stderr.String())
	}
}

package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	mysqldrv "github.com/go-sql-driver/mysql"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/text2sql-go/text2sql/internal/dbtest"
)

// rlsServer creates a PostgreSQL database whose notes table has a
// row-level-security policy keyed on request.jwt.claim.sub (two rows for
// alice, one for bob), a NOLOGIN role that may read it, and the service's
// login as text2sql grant --member-of prints it (read-only, a member of
// that role, no superuser: as in production); it returns the login's
// DSN, the role and the superuser's DSN.
func rlsServer(t *testing.T) (login, role, admin string) {
	t.Helper()
	db, dsn := dbtest.Postgres(t)
	role, app := dbtest.Name("t2s_reader"), dbtest.Name("t2s_service")
	dbtest.Exec(t, db,
		`CREATE TABLE notes (id int PRIMARY KEY, owner text NOT NULL, body text)`,
		`INSERT INTO notes VALUES (1, 'alice', 'a1'), (2, 'alice', 'a2'), (3, 'bob', 'b1')`,
		`ALTER TABLE notes ENABLE ROW LEVEL SECURITY`,
		`CREATE POLICY own_notes ON notes FOR SELECT USING (owner = current_setting('request.jwt.claim.sub', true))`,
		`CREATE ROLE `+role+` NOLOGIN`, `GRANT SELECT ON notes TO `+role)
	script, errOut, code := cli(t, "grant", "--dsn", dsn, "--user", app, "--schema", "public", "--member-of", role)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, script, `GRANT "`+role+`" TO "`+app+`";`)
	const pw = "service-password-0123"
	dbtest.Exec(t, db, withPassword(script, pw))
	t.Cleanup(func() {
		_, err := db.Exec(`DROP OWNED BY ` + role + `, ` + app + `; DROP ROLE ` + app + `; DROP ROLE ` + role)
		assert.NoError(t, err, "drop roles")
	})
	u, err := url.Parse(dsn)
	require.NoError(t, err)
	u.User = url.UserPassword(app, pw)
	return u.String(), role, dsn
}

// serveInProcess runs `text2sql serve args…` on a free loopback port until
// the test ends and returns its base URL once /health answers.
func serveInProcess(t testing.TB, args ...string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	ctx, cancel := context.WithCancel(context.Background())
	root := newRoot()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(append([]string{"serve", "--addr", addr, "--index-dir", t.TempDir()}, args...))
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	base := "http://" + addr
	require.Eventually(t, func() bool {
		select {
		case err := <-done:
			done <- err
			return true
		default:
		}
		res, err := http.Get(base + "/health")
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == http.StatusOK
	}, 60*time.Second, 50*time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("serve stopped: %v", errors.Join(err, errors.New(out.String())))
	default:
	}
	return base
}

// post sends body to base+path with token and decodes the JSON answer.
func post(t *testing.T, base, path, token string, body any) map[string]any {
	t.Helper()
	b, err := json.Marshal(body)
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPost, base+path, bytes.NewReader(b))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	var out map[string]any
	require.NoError(t, json.NewDecoder(res.Body).Decode(&out))
	out["http_status"] = float64(res.StatusCode)
	return out
}

// firstCell is rows[0][0] of a run or ask answer.
func firstCell(t *testing.T, a map[string]any) any {
	t.Helper()
	if r, ok := a["result"].(map[string]any); ok {
		a = r
	}
	rows, ok := a["rows"].([]any)
	require.True(t, ok && len(rows) > 0, "no rows: %v", a)
	return rows[0].([]any)[0]
}

// Two principals of one service read only their own rows: the service
// runs each one's SQL under the role mapped to it with its claims, on
// /v1/run, /v1/ask (scripted model) and MCP run_sql; statements that
// would change the role or the claims are refused; a principal the map
// does not name is refused with 403.
func TestServeRunsAsTheCaller(t *testing.T) {
	login, role, admin := rlsServer(t)
	roles := filepath.Join(t.TempDir(), "roles.yaml")
	require.NoError(t, os.WriteFile(roles, []byte("alice: "+role+"\nbob: "+role+"\n"), 0o600))
	const aliceTok, bobTok, malloryTok = "tok-alice-0123456789abcdef", "tok-bob-0123456789abcdef", "tok-mallory-0123456789ab"
	t.Setenv("TEXT2SQL_TOKENS", "alice:"+aliceTok+",bob:"+bobTok+",mallory:"+malloryTok)
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("GEMINI_API_KEY", "")
	model, _ := openAIServer(t, func(string) string {
		return `{"answerable": true, "sql": "SELECT count(*) AS n FROM notes", "explanation": "counts the notes"}`
	})
	base := serveInProcess(t, "--dsn", login, "--run-as", "map:"+roles, "--rls-claims", "--auth", "static", "--rate", "0",
		"--base-url", model.URL+"/v1", "--model", "local-model", "--audit-dsn", admin)

	for tok, want := range map[string]float64{aliceTok: 2, bobTok: 1} {
		run := post(t, base, "/v1/run", tok, map[string]any{"sql": "SELECT count(*) FROM notes"})
		assert.Equal(t, want, firstCell(t, run), "run: %v", run)
		ask := post(t, base, "/v1/ask", tok, map[string]any{"question": "How many notes are there?"})
		assert.Equal(t, want, firstCell(t, ask), "ask: %v", ask)
	}
	for _, q := range []string{"SET ROLE postgres", "RESET ROLE", "SELECT set_config('request.jwt.claim.sub', 'alice', true)"} {
		run := post(t, base, "/v1/run", bobTok, map[string]any{"sql": q})
		assert.Equal(t, false, run["ok"], "%s: %v", q, run)
	}
	run := post(t, base, "/v1/run", malloryTok, map[string]any{"sql": "SELECT count(*) FROM notes"})
	assert.Equal(t, float64(http.StatusForbidden), run["http_status"], "%v", run)
	assert.Equal(t, "forbidden", run["error"].(map[string]any)["code"])

	for tok, want := range map[string]float64{aliceTok: 2, bobTok: 1} {
		hc := &http.Client{Transport: bearer{tok}}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "rls-test", Version: "v0"}, nil).
			Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: hc}, nil)
		require.NoError(t, err)
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "run_sql", Arguments: map[string]any{"sql": "SELECT count(*) FROM notes"}})
		require.NoError(t, err)
		b, err := json.Marshal(res.StructuredContent)
		require.NoError(t, err)
		var out map[string]any
		require.NoError(t, json.Unmarshal(b, &out))
		assert.Equal(t, want, firstCell(t, out), "mcp: %s", b)
		cs.Close()
	}

	// The audit log where the data is: one row per statement, with its
	// principal (run, ask and MCP for alice and bob, three refusals of
	// bob's; mallory's call never reached the database).
	audit, err := sql.Open("pgx", admin)
	require.NoError(t, err)
	defer audit.Close()
	got := map[string]int{}
	rows, err := audit.Query(`SELECT principal || ' ' || source || ' ' || outcome, count(*) FROM text2sql_audit GROUP BY 1`)
	require.NoError(t, err)
	defer rows.Close()
	for rows.Next() {
		var k string
		var n int
		require.NoError(t, rows.Scan(&k, &n))
		got[k] = n
	}
	require.NoError(t, rows.Err())
	assert.Equal(t, map[string]int{
		"alice POST /v1/run ok": 1, "alice POST /v1/ask ok": 1, "alice mcp run_sql ok": 1,
		"bob POST /v1/run ok": 1, "bob POST /v1/ask ok": 1, "bob mcp run_sql ok": 1,
		"bob POST /v1/run forbidden_statement": 2, "bob POST /v1/run forbidden_function": 1,
	}, got)

	// One role for every caller (--run-as ROLE): the claims still tell
	// the policy who asks; a principal without rows sees none.
	base = serveInProcess(t, "--dsn", login, "--run-as", role, "--rls-claims", "--auth", "static", "--rate", "0")
	for tok, want := range map[string]float64{aliceTok: 2, bobTok: 1, malloryTok: 0} {
		run := post(t, base, "/v1/run", tok, map[string]any{"sql": "SELECT count(*) FROM notes"})
		assert.Equal(t, want, firstCell(t, run), "run: %v", run)
	}
}

// bearer adds an Authorization header to every request.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// --as acts as a principal on the command line; --run-as and --rls-claims
// need PostgreSQL; a login that bypasses row-level security is reported.
func TestRunAsOnTheCommandLine(t *testing.T) {
	login, role, admin := rlsServer(t)
	for who, want := range map[string]string{"alice": "2", "bob": "1", "": "0"} {
		args := []string{"run", "--dsn", login, "--run-as", role, "--rls-claims", "--json", "SELECT count(*) AS n FROM notes"}
		if who != "" {
			args = append(args, "--as", who)
		}
		out, errOut, code := cli(t, args...)
		require.Equal(t, 0, code, errOut)
		assert.Contains(t, out, `"rows": [`+"\n    [\n      "+want, "as %q: %s", who, out)
	}
	_, errOut, code := cli(t, "run", "--demo", "--rls-claims", "SELECT 1")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "need a PostgreSQL --dsn")
	_, errOut, code = cli(t, "serve", "--demo", "--as", "alice", "--auth", "none")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "--as: serve takes")

	_, errOut, code = cli(t, "run", "--dsn", admin, "--rls-claims", "--as", "bob", "SELECT count(*) FROM notes")
	assert.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, "row-level security does not apply")
}

// --login-map gives each principal a login of its own (MySQL/MariaDB have
// no row-level security): the database's grants decide what each reads;
// an unmapped principal is refused; calls without one use --dsn.
func TestLoginPerPrincipal(t *testing.T) {
	db, dsn := dbtest.MySQL(t)
	alice, bob := dbtest.Name("t2sa"), dbtest.Name("t2sb")
	dbtest.Exec(t, db, "CREATE TABLE a (x INT)", "INSERT INTO a VALUES (1), (2)", "CREATE TABLE b (x INT)", "INSERT INTO b VALUES (3)")
	cfg, err := mysqldrv.ParseDSN(dsn)
	require.NoError(t, err)
	logins := map[string]string{}
	for who, user := range map[string]string{"alice": alice, "bob": bob} {
		table := map[string]string{"alice": "a", "bob": "b"}[who]
		dbtest.Exec(t, db, "CREATE USER '"+user+"'@'%' IDENTIFIED BY 'pw-"+who+"'", "GRANT SELECT ON "+cfg.DBName+"."+table+" TO '"+user+"'@'%'")
		t.Cleanup(func() { _, _ = db.Exec("DROP USER IF EXISTS '" + user + "'@'%'") })
		c := *cfg
		c.User, c.Passwd = user, "pw-"+who
		logins[who] = c.FormatDSN()
	}
	b, err := json.Marshal(logins)
	require.NoError(t, err)
	file := filepath.Join(t.TempDir(), "logins.json")
	require.NoError(t, os.WriteFile(file, b, 0o600))

	out, errOut, code := cli(t, "run", "--dsn", dsn, "--login-map", file, "--as", "alice", "SELECT count(*) AS n FROM a")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "2")
	out, _, code = cli(t, "run", "--dsn", dsn, "--login-map", file, "--as", "bob", "SELECT count(*) AS n FROM a")
	assert.Equal(t, exitSQL, code, "bob's login may not read a: %s", out)
	assert.Contains(t, out, "forbidden_statement")
	_, errOut, code = cli(t, "run", "--dsn", dsn, "--login-map", file, "--as", "mallory", "SELECT 1")
	assert.Equal(t, exitError, code)
	assert.Contains(t, errOut, `no login is mapped to principal "mallory"`)
	assert.NotContains(t, errOut+out, "pw-alice")
	out, errOut, code = cli(t, "run", "--dsn", dsn, "--login-map", file, "SELECT count(*) AS n FROM b")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "1")
}

// Cell values of the knowledge file are the host's and reach every
// caller's prompt: with per-caller execution, the CLI says so.
func TestCallerValuesWarning(t *testing.T) {
	login, role, _ := rlsServer(t)
	kf := filepath.Join(t.TempDir(), "k.yaml")
	require.NoError(t, os.WriteFile(kf, []byte("values:\n  - table: notes\n    column: body\n    values: [a1, b1]\n"), 0o600))
	_, errOut, code := cli(t, "run", "--dsn", login, "--knowledge", kf, "--run-as", role, "--rls-claims", "--as", "bob", "SELECT count(*) FROM notes")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, "cell values (1 value list) reach every caller's prompt")
	_, errOut, code = cli(t, "run", "--dsn", login, "--knowledge", kf, "SELECT count(*) FROM notes")
	require.Equal(t, 0, code, errOut)
	assert.NotContains(t, errOut, "cell values")
}

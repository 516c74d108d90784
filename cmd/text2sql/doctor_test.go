package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/text2sql-go/text2sql/internal/dbtest"
)

// doctorJSON runs doctor --json and returns its checks by name (a name
// that repeats keeps its first check) and the exit code.
func doctorJSON(t *testing.T, args ...string) (map[string]finding, string, int) {
	t.Helper()
	out, errOut, code := cli(t, append([]string{"doctor", "--json"}, args...)...)
	var rep struct {
		OK     bool      `json:"ok"`
		Checks []finding `json:"checks"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep), "stdout: %s\nstderr: %s", out, errOut)
	assert.Equal(t, code == 0, rep.OK, "ok and the exit status agree")
	byName := map[string]finding{}
	for _, f := range rep.Checks {
		if _, seen := byName[f.Name]; !seen {
			byName[f.Name] = f
		}
	}
	return byName, out, code
}

func noProviderEnv(t *testing.T) {
	t.Setenv("GEMINI_API_KEY", "")
	t.Setenv("OPENAI_API_KEY", "")
}

// On the demo with no provider: every data part is reached, the provider
// is "none" with the way to configure one, and that is not a failure.
func TestDoctorDemo(t *testing.T) {
	noProviderEnv(t)
	fs, _, code := doctorJSON(t, "--demo")
	assert.Equal(t, 0, code)
	for _, name := range []string{"version", "database", "knowledge", "index", "values"} {
		assert.Equal(t, checkOK, fs[name].Status, "%s: %s", name, fs[name].Detail)
	}
	// The demo's text columns: names, titles, codes, terms… not e-mails.
	assert.Regexp(t, `^\d+ values of \d+ text columns in \d+ ms$`, fs["values"].Detail)
	off, _, _ := doctorJSON(t, "--demo", "--no-values")
	assert.Equal(t, finding{"values", checkNone, "off (--no-values)"}, off["values"])
	assert.Contains(t, fs["database"].Detail, "sqlite")
	assert.Contains(t, fs["database"].Detail, "5 tables")
	assert.Contains(t, fs["knowledge"].Detail, "examples")
	assert.Contains(t, fs["index"].Detail, "built")
	assert.Equal(t, checkNone, fs["provider"].Status)
	assert.Contains(t, fs["provider"].Detail, "GEMINI_API_KEY")
	assert.Contains(t, fs["provider"].Detail, "--base-url http://localhost:11434/v1")
	assert.Contains(t, fs, "onnxruntime")

	out, _, code := cli(t, "doctor")
	assert.Equal(t, 0, code)
	assert.Regexp(t, `(?m)^none  database +no database given: add --db`, out)
}

// A database that cannot be opened and a knowledge file that does not
// validate fail the doctor (exit 1) and name the fault; contradicting
// flags stay a usage error.
func TestDoctorFailures(t *testing.T) {
	noProviderEnv(t)
	fs, _, code := doctorJSON(t, "--db", "/nonexistent/x.sqlite")
	assert.Equal(t, exitError, code)
	assert.Equal(t, checkFail, fs["database"].Status)
	assert.Contains(t, fs["database"].Detail, "/nonexistent/x.sqlite does not exist")

	kf := t.TempDir() + "/k.yaml"
	require.NoError(t, os.WriteFile(kf, []byte("tables:\n  - table: no_such_table\n    description: x\n"), 0o600))
	fs, _, code = doctorJSON(t, "--demo", "--knowledge", kf)
	assert.Equal(t, exitError, code)
	assert.Equal(t, checkFail, fs["knowledge"].Status)
	assert.Contains(t, fs["knowledge"].Detail, "no_such_table")
	assert.NotContains(t, fs, "index", "the index is not built from a knowledge file that does not validate")

	_, _, code = cli(t, "doctor", "--demo", "--db", "x.sqlite")
	assert.Equal(t, exitUsage, code)
}

// A server login with powers beyond reading is a warning naming them;
// the DSN's password is never printed.
func TestDoctorPostgresLogin(t *testing.T) {
	noProviderEnv(t)
	db, dsn := dbtest.Postgres(t)
	dbtest.Exec(t, db, "CREATE TABLE singer (id int PRIMARY KEY, name text)")
	u, err := url.Parse(dsn)
	require.NoError(t, err)
	u.User = url.UserPassword(u.User.Username(), "hunter2-secret")
	fs, out, code := doctorJSON(t, "--dsn", u.String())
	assert.Equal(t, 0, code, "a warning is not a failure")
	assert.Equal(t, checkWarn, fs["database"].Status, fs["database"].Detail)
	assert.Contains(t, fs["database"].Detail, "1 table")
	assert.Contains(t, fs["database"].Detail, "superuser")
	assert.NotContains(t, out, "hunter2-secret")
}

// The provider ask would use is asked whether it serves the model (GET
// /v1/models, no generation); an unlisted model fails and names what is
// listed; keys are sent, never printed; a second key that is set is named
// as unused.
func TestDoctorProvider(t *testing.T) {
	const openaiKey, geminiKey = "sk-doctor-secret-1234", "gemini-doctor-secret-5678"
	t.Setenv("OPENAI_API_KEY", openaiKey)
	t.Setenv("GEMINI_API_KEY", geminiKey)
	var mu sync.Mutex
	var paths, auth []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths, auth = append(paths, r.Method+" "+r.URL.Path), append(auth, r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"object":"list","data":[{"id":"local-model","object":"model","created":1,"owned_by":"me"}]}`))
	}))
	defer srv.Close()

	fs, out, code := doctorJSON(t, "--base-url", srv.URL+"/v1", "--model", "local-model")
	assert.Equal(t, 0, code)
	assert.Equal(t, checkOK, fs["provider"].Status, fs["provider"].Detail)
	assert.Contains(t, fs["provider"].Detail, "openai (--base-url), model local-model")
	assert.Contains(t, fs["provider"].Detail, "serves the model")
	assert.Contains(t, out, "GEMINI_API_KEY is set too, unused")
	assert.NotContains(t, out, openaiKey)
	assert.NotContains(t, out, geminiKey)

	fs, out, code = doctorJSON(t, "--base-url", srv.URL+"/v1", "--model", "other-model")
	assert.Equal(t, exitError, code)
	assert.Equal(t, checkFail, fs["provider"].Status)
	assert.Contains(t, fs["provider"].Detail, `model "other-model" is not among the 1 models the server lists (local-model)`)
	assert.NotContains(t, out, openaiKey)

	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []string{"GET /v1/models", "GET /v1/models"}, paths, "nothing but the model list is asked for")
	for _, a := range auth {
		assert.Equal(t, "Bearer "+openaiKey, a)
		assert.False(t, strings.Contains(a, geminiKey))
	}
}

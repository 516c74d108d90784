package main

import (
	"database/sql"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/text2sql-go/text2sql/executor/postgres"
	"github.com/text2sql-go/text2sql/internal/dbtest"
)

// The rights version serve gives the server covers the --run-as map as
// loaded: another role for alice is another version (her saved answers
// and cached answers run again), the same map written otherwise is not,
// and so do --rls-claims and --run-as itself.
func TestRightsVersionCoversTheLoadedMap(t *testing.T) {
	roles := filepath.Join(t.TempDir(), "roles.yaml")
	version := func(content string, claims bool) string {
		require.NoError(t, os.WriteFile(roles, []byte(content), 0o600))
		c := &callerFlags{runAs: "map:" + roles, rlsClaims: claims, loaded: new([]string)}
		require.NoError(t, c.apply(&postgres.Options{}))
		return c.rightsVersion()
	}
	admin := version("alice: admin\nbob: reader\n", true)
	assert.Equal(t, admin, version("bob:   reader\nalice: admin\n", true), "the map, not its bytes")
	assert.NotEqual(t, admin, version("alice: reader\nbob: reader\n", true), "alice's role changed")
	assert.NotEqual(t, admin, version("alice: admin\nbob: reader\n", false), "--rls-claims")
	one := &callerFlags{runAs: "reader", loaded: new([]string)}
	assert.NotEqual(t, one.rightsVersion(), (&callerFlags{runAs: "admin", loaded: new([]string)}).rightsVersion(), "--run-as ROLE")
}

// Break 3 of issue 38 through serve: two replicas on one Redis and one
// conversation store, the second started with a changed --run-as map
// (alice moved from a role that reads every note to one whose policy
// shows her her own). Her saved answer runs again there and her cached
// answer is not served there: 2 rows, not the 3 she read before.
func TestServeRightsChangeRunsAgain(t *testing.T) {
	login, reader, admin := rlsServer(t)
	db, err := sql.Open("pgx", admin)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() }) // after the drop below
	u, err := url.Parse(login)
	require.NoError(t, err)
	every := dbtest.Name("t2s_every")
	dbtest.Exec(t, db, `CREATE ROLE `+every+` NOLOGIN`, `GRANT SELECT ON notes TO `+every,
		`CREATE POLICY every_note ON notes FOR SELECT TO `+every+` USING (true)`, `GRANT `+every+` TO `+u.User.Username())
	t.Cleanup(func() {
		_, err := db.Exec(`DROP OWNED BY ` + every + `; DROP ROLE ` + every)
		assert.NoError(t, err)
	})
	const aliceTok = "tok-alice-0123456789abcdef"
	t.Setenv("TEXT2SQL_TOKENS", "alice:"+aliceTok)
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("GEMINI_API_KEY", "")
	model, _ := openAIServer(t, func(string) string {
		return `{"answerable": true, "sql": "SELECT id, owner FROM notes ORDER BY id", "explanation": "lists the notes"}`
	})
	dir := t.TempDir()
	convs, prefix := filepath.Join(dir, "conversations.sqlite"), dbtest.Name("t2s_rights")+":"
	replica := func(role string) string {
		roles := filepath.Join(t.TempDir(), "roles.yaml")
		require.NoError(t, os.WriteFile(roles, []byte("alice: "+role+"\n"), 0o600))
		return serveInProcess(t, "--dsn", login, "--run-as", "map:"+roles, "--rls-claims", "--auth", "static", "--rate", "0",
			"--base-url", model.URL+"/v1", "--model", "local-model", "--conversations-db", convs,
			"--redis", "redis://127.0.0.1:6379/0", "--redis-prefix", prefix)
	}
	rows := func(a map[string]any) int {
		if r, ok := a["answer"].(map[string]any); ok {
			a = r
		}
		res, ok := a["result"].(map[string]any)
		require.True(t, ok, "no result: %v", a)
		return len(res["rows"].([]any))
	}
	ask := func(base string) map[string]any {
		c := post(t, base, "/v1/conversations", aliceTok, map[string]any{})
		require.Equal(t, float64(200), c["http_status"], "%v", c)
		id := c["conversation_id"].(string)
		reply := post(t, base, "/v1/conversations/"+id+"/messages", aliceTok, map[string]any{"message": "List all the notes"})
		require.Equal(t, float64(200), reply["http_status"], "%v", reply)
		reply["conversation_id"] = id
		return reply
	}

	before := replica(every)
	first := ask(before)
	require.Equal(t, 3, rows(first))
	saved := post(t, before, "/v1/conversations/"+first["conversation_id"].(string)+"/saved", aliceTok, map[string]any{})
	require.Equal(t, float64(200), saved["http_status"], "%v", saved)
	cached := post(t, before, "/v1/ask", aliceTok, map[string]any{"question": "List all the notes"})
	require.Equal(t, 3, rows(cached))

	after := replica(reader)
	again := ask(after)
	assert.Equal(t, 2, rows(again), "the saved answer runs again: %v", again["steps"])
	assert.Equal(t, first["answer"].(map[string]any)["sql"], again["sql"], "from the saved answer")
	fresh := post(t, after, "/v1/ask", aliceTok, map[string]any{"question": "List all the notes"})
	assert.Equal(t, 2, rows(fresh), "the cached answer is not hers any more")
	assert.NotEqual(t, true, fresh["cached"])
}

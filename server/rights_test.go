package server

import (
	"context"
	"database/sql"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/demo"
	"github.com/text2sql-go/text2sql/executor"
	"github.com/text2sql-go/text2sql/executor/sqlite"
	"github.com/text2sql-go/text2sql/generator"
	"github.com/text2sql-go/text2sql/identity"
)

// One rights scope keys the answer cache and saved answers' rows: the same
// principal under another RightsVersion (its --run-as map entry changed)
// misses both, under the same one hits both; with SharedScope principals
// share it, still apart from another RightsVersion.
func TestRightsScopeKeysCacheAndSavedAnswers(t *testing.T) {
	alice := identity.WithPrincipal(context.Background(), &identity.Principal{ID: "alice", Method: "static"})
	bob := identity.WithPrincipal(context.Background(), &identity.Principal{ID: "bob", Method: "static"})
	svc := func(rights string, scope func(*identity.Principal) string) *service {
		return &service{cfg: Config{RightsVersion: rights, Cache: Cache{Store: &mapStore{}, Scope: scope},
			Conversations: &Conversations{DataVersion: func(context.Context) (string, error) { return "v1", nil }}}}
	}
	keys := func(s *service, ctx context.Context) (string, string) {
		k, ok := s.cacheKey(ctx, "ask", "List all the notes")
		require.True(t, ok)
		v, err := s.answerVersion(ctx)
		require.NoError(t, err)
		return k, v
	}
	adminKey, adminVersion := keys(svc("alice: admin", nil), alice)
	readerKey, readerVersion := keys(svc("alice: reader", nil), alice)
	assert.NotEqual(t, adminKey, readerKey, "cache: another map misses")
	assert.NotEqual(t, adminVersion, readerVersion, "saved answer: another map runs the SQL again")
	againKey, againVersion := keys(svc("alice: admin", nil), alice)
	assert.Equal(t, adminKey, againKey)
	assert.Equal(t, adminVersion, againVersion)

	shared := svc("role=reader", SharedScope)
	aliceKey, aliceVersion := keys(shared, alice)
	bobKey, bobVersion := keys(shared, bob)
	assert.Equal(t, aliceKey, bobKey, "one login for all: one entry")
	assert.Equal(t, aliceVersion, bobVersion)
	otherKey, otherVersion := keys(svc("role=admin", SharedScope), alice)
	assert.NotEqual(t, aliceKey, otherKey)
	assert.NotEqual(t, aliceVersion, otherVersion)
}

// rightsPipeline answers every question with sql, run on the executor
// byID names for the principal (as --login-map routes each principal to
// its own login).
func rightsPipeline(t *testing.T, sql string, byID map[string]text2sql.Executor) *text2sql.Pipeline {
	t.Helper()
	route, err := executor.NewPerPrincipal(fixture.exec, byID)
	require.NoError(t, err)
	gen, err := generator.New(sqlModel(sql), generator.Options{Dialect: text2sql.DialectSQLite})
	require.NoError(t, err)
	p, err := text2sql.New(text2sql.Config{Retriever: fixture.ret, Generator: gen, Executor: route, MaxRows: 100, DisableExampleReuse: true})
	require.NoError(t, err)
	return p
}

// openDemo opens a copy of the demo database after stmts.
func openDemo(t *testing.T, stmts ...string) *sqlite.Executor {
	t.Helper()
	path := filepath.Join(t.TempDir(), "registrar.sqlite")
	require.NoError(t, demo.Create(path))
	db, err := sql.Open("sqlite3", path)
	require.NoError(t, err)
	for _, s := range stmts {
		_, err := db.Exec(s)
		require.NoError(t, err)
	}
	require.NoError(t, db.Close())
	ex, err := sqlite.Open(path, sqlite.Options{MaxRows: 100})
	require.NoError(t, err)
	t.Cleanup(func() { ex.Close() })
	return ex
}

// Break 3 of issue 38: alice saves an answer while her mapping gives her
// every row; a replica (or a restart) whose map gives her fewer, sharing
// the conversation store, runs the saved SQL again instead of replaying
// the rows, also for an answer saved there from her old conversation. The
// control: with the map unchanged, the saved rows are replayed (what
// happened after a map change before the rights scope covered the map).
func TestSavedAnswerRerunsAfterRightsChange(t *testing.T) {
	const q, query = "List the course codes", "SELECT code FROM courses ORDER BY code"
	full, own := openDemo(t), openDemo(t, "DELETE FROM courses WHERE rowid % 2 = 0")
	count := func(ex text2sql.Executor) int {
		res, err := ex.Execute(context.Background(), text2sql.ExecuteRequest{SQL: "SELECT count(*) FROM courses"})
		require.NoError(t, err)
		return int(res.Rows[0][0].(int64))
	}
	nFull, nOwn := count(full), count(own)
	require.Greater(t, nFull, nOwn)
	store := openConversationStore(t)
	replica := func(rights string, alice text2sql.Executor) *httptest.Server {
		return testServer(t, Config{Pipeline: rightsPipeline(t, query, map[string]text2sql.Executor{"alice": alice}), RightsVersion: rights,
			Conversations: &Conversations{Store: store, DataVersion: fixture.exec.DataVersion}})
	}
	start := func(srv *httptest.Server) string {
		r := do(t, srv, "POST", "/v1/conversations", testToken, map[string]any{})
		require.Equal(t, 200, r.status, "%s", r.body)
		var c ConversationBody
		r.json(t, &c)
		return c.ConversationID
	}
	ask := func(srv *httptest.Server, id string) ReplyBody {
		r := do(t, srv, "POST", "/v1/conversations/"+id+"/messages", testToken, MessageRequest{Message: q})
		require.Equal(t, 200, r.status, "%s", r.body)
		var reply ReplyBody
		r.json(t, &reply)
		require.NotNil(t, reply.Answer, "%s", r.body)
		require.NotNil(t, reply.Answer.Result, "%s", r.body)
		return reply
	}
	save := func(srv *httptest.Server, id string) {
		r := do(t, srv, "POST", "/v1/conversations/"+id+"/saved", testToken, SaveRequest{})
		require.Equal(t, 200, r.status, "%s", r.body)
	}
	memory := func(r ReplyBody) string {
		for _, s := range r.Steps {
			if s.Name == "memory" {
				return s.Outcome
			}
		}
		return ""
	}

	admin := replica("alice: admin", full)
	first := start(admin)
	require.Equal(t, nFull, ask(admin, first).Answer.Result.RowCount)
	save(admin, first)

	same := replica("alice: admin", own)
	control := ask(same, start(same))
	assert.Equal(t, nFull, control.Answer.Result.RowCount, "control: unchanged rights replay the saved rows")
	assert.Contains(t, memory(control), "data version unchanged")

	reader := replica("alice: reader", own)
	second := start(reader)
	got := ask(reader, second)
	assert.Equal(t, nOwn, got.Answer.Result.RowCount, "a changed map: the saved SQL runs again")
	assert.Contains(t, memory(got), "its SQL run again")
	save(reader, first) // her old conversation's rows, read as admin
	got = ask(reader, second)
	assert.Equal(t, nOwn, got.Answer.Result.RowCount, "rows saved from the old conversation are not replayed")
	assert.Contains(t, memory(got), "its SQL run again")
}

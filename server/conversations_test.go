package server

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	convsqlite "github.com/text2sql-go/text2sql/conversation/sqlite"
	"github.com/text2sql-go/text2sql/identity"
)

// The conversation routes: start one, small talk without the pipeline, a
// data question through it (audited), another principal's conversation is
// not found, and without Conversations the routes are not configured.
func TestConversationRoutes(t *testing.T) {
	audit := &recorder{}
	srv := testServer(t, Config{Conversations: &Conversations{}, Auditor: audit})
	r := do(t, srv, "POST", "/v1/conversations", testToken, map[string]any{})
	require.Equal(t, 200, r.status, "%s", r.body)
	var c ConversationBody
	r.json(t, &c)
	require.Len(t, c.ConversationID, 32)
	path := "/v1/conversations/" + c.ConversationID + "/messages"

	r = do(t, srv, "POST", path, testToken, MessageRequest{Message: "Hello"})
	require.Equal(t, 200, r.status, "%s", r.body)
	var reply ReplyBody
	r.json(t, &reply)
	assert.Equal(t, "small_talk", reply.Route)
	assert.Nil(t, reply.Answer)

	r = do(t, srv, "POST", path, testToken, MessageRequest{Message: "Which courses come first by code?"})
	require.Equal(t, 200, r.status, "%s", r.body)
	reply = ReplyBody{}
	r.json(t, &reply)
	assert.Equal(t, "data", reply.Route)
	require.NotNil(t, reply.Answer)
	assert.True(t, strings.HasPrefix(reply.SQL, "SELECT code, title FROM courses"), reply.SQL)
	assert.Len(t, audit.all(), 1, "the statement is audited")

	r = do(t, srv, "POST", path, testToken, MessageRequest{Message: "what does that mean?"})
	require.Equal(t, 200, r.status, "%s", r.body)
	reply = ReplyBody{}
	r.json(t, &reply)
	assert.Equal(t, "about_last", reply.Route)
	assert.Equal(t, "no SQL", reply.Steps[0].Saved)

	r = do(t, srv, "POST", path, "tok-bob-0123456789abcdef0", MessageRequest{Message: "Hello"})
	assert.Equal(t, 404, r.status, "bob cannot post to alice's conversation")
	r = do(t, srv, "POST", "/v1/conversations/nope/messages", testToken, MessageRequest{Message: "Hello"})
	assert.Equal(t, 404, r.status)
	r = do(t, srv, "POST", path, testToken, MessageRequest{Message: "  "})
	assert.Equal(t, 400, r.status)

	plain := testServer(t, Config{})
	r = do(t, plain, "POST", "/v1/conversations", testToken, map[string]any{})
	assert.Equal(t, 503, r.status)
}

// With a Store, a conversation survives a restart (another server on the
// same store): the follow-up about the last answer still finds it, and
// another principal still cannot reach it.
func TestConversationStore(t *testing.T) {
	st := openConversationStore(t)
	first := testServer(t, Config{Conversations: &Conversations{Store: st}})
	r := do(t, first, "POST", "/v1/conversations", testToken, map[string]any{})
	require.Equal(t, 200, r.status, "%s", r.body)
	var c ConversationBody
	r.json(t, &c)
	path := "/v1/conversations/" + c.ConversationID + "/messages"
	r = do(t, first, "POST", path, testToken, MessageRequest{Message: "Which courses come first by code?"})
	require.Equal(t, 200, r.status, "%s", r.body)

	restarted := testServer(t, Config{Conversations: &Conversations{Store: st}})
	r = do(t, restarted, "POST", path, testToken, MessageRequest{Message: "what does that mean?"})
	require.Equal(t, 200, r.status, "%s", r.body)
	var reply ReplyBody
	r.json(t, &reply)
	assert.Equal(t, "about_last", reply.Route)
	assert.True(t, strings.Contains(reply.Text, "SELECT code, title FROM courses"), reply.Text)
	r = do(t, restarted, "POST", path, "tok-bob-0123456789abcdef0", MessageRequest{Message: "Hello"})
	assert.Equal(t, 404, r.status)

	// Replicas on one store: a turn answered by one is seen by the other,
	// whose own copy is older.
	r = do(t, restarted, "POST", path, testToken, MessageRequest{Message: "Show the first courses by code"})
	require.Equal(t, 200, r.status, "%s", r.body)
	r = do(t, first, "POST", path, testToken, MessageRequest{Message: "what does that mean?"})
	require.Equal(t, 200, r.status, "%s", r.body)
	reply = ReplyBody{}
	r.json(t, &reply)
	assert.Equal(t, "about_last", reply.Route)
	assert.True(t, strings.Contains(reply.Text, "Show the first courses by code"), "the first replica sees the other's turn: %s", reply.Text)
}

// Saved answers over HTTP: alice saves the last answer of a conversation
// (with a note); asked again in a new conversation it is answered from it
// with no model call; bob's same question costs a model call and he cannot
// see, save into, delete or list alice's conversations and saved answers
// (404, or an empty list); deleting works for the owner.
func TestSavedAnswerRoutes(t *testing.T) {
	st := openConversationStore(t)
	model := sqlModel("SELECT code, title FROM courses ORDER BY code LIMIT 3")
	version := "v1"
	srv := testServer(t, Config{Pipeline: newPipeline(t, model, 0), Conversations: &Conversations{Store: st,
		DataVersion: func(context.Context) (string, error) { return version, nil }}})
	const bob = "tok-bob-0123456789abcdef0"
	start := func(token string) string {
		r := do(t, srv, "POST", "/v1/conversations", token, map[string]any{})
		require.Equal(t, 200, r.status, "%s", r.body)
		var c ConversationBody
		r.json(t, &c)
		return c.ConversationID
	}
	ask := func(token, id, msg string) ReplyBody {
		r := do(t, srv, "POST", "/v1/conversations/"+id+"/messages", token, MessageRequest{Message: msg})
		require.Equal(t, 200, r.status, "%s", r.body)
		var reply ReplyBody
		r.json(t, &reply)
		return reply
	}
	first := start(testToken)
	r := do(t, srv, "POST", "/v1/conversations/"+first+"/saved", testToken, SaveRequest{})
	assert.Equal(t, 409, r.status, "nothing to save yet: %s", r.body)
	assert.Equal(t, CodeNothingToSave, r.code(t))
	ask(testToken, first, "Which courses come first by code?")
	require.Equal(t, 1, model.CallCount())
	r = do(t, srv, "POST", "/v1/conversations/"+first+"/saved", bob, SaveRequest{})
	assert.Equal(t, 404, r.status, "bob cannot save alice's answer")
	r = do(t, srv, "POST", "/v1/conversations/"+first+"/saved", testToken, SaveRequest{Note: "the catalogue's start"})
	require.Equal(t, 200, r.status, "%s", r.body)
	var body SavedBody
	r.json(t, &body)
	saved := body.Saved
	assert.Equal(t, "the catalogue's start", saved.Note)
	assert.Len(t, saved.Rows, 3)
	assert.Equal(t, []string{"code", "title"}, saved.Columns)

	reply := ask(testToken, start(testToken), "which courses come first by code")
	assert.Equal(t, 1, model.CallCount(), "answered from the saved answer")
	assert.Equal(t, saved.ID, reply.SavedAnswer)
	require.NotNil(t, reply.Answer)
	require.NotNil(t, reply.Answer.Result)
	assert.Equal(t, 3, reply.Answer.Result.RowCount)
	assert.Equal(t, "no model call, no SQL run", reply.Steps[len(reply.Steps)-1].Saved)

	reply = ask(bob, start(bob), "Which courses come first by code?")
	assert.Equal(t, 2, model.CallCount(), "bob's question reaches the model")
	assert.Empty(t, reply.SavedAnswer)

	var list SavedList
	r = do(t, srv, "GET", "/v1/saved", bob, nil)
	require.Equal(t, 200, r.status, "%s", r.body)
	r.json(t, &list)
	assert.Empty(t, list.Saved)
	r = do(t, srv, "GET", "/v1/saved", testToken, nil)
	require.Equal(t, 200, r.status, "%s", r.body)
	r.json(t, &list)
	require.Len(t, list.Saved, 1)
	assert.Equal(t, saved.ID, list.Saved[0].ID)

	var convs ConversationList
	r = do(t, srv, "GET", "/v1/conversations", testToken, nil)
	require.Equal(t, 200, r.status, "%s", r.body)
	r.json(t, &convs)
	require.Len(t, convs.Conversations, 2)
	assert.Equal(t, "which courses come first by code", convs.Conversations[0].LastMessage, "the newest first")
	assert.Equal(t, 1, convs.Conversations[1].Turns)
	r = do(t, srv, "GET", "/v1/conversations", bob, nil)
	require.Equal(t, 200, r.status, "%s", r.body)
	convs = ConversationList{}
	r.json(t, &convs)
	assert.Len(t, convs.Conversations, 1, "bob's own only")

	assert.Equal(t, 404, do(t, srv, "DELETE", "/v1/saved/"+saved.ID, bob, nil).status)
	assert.Equal(t, 404, do(t, srv, "DELETE", "/v1/conversations/"+first, bob, nil).status)
	assert.Equal(t, 401, do(t, srv, "GET", "/v1/saved", "", nil).status)
	r = do(t, srv, "DELETE", "/v1/conversations/"+first, testToken, nil)
	require.Equal(t, 200, r.status, "%s", r.body)
	assert.Equal(t, 404, do(t, srv, "POST", "/v1/conversations/"+first+"/messages", testToken, MessageRequest{Message: "Hello"}).status, "deleted")
	r = do(t, srv, "DELETE", "/v1/saved/"+saved.ID, testToken, nil)
	require.Equal(t, 200, r.status, "%s", r.body)
	assert.Equal(t, 404, do(t, srv, "DELETE", "/v1/saved/"+saved.ID, testToken, nil).status)

	// Without an answer store the saved-answer routes are not configured.
	plain := testServer(t, Config{Conversations: &Conversations{}})
	r = do(t, plain, "GET", "/v1/saved", testToken, nil)
	assert.Equal(t, 503, r.status)
	r = do(t, plain, "GET", "/v1/conversations", testToken, nil)
	assert.Equal(t, 200, r.status, "listed from memory: %s", r.body)
}

// The saved-answer and listing routes share the per-principal rate limit
// with the others.
func TestSavedRoutesRateLimited(t *testing.T) {
	srv := testServer(t, Config{Conversations: &Conversations{}, RateLimit: RateLimit{Requests: 2, Window: time.Minute}})
	assert.Equal(t, 200, do(t, srv, "GET", "/v1/conversations", testToken, nil).status)
	assert.Equal(t, 503, do(t, srv, "GET", "/v1/saved", testToken, nil).status)
	assert.Equal(t, 429, do(t, srv, "GET", "/v1/conversations", testToken, nil).status)
	assert.Equal(t, 200, do(t, srv, "GET", "/v1/conversations", "tok-bob-0123456789abcdef0", nil).status, "bob has his own budget")
}

// openConversationStore opens a conversation and saved-answer store in a
// temporary directory, closed with t.
func openConversationStore(t *testing.T) *convsqlite.Store {
	t.Helper()
	st, err := convsqlite.Open(filepath.Join(t.TempDir(), "conversations.sqlite"), convsqlite.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	return st
}

// Saved rows are reused only by the principal as it was when they were
// read: the same id under another authenticator owns nothing of the
// first's, and other claims (a role, a tenant) change the version under
// which saved rows are reused.
func TestSavedAnswerScopedByPrincipal(t *testing.T) {
	s := &service{cfg: Config{Conversations: &Conversations{DataVersion: func(context.Context) (string, error) { return "v1", nil }}}}
	as := func(p *identity.Principal) context.Context { return identity.WithPrincipal(context.Background(), p) }
	static := as(&identity.Principal{ID: "alice", Method: "static"})
	jwtReader := as(&identity.Principal{ID: "alice", Method: "jwt", Claims: map[string]any{"role": "reader"}})
	jwtAdmin := as(&identity.Principal{ID: "alice", Method: "jwt", Claims: map[string]any{"role": "admin"}})
	assert.NotEqual(t, principalID(static), principalID(jwtReader), "two authenticators' alice are two owners")
	assert.Equal(t, principalID(jwtReader), principalID(jwtAdmin))
	v1, err := s.answerVersion(jwtReader)
	require.NoError(t, err)
	again, err := s.answerVersion(as(&identity.Principal{ID: "alice", Method: "jwt", Claims: map[string]any{"role": "reader"}}))
	require.NoError(t, err)
	assert.Equal(t, v1, again)
	v2, err := s.answerVersion(jwtAdmin)
	require.NoError(t, err)
	assert.NotEqual(t, v1, v2, "other claims: the saved SQL runs again under the current ones")
	assert.Contains(t, v1, "v1;rights=")
	s.cfg.Conversations.DataVersion = nil
	v, err := s.answerVersion(jwtReader)
	require.NoError(t, err)
	assert.Empty(t, v, "no data version: unknown")
}

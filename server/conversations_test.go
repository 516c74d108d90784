package server

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	convsqlite "github.com/text2sql-go/text2sql/conversation/sqlite"
)

// The conversation routes: start one, small talk without the pipeline, a
// data question through it (audited), another principal's conversation is
// not found, and without Conversations the routes are not configured.
func TestConversationRoutes(t *testing.T) {
	audit := &auditLog{}
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
	audit.mu.Lock()
	n := len(audit.events)
	audit.mu.Unlock()
	assert.Equal(t, 1, n, "the statement is audited")

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
	st, err := convsqlite.Open(filepath.Join(t.TempDir(), "conversations.sqlite"), convsqlite.Options{})
	require.NoError(t, err)
	defer st.Close()
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

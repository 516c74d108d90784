package server

import (
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	convsqlite "github.com/text2sql-go/text2sql/conversation/sqlite"
)

// startConv starts a conversation as token and returns its id.
func startConv(t *testing.T, srv *httptest.Server, token string) string {
	t.Helper()
	r := do(t, srv, "POST", "/v1/conversations", token, map[string]any{})
	require.Equal(t, 200, r.status, "%s", r.body)
	var c ConversationBody
	r.json(t, &c)
	return c.ConversationID
}

// Break 6 of issue 38: bob starting 1,000 conversations pushes out only
// his own — in memory, and with a store two replicas share (whose global
// bound, the backstop, is below his count) — so alice's still answers
// and his list holds his quota's newest.
func TestConversationQuota(t *testing.T) {
	const bobs = 1000
	store, err := convsqlite.Open(filepath.Join(t.TempDir(), "conversations.sqlite"), convsqlite.Options{MaxConversations: bobs / 2})
	require.NoError(t, err)
	t.Cleanup(func() { store.Close() })
	for name, replicas := range map[string][]*httptest.Server{
		"memory": {testServer(t, Config{Conversations: &Conversations{}})},
		"store, two replicas": {
			testServer(t, Config{Conversations: &Conversations{Store: store}}),
			testServer(t, Config{Conversations: &Conversations{Store: store}}),
		},
	} {
		t.Run(name, func(t *testing.T) {
			alice := startConv(t, replicas[0], testToken)
			var last string
			for i := range bobs {
				last = startConv(t, replicas[i%len(replicas)], bobToken)
			}
			// The replica she did not start it on first: a message saves
			// it again.
			for _, srv := range slices.Backward(replicas) {
				r := do(t, srv, "POST", "/v1/conversations/"+alice+"/messages", testToken, MessageRequest{Message: "Hello"})
				assert.Equal(t, 200, r.status, "alice's conversation after bob's %d: %s", bobs, r.body)
			}
			r := do(t, replicas[0], "GET", "/v1/conversations", bobToken, nil)
			require.Equal(t, 200, r.status, "%s", r.body)
			var list ConversationList
			r.json(t, &list)
			assert.Len(t, list.Conversations, DefaultConversationQuota, "bob keeps his quota")
			r = do(t, replicas[len(replicas)-1], "POST", "/v1/conversations/"+last+"/messages", bobToken, MessageRequest{Message: "Hello"})
			assert.Equal(t, 200, r.status, "bob's newest is kept: %s", r.body)
		})
	}
}

// A principal at the saved-answer quota is refused a new question with
// 429 quota_exceeded (nothing of theirs dropped), may still save a saved
// question again, and another principal saves as before.
func TestSavedAnswerQuota(t *testing.T) {
	store, err := convsqlite.Open(filepath.Join(t.TempDir(), "conversations.sqlite"), convsqlite.Options{MaxAnswersPerOwner: 2})
	require.NoError(t, err)
	t.Cleanup(func() { store.Close() })
	srv := testServer(t, Config{Conversations: &Conversations{Store: store}})
	save := func(token, id, q string) response {
		r := do(t, srv, "POST", "/v1/conversations/"+id+"/messages", token, MessageRequest{Message: q})
		require.Equal(t, 200, r.status, "%s", r.body)
		return do(t, srv, "POST", "/v1/conversations/"+id+"/saved", token, SaveRequest{})
	}
	alice := startConv(t, srv, testToken)
	for i := range 2 {
		r := save(testToken, alice, fmt.Sprintf("Which %d courses come first?", i))
		require.Equal(t, 200, r.status, "%s", r.body)
	}
	r := save(testToken, alice, "Which 2 courses come first?")
	assert.Equal(t, 429, r.status, "%s", r.body)
	assert.Equal(t, CodeQuotaExceeded, r.code(t))
	assert.Empty(t, r.header.Get("Retry-After"), "waiting does not help")
	r = save(testToken, alice, "Which 0 courses come first?")
	assert.Equal(t, 200, r.status, "a saved question is saved again: %s", r.body)
	r = do(t, srv, "GET", "/v1/saved", testToken, nil)
	var list SavedList
	r.json(t, &list)
	assert.Len(t, list.Saved, 2)
	r = save(bobToken, startConv(t, srv, bobToken), "Which 2 courses come first?")
	assert.Equal(t, 200, r.status, "bob is not alice: %s", r.body)
}

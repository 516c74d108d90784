package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/conversation"
	"github.com/text2sql-go/text2sql/conversation/sqlite"
)

// A saved conversation comes back whole after reopening; the store keeps
// the newest MaxConversations and none past the retention.
func TestStore(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "c", "conversations.sqlite")
	st, err := sqlite.Open(path, sqlite.Options{MaxConversations: 2, Retention: time.Hour})
	require.NoError(t, err)
	state := conversation.State{Turns: []conversation.Turn{{Message: "How many students?", Route: conversation.RouteData, Standalone: "How many students?", SQL: "SELECT COUNT(*) FROM students", Words: "There are 9 students."}}, Summary: "s"}
	now := time.Now()
	require.NoError(t, st.Save(ctx, conversation.Saved{ID: "a", Owner: "alice", State: state, Updated: now.Add(-3 * time.Second)}))
	require.NoError(t, st.Close())

	st, err = sqlite.Open(path, sqlite.Options{MaxConversations: 2, Retention: time.Hour})
	require.NoError(t, err)
	defer st.Close()
	got, err := st.Load(ctx, "a")
	require.NoError(t, err)
	require.NotNil(t, got)
	assert.Equal(t, "alice", got.Owner)
	assert.Equal(t, state.Turns[0].Words, got.State.Turns[0].Words)
	assert.Equal(t, "s", got.State.Summary)

	require.NoError(t, st.Save(ctx, conversation.Saved{ID: "b", Updated: now.Add(-2 * time.Second)}))
	require.NoError(t, st.Save(ctx, conversation.Saved{ID: "c", Updated: now.Add(-time.Second)}))
	got, err = st.Load(ctx, "a")
	require.NoError(t, err)
	assert.Nil(t, got, "the least recently updated went past MaxConversations")
	require.NoError(t, st.Save(ctx, conversation.Saved{ID: "old", Updated: now.Add(-2 * time.Hour)}))
	got, err = st.Load(ctx, "old")
	require.NoError(t, err)
	assert.Nil(t, got, "past the retention")
	assert.ErrorIs(t, st.Save(ctx, conversation.Saved{}), text2sql.ErrInvalidConfig)
	missing, err := st.Load(ctx, "nope")
	require.NoError(t, err)
	assert.Nil(t, missing)
}

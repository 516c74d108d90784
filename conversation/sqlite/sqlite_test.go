package sqlite_test

import (
	"context"
	"encoding/json"
	"fmt"
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

// One owner's conversations past MaxConversationsPerOwner push out that
// owner's least recently updated, never another owner's, even with more
// of them than MaxConversations (the backstop) allows.
func TestStoreConversationQuota(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "c.sqlite"), sqlite.Options{MaxConversationsPerOwner: 3, MaxConversations: 20})
	require.NoError(t, err)
	defer st.Close()
	now := time.Now()
	require.NoError(t, st.Save(ctx, conversation.Saved{ID: "alice-1", Owner: "alice", Updated: now.Add(-time.Hour)}))
	for i := range 50 {
		require.NoError(t, st.Save(ctx, conversation.Saved{ID: fmt.Sprint("bob-", i), Owner: "bob", Updated: now.Add(time.Duration(i) * time.Millisecond)}))
	}
	got, err := st.Load(ctx, "alice-1")
	require.NoError(t, err)
	assert.NotNil(t, got, "bob's many did not push alice's out")
	list, err := st.List(ctx, "bob", 0)
	require.NoError(t, err)
	require.Len(t, list, 3)
	assert.Equal(t, []string{"bob-49", "bob-48", "bob-47"}, []string{list[0].ID, list[1].ID, list[2].ID})
}

// Conversations are listed by owner, newest first, and deleted by id.
func TestStoreListDelete(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "c.sqlite"), sqlite.Options{})
	require.NoError(t, err)
	defer st.Close()
	now := time.Now()
	for i, id := range []string{"a1", "b1", "a2", "a3"} {
		require.NoError(t, st.Save(ctx, conversation.Saved{ID: id, Owner: id[:1], Updated: now.Add(time.Duration(i) * time.Second)}))
	}
	list, err := st.List(ctx, "a", 0)
	require.NoError(t, err)
	require.Len(t, list, 3)
	assert.Equal(t, []string{"a3", "a2", "a1"}, []string{list[0].ID, list[1].ID, list[2].ID})
	list, err = st.List(ctx, "a", 2)
	require.NoError(t, err)
	assert.Len(t, list, 2)
	ok, err := st.Delete(ctx, "a2")
	require.NoError(t, err)
	assert.True(t, ok)
	ok, err = st.Delete(ctx, "a2")
	require.NoError(t, err)
	assert.False(t, ok)
	list, err = st.List(ctx, "b", 0)
	require.NoError(t, err)
	assert.Len(t, list, 1)
}

func answer(owner, q string, at time.Time) conversation.SavedAnswer {
	return conversation.SavedAnswer{ID: "sa-" + owner + q, Owner: owner, Question: q, Normalized: q, SQL: "SELECT 1",
		Columns: []string{"n"}, Rows: [][]any{{int64(9007199254740993)}}, RowCount: 1, Updated: at}
}

// Saved answers survive a reopen with exact integers, one per owner and
// normalised question (saving it again keeps its ID and Created), scoped
// to their owner, bounded per owner (a new question past the quota is
// refused, a saved one is still replaced), in total and in age.
func TestStoreAnswers(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "c.sqlite")
	opts := sqlite.Options{MaxAnswersPerOwner: 2, MaxAnswers: 3, AnswerRetention: time.Hour}
	st, err := sqlite.Open(path, opts)
	require.NoError(t, err)
	now := time.Now()
	first, err := st.SaveAnswer(ctx, answer("alice", "q1", now.Add(-10*time.Second)))
	require.NoError(t, err)
	again := answer("alice", "q1", now.Add(-9*time.Second))
	again.ID, again.Note = "sa-other", "the note"
	second, err := st.SaveAnswer(ctx, again)
	require.NoError(t, err)
	assert.Equal(t, first.ID, second.ID, "the question's saved answer keeps its ID")
	assert.True(t, first.Created.Equal(second.Created), "and its Created")
	require.NoError(t, st.Close())

	st, err = sqlite.Open(path, opts)
	require.NoError(t, err)
	defer st.Close()
	got, err := st.FindAnswer(ctx, "alice", "q1")
	require.NoError(t, err)
	require.NotNil(t, got)
	assert.Equal(t, "the note", got.Note)
	assert.Equal(t, "9007199254740993", got.Rows[0][0].(json.Number).String(), "exact after the reopen")
	none, err := st.FindAnswer(ctx, "bob", "q1")
	require.NoError(t, err)
	assert.Nil(t, none, "another owner's")
	ok, err := st.DeleteAnswer(ctx, "bob", first.ID)
	require.NoError(t, err)
	assert.False(t, ok, "bob cannot delete alice's")

	_, err = st.SaveAnswer(ctx, answer("alice", "q2", now.Add(-8*time.Second)))
	require.NoError(t, err)
	_, err = st.SaveAnswer(ctx, answer("alice", "q3", now.Add(-7*time.Second)))
	assert.ErrorIs(t, err, conversation.ErrQuotaExceeded)
	list, err := st.Answers(ctx, "alice")
	require.NoError(t, err)
	require.Len(t, list, 2, "MaxAnswersPerOwner: nothing of hers went, nothing new came")
	assert.Equal(t, []string{"q2", "q1"}, []string{list[0].Question, list[1].Question})
	refreshed := answer("alice", "q1", now.Add(-9*time.Second))
	refreshed.Words = "refreshed"
	_, err = st.SaveAnswer(ctx, refreshed)
	require.NoError(t, err, "at the quota a saved question is still replaced")
	got, err = st.FindAnswer(ctx, "alice", "q1")
	require.NoError(t, err)
	assert.Equal(t, "refreshed", got.Words)

	_, err = st.SaveAnswer(ctx, answer("bob", "q1", now.Add(-6*time.Second)))
	require.NoError(t, err)
	_, err = st.SaveAnswer(ctx, answer("carol", "q1", now.Add(-5*time.Second)))
	require.NoError(t, err)
	list, err = st.Answers(ctx, "alice")
	require.NoError(t, err)
	assert.Len(t, list, 1, "MaxAnswers: the oldest of all went")

	_, err = st.SaveAnswer(ctx, answer("dave", "old", now.Add(-2*time.Hour)))
	require.NoError(t, err)
	list, err = st.Answers(ctx, "dave")
	require.NoError(t, err)
	assert.Empty(t, list, "past the retention")

	ok, err = st.DeleteAnswer(ctx, "bob", "sa-bobq1")
	require.NoError(t, err)
	assert.True(t, ok)
	_, err = st.SaveAnswer(ctx, conversation.SavedAnswer{ID: "x"})
	assert.ErrorIs(t, err, text2sql.ErrInvalidConfig)
}

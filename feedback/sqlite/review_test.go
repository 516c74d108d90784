package sqlite_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/demo"
	"github.com/text2sql-go/text2sql/feedback"
	"github.com/text2sql-go/text2sql/feedback/sqlite"
	"github.com/text2sql-go/text2sql/identity"
	"github.com/text2sql-go/text2sql/internal/demotest"
	"github.com/text2sql-go/text2sql/retriever"
)

const coursesQ = "How many courses are offered by the university?"

func as(id string) context.Context {
	return identity.WithPrincipal(context.Background(), &identity.Principal{ID: id, Method: "static"})
}

// reused returns the SQL the retriever would reuse for question asked by
// principal, or "".
func reused(t *testing.T, r text2sql.Retriever, principal, question string) string {
	t.Helper()
	res, err := r.Retrieve(as(principal), text2sql.RetrieveRequest{Question: question})
	require.NoError(t, err)
	if res.Match == nil {
		return ""
	}
	return res.Match.SQL
}

// plainRetriever is the demo's index without store examples.
func plainRetriever(t *testing.T) *retriever.Hybrid {
	t.Helper()
	_, ex := demotest.Open(t)
	kb, err := demo.Knowledge()
	require.NoError(t, err)
	h, err := retriever.NewHybrid(context.Background(), retriever.HybridOptions{Schema: ex.Schema(), Knowledge: kb})
	require.NoError(t, err)
	return h
}

// One ordinary up-vote serves its author only; another principal's
// agreeing vote counts toward the review without serving them; a
// reviewer's approval serves everyone, audited in the vote log.
func TestPendingUntilReviewed(t *testing.T) {
	ctx := context.Background()
	r, st := recorder(t, filepath.Join(t.TempDir(), "examples.sqlite"))
	ret := &feedback.Retriever{Base: plainRetriever(t), Store: st}
	const planted = "SELECT 0 AS n"

	out, err := r.Record(ctx, feedback.Feedback{Question: coursesQ, SQL: planted, Verdict: feedback.Up, Principal: "bob"})
	require.NoError(t, err)
	assert.Equal(t, feedback.StatusPending, out.Example.Status)
	assert.Equal(t, planted, reused(t, ret, "bob", coursesQ), "bob's own later question")
	assert.Empty(t, reused(t, ret, "alice", coursesQ), "bob's vote is not alice's answer")

	_, err = r.Record(ctx, feedback.Feedback{Question: coursesQ, SQL: planted, Verdict: feedback.Up, Principal: "mallory"})
	require.NoError(t, err)
	ex, err := st.Example(ctx, out.Example.ID)
	require.NoError(t, err)
	assert.Equal(t, 2, ex.Up)
	assert.Equal(t, feedback.StatusPending, ex.Status, "votes count; they do not review")
	assert.Empty(t, reused(t, ret, "mallory", coursesQ))
	assert.Empty(t, reused(t, ret, "alice", coursesQ))
	assert.True(t, ex.InQueue())

	_, err = r.Approve(ctx, "fb-nope", "carol")
	assert.ErrorIs(t, err, feedback.ErrNotFound)
	ex, err = r.Approve(ctx, out.Example.ID, "carol")
	require.NoError(t, err)
	assert.Equal(t, feedback.StatusTrusted, ex.Status)
	assert.Equal(t, "carol", ex.Reviewer)
	assert.False(t, ex.InQueue())
	for _, p := range []string{"alice", "bob", "mallory"} {
		assert.Equal(t, planted, reused(t, ret, p, coursesQ), p)
	}
	votes, err := st.Votes(ctx)
	require.NoError(t, err)
	require.Len(t, votes, 3)
	assert.Equal(t, feedback.Approved, votes[2].Verdict)
	assert.Equal(t, "carol", votes[2].Principal)
	assert.Equal(t, "proposed by bob; 2 up, 0 down", votes[2].Note)
}

// A down-vote by someone who is not a reviewer flags a trusted example
// and leaves it in use; a reviewer's down-vote takes it out of use; a
// rejection serves nobody and the same SQL does not reopen it.
func TestDownVoteByNonReviewer(t *testing.T) {
	ctx := context.Background()
	r, st := recorder(t, filepath.Join(t.TempDir(), "examples.sqlite"))
	ret := &feedback.Retriever{Base: plainRetriever(t), Store: st}
	const good = "SELECT count(*) AS n FROM courses"
	for range 3 {
		_, err := r.Record(ctx, feedback.Feedback{Question: coursesQ, SQL: good, Verdict: feedback.Up, Principal: "alice"})
		require.NoError(t, err)
	}
	id := feedback.ExampleID(coursesQ)
	_, err := r.Approve(ctx, id, "carol")
	require.NoError(t, err)

	out, err := r.Record(ctx, feedback.Feedback{Question: coursesQ, SQL: good, Verdict: feedback.Down, Principal: "bob"})
	require.NoError(t, err)
	assert.Equal(t, []string{id}, out.Flagged)
	ex, err := st.Example(ctx, id)
	require.NoError(t, err)
	assert.True(t, ex.Review, "flagged for review")
	assert.Equal(t, feedback.StatusTrusted, ex.Status)
	assert.Equal(t, good, reused(t, ret, "alice", coursesQ), "bob's down-vote does not stop alice's reviewed example")
	assert.Equal(t, good, reused(t, ret, "bob", coursesQ))

	// Another principal's different SQL is a conflict, not a replacement.
	out, err = r.Record(ctx, feedback.Feedback{Question: coursesQ, SQL: "SELECT 0 AS n", Verdict: feedback.Up, Principal: "bob"})
	require.NoError(t, err)
	assert.True(t, out.Conflict)
	assert.Equal(t, good, reused(t, ret, "alice", coursesQ))

	_, err = r.Record(ctx, feedback.Feedback{Question: coursesQ, SQL: good, Verdict: feedback.Down, Principal: "carol", Reviewer: true})
	require.NoError(t, err)
	assert.Empty(t, reused(t, ret, "alice", coursesQ), "a reviewer's down-vote withdraws it")

	_, err = r.Reject(ctx, id, "carol")
	require.NoError(t, err)
	_, err = r.Record(ctx, feedback.Feedback{Question: coursesQ, SQL: good, Verdict: feedback.Up, Principal: "alice"})
	require.NoError(t, err)
	ex, err = st.Example(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, feedback.StatusRejected, ex.Status, "the rejected SQL stays rejected")
	assert.Empty(t, reused(t, ret, "alice", coursesQ), "a rejected example serves nobody, its author included")

	const other = "SELECT count(DISTINCT course_id) AS n FROM courses"
	_, err = r.Record(ctx, feedback.Feedback{Question: coursesQ, SQL: other, Verdict: feedback.Up, Principal: "bob"})
	require.NoError(t, err)
	ex, err = st.Example(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, feedback.StatusPending, ex.Status, "new SQL reopens the question")
	assert.Equal(t, "bob", ex.By)
	assert.Equal(t, other, reused(t, ret, "bob", coursesQ))
	assert.Empty(t, reused(t, ret, "alice", coursesQ))
}

// An example indexed while trusted stops being reused, and leaves the
// retrieved context, once a reviewer withdraws it, without a rebuild.
func TestIndexedExampleWithdrawn(t *testing.T) {
	ctx := context.Background()
	r, st := recorder(t, filepath.Join(t.TempDir(), "examples.sqlite"))
	const good = "SELECT count(*) AS n FROM courses"
	_, err := r.Record(ctx, feedback.Feedback{Question: coursesQ, SQL: good, Verdict: feedback.Up}) // the host
	require.NoError(t, err)
	_, ex := demotest.Open(t)
	kb, err := demo.Knowledge()
	require.NoError(t, err)
	exs, err := st.Examples(ctx)
	require.NoError(t, err)
	merged, _, err := feedback.Merge(ctx, kb, exs, ex)
	require.NoError(t, err)
	h, err := retriever.NewHybrid(ctx, retriever.HybridOptions{Schema: ex.Schema(), Knowledge: merged})
	require.NoError(t, err)
	ret := &feedback.Retriever{Base: h, Store: st}
	id := feedback.ExampleID(coursesQ)
	res, err := ret.Retrieve(as("alice"), text2sql.RetrieveRequest{Question: coursesQ})
	require.NoError(t, err)
	require.NotNil(t, res.Match)
	assert.True(t, hasItem(res, "example:"+id))

	_, err = r.Reject(ctx, id, "")
	require.NoError(t, err)
	res, err = ret.Retrieve(as("alice"), text2sql.RetrieveRequest{Question: coursesQ})
	require.NoError(t, err)
	assert.Nil(t, res.Match)
	assert.False(t, hasItem(res, "example:"+id), "a rejected example is not shown to the model")
	assert.NotEmpty(t, res.Items)
}

func hasItem(res *text2sql.Retrieval, id string) bool {
	for _, it := range res.Items {
		if it.ID == id {
			return true
		}
	}
	return false
}

// Quotas bound one principal's votes per window and open proposals;
// reviewers and the host are not counted against them.
func TestQuota(t *testing.T) {
	ctx := context.Background()
	r, _ := recorder(t, filepath.Join(t.TempDir(), "examples.sqlite"))
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	r.Now = func() time.Time { return now }
	r.Quota = feedback.Quota{Votes: 4, Window: time.Hour, Pending: 2}
	vote := func(p, q string, v feedback.Verdict, reviewer bool) error {
		_, err := r.Record(ctx, feedback.Feedback{Question: q, SQL: "SELECT count(*) FROM courses", Verdict: v, Principal: p, Reviewer: reviewer})
		return err
	}
	require.NoError(t, vote("bob", "q1", feedback.Up, false))
	require.NoError(t, vote("bob", "q2", feedback.Up, false))
	assert.ErrorIs(t, vote("bob", "q3", feedback.Up, false), feedback.ErrQuota, "a third open proposal")
	require.NoError(t, vote("alice", "q3", feedback.Up, false), "alice's quota is her own")
	require.NoError(t, vote("bob", "q1", feedback.Down, false))
	require.NoError(t, vote("bob", "q2", feedback.Down, false))
	assert.ErrorIs(t, vote("bob", "q1", feedback.Down, false), feedback.ErrQuota, "a fifth vote in the hour")
	for i := range 6 {
		require.NoError(t, vote("carol", "r"+string(rune('a'+i)), feedback.Up, true), "a reviewer")
		require.NoError(t, vote("", "h"+string(rune('a'+i)), feedback.Up, false), "the host")
	}
	now = now.Add(time.Hour + time.Second)
	require.NoError(t, vote("bob", "q1", feedback.Down, false), "the window moved on")
}

// Two processes' stores on one file share the review state: a vote on
// one and an approval on the other are seen by both retrievers.
func TestReviewSharedByStores(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "examples.sqlite")
	r1, st1 := recorder(t, path)
	r2, st2 := recorder(t, path)
	base := plainRetriever(t)
	ret1 := &feedback.Retriever{Base: base, Store: st1}
	ret2 := &feedback.Retriever{Base: base, Store: st2}
	const good = "SELECT count(*) AS n FROM courses"
	_, err := r1.Record(ctx, feedback.Feedback{Question: coursesQ, SQL: good, Verdict: feedback.Up, Principal: "bob"})
	require.NoError(t, err)
	assert.Empty(t, reused(t, ret2, "alice", coursesQ))
	assert.Equal(t, good, reused(t, ret2, "bob", coursesQ))
	_, err = r2.Approve(ctx, feedback.ExampleID(coursesQ), "carol")
	require.NoError(t, err)
	assert.Equal(t, good, reused(t, ret1, "alice", coursesQ))
	_, err = r2.Record(ctx, feedback.Feedback{Question: coursesQ, SQL: good, Verdict: feedback.Down, Principal: "bob"})
	require.NoError(t, err)
	assert.Equal(t, good, reused(t, ret1, "alice", coursesQ))
}

// A store written before reviews existed is migrated: the host's unflagged
// examples stay trusted, every principal's waits for review.
func TestMigrateStatus(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.sqlite")
	db, err := sql.Open("sqlite3", path)
	require.NoError(t, err)
	_, err = db.Exec(`CREATE TABLE examples (id TEXT PRIMARY KEY, question TEXT NOT NULL, sql TEXT NOT NULL, note TEXT NOT NULL DEFAULT '',
  principal TEXT NOT NULL DEFAULT '', created TEXT NOT NULL, updated TEXT NOT NULL, up INTEGER NOT NULL DEFAULT 0,
  down INTEGER NOT NULL DEFAULT 0, review INTEGER NOT NULL DEFAULT 0, sql_key TEXT NOT NULL DEFAULT '');
CREATE TABLE votes (n INTEGER PRIMARY KEY AUTOINCREMENT, time TEXT NOT NULL, principal TEXT NOT NULL, question TEXT NOT NULL,
  sql TEXT NOT NULL, verdict TEXT NOT NULL, note TEXT NOT NULL, example TEXT NOT NULL, flagged TEXT NOT NULL);
INSERT INTO examples (id, question, sql, principal, review, created, updated, up) VALUES
  ('fb-1', 'q1', 'SELECT 1', '', 0, '2026-12-01T00:00:00Z', '2026-12-01T00:00:00Z', 1),
  ('fb-2', 'q2', 'SELECT 2', '', 1, '2026-12-01T00:00:00Z', '2026-12-01T00:00:00Z', 1),
  ('fb-3', 'q3', 'SELECT 3', 'bob', 0, '2026-12-01T00:00:00Z', '2026-12-01T00:00:00Z', 1)`)
	require.NoError(t, err)
	require.NoError(t, db.Close())
	st, err := sqlite.Open(path, sqlite.Options{})
	require.NoError(t, err)
	defer st.Close()
	exs, err := st.Examples(ctx)
	require.NoError(t, err)
	require.Len(t, exs, 3)
	assert.Equal(t, []feedback.Status{feedback.StatusTrusted, feedback.StatusPending, feedback.StatusPending},
		[]feedback.Status{exs[0].Status, exs[1].Status, exs[2].Status})
	votes, pending, err := st.CountBy(ctx, "bob", time.Time{})
	require.NoError(t, err)
	assert.Equal(t, 0, votes)
	assert.Equal(t, 1, pending)
}

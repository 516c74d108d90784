package conversation_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/conversation"
	convsqlite "github.com/text2sql-go/text2sql/conversation/sqlite"
)

// counting counts the statements a Memory runs again.
type counting struct {
	rec *recorder
	mu  sync.Mutex
	n   int
}

func (c *counting) Execute(ctx context.Context, sql string) (*text2sql.Result, error) {
	c.mu.Lock()
	c.n++
	c.mu.Unlock()
	return c.rec.p.Execute(ctx, sql)
}

// openStore opens a store in a temporary directory, closed with t.
func openStore(t *testing.T) *convsqlite.Store {
	t.Helper()
	st, err := convsqlite.Open(filepath.Join(t.TempDir(), "memory.sqlite"), convsqlite.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	return st
}

// step is r's step called name.
func step(t *testing.T, r *conversation.Reply, name string) conversation.Step {
	t.Helper()
	for _, s := range r.Steps {
		if s.Name == name {
			return s
		}
	}
	require.Failf(t, "no step", "%q in %+v", name, r.Steps)
	return conversation.Step{}
}

func rowsJSON(t *testing.T, rows [][]any) string {
	t.Helper()
	b, err := json.Marshal(rows)
	require.NoError(t, err)
	return string(b)
}

// A saved answer is reused: asked again (in another conversation, worded
// a little differently) while the data version is unchanged, it is
// answered from the saved rows with no model call and no statement; after
// the data changes its SQL runs again (no model call) and gives the new
// count, refreshing the saved answer; another owner's saved answer is
// never used; a similar question lists it as related.
func TestSavedAnswerReuse(t *testing.T) {
	sc := &script{}
	m := sc.model()
	rec := pipeline(t, m)
	st := openStore(t)
	run := &counting{rec: rec}
	memory := func(owner string) *conversation.Memory {
		return &conversation.Memory{Store: st, Owner: owner, Dialect: text2sql.DialectSQLite, DataVersion: rec.ex.DataVersion, Execute: run.Execute}
	}
	ctx := context.Background()

	alice, err := conversation.New(rec, conversation.Options{Model: m, Memory: memory("alice")})
	require.NoError(t, err)
	_, err = alice.SaveLast(ctx, "")
	assert.ErrorIs(t, err, conversation.ErrNothingToSave)
	first, err := alice.Ask(ctx, "How many students entered in 2023?")
	require.NoError(t, err)
	require.Equal(t, 1, sc.count("generate"))
	_, err = alice.SaveLast(ctx, strings.Repeat("x", conversation.MaxNoteBytes+1))
	assert.ErrorIs(t, err, conversation.ErrInvalidNote)
	saved, err := alice.SaveLast(ctx, "  for the board  ")
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(saved.ID, "sa-"), saved.ID)
	assert.Equal(t, "for the board", saved.Note)
	assert.Equal(t, "how many students entered in 2023", saved.Normalized)
	assert.Equal(t, text2sql.DialectSQLite, saved.Dialect)
	assert.NotEmpty(t, saved.DataVersion)
	assert.Equal(t, first.Words, saved.Words)

	again, err := conversation.New(rec, conversation.Options{Model: m, Memory: memory("alice")})
	require.NoError(t, err)
	asked := len(rec.questions)
	r, err := again.Ask(ctx, "how many students entered in 2023")
	require.NoError(t, err)
	assert.Equal(t, 1, sc.count("generate"), "no model call")
	assert.Equal(t, asked, len(rec.questions), "no pipeline")
	assert.Zero(t, run.n, "no statement")
	assert.Equal(t, saved.ID, r.SavedAnswer)
	assert.Equal(t, rowsJSON(t, first.Answer.Result.Rows), rowsJSON(t, r.Answer.Result.Rows), "the saved rows")
	assert.Equal(t, first.Text, r.Text)
	assert.Equal(t, first.SQL, r.SQL)
	assert.Equal(t, "no model call, no SQL run", step(t, r, "memory").Saved)

	// Another owner asks the same question: the pipeline answers.
	bob, err := conversation.New(rec, conversation.Options{Model: m, Memory: memory("bob")})
	require.NoError(t, err)
	r, err = bob.Ask(ctx, "How many students entered in 2023?")
	require.NoError(t, err)
	assert.Equal(t, 2, sc.count("generate"), "bob's question costs a model call")
	assert.Empty(t, r.SavedAnswer)
	assert.Empty(t, r.Related, "alice's saved answers are not bob's related ones")

	// The data changes: the saved rows are stale, its SQL runs again.
	db, err := sql.Open("sqlite3", rec.path)
	require.NoError(t, err)
	_, err = db.Exec("INSERT INTO students (student_id, first_name, last_name, email, entry_year) VALUES (9001, 'New', 'Student', 'new@example.edu', 2023)")
	require.NoError(t, err)
	require.NoError(t, db.Close())
	before := first.Answer.Result.Rows[0][0].(int64)
	r, err = again.Ask(ctx, "How many students entered in 2023?")
	require.NoError(t, err)
	assert.Equal(t, 2, sc.count("generate"), "still no model call")
	assert.Equal(t, 1, run.n, "the saved SQL ran once")
	assert.Equal(t, saved.ID, r.SavedAnswer)
	assert.Equal(t, before+1, r.Answer.Result.Rows[0][0], "the new count, not the saved one")
	assert.Contains(t, step(t, r, "memory").Outcome, "the data changed since it was saved, its SQL run again")
	assert.Equal(t, "no model call", step(t, r, "memory").Saved)
	assert.NotEqual(t, first.Text, r.Text, "new rows, new words")
	assert.Contains(t, r.Text, itoa(before+1))
	refreshed, err := st.FindAnswer(ctx, "alice", saved.Normalized)
	require.NoError(t, err)
	assert.Equal(t, saved.ID, refreshed.ID)
	assert.Equal(t, saved.Created.Unix(), refreshed.Created.Unix())
	assert.NotEqual(t, saved.DataVersion, refreshed.DataVersion)
	assert.Equal(t, "for the board", refreshed.Note)
	assert.Equal(t, r.Text, refreshed.Words, "the refreshed words are kept with the refreshed rows")
	// … and the refreshed rows are reused with no statement.
	r, err = again.Ask(ctx, "How many students entered in 2023?")
	require.NoError(t, err)
	assert.Equal(t, 1, run.n)
	assert.Equal(t, json.Number(itoa(before+1)), r.Answer.Result.Rows[0][0], "the refreshed rows, read back exactly")

	// A similar question: the pipeline answers, the saved one is related.
	r, err = again.Ask(ctx, "How many students entered in 2022?")
	require.NoError(t, err)
	assert.Equal(t, 3, sc.count("generate"))
	require.NotEmpty(t, r.Related)
	assert.Equal(t, saved.ID, r.Related[0].ID)
	assert.Positive(t, r.Related[0].Score)
}

// Without a data version or a way to run the SQL again, a saved answer is
// not reused blindly: the pipeline answers. A restored conversation can
// still save its last answer; saving needs a Memory.
func TestSavedAnswerUnknownVersion(t *testing.T) {
	sc := &script{}
	m := sc.model()
	rec := pipeline(t, m)
	st := openStore(t)
	ctx := context.Background()
	mem := &conversation.Memory{Store: st, Owner: "alice"}
	c, err := conversation.New(rec, conversation.Options{Model: m, Memory: mem})
	require.NoError(t, err)
	_, err = c.Ask(ctx, "How many students entered in 2023?")
	require.NoError(t, err)
	restored, err := conversation.Restore(rec, conversation.Options{Model: m, Memory: mem}, c.State())
	require.NoError(t, err)
	saved, err := restored.SaveLast(ctx, "")
	require.NoError(t, err)
	assert.Empty(t, saved.DataVersion)
	require.NotEmpty(t, saved.Rows)

	r, err := c.Ask(ctx, "How many students entered in 2023?")
	require.NoError(t, err)
	assert.Equal(t, 2, sc.count("generate"), "asked again: the version is unknown")
	assert.Empty(t, r.SavedAnswer)
	assert.Contains(t, step(t, r, "memory").Outcome, "not reused: the data version is unknown; asked again")

	plain, err := conversation.New(rec, conversation.Options{})
	require.NoError(t, err)
	_, err = plain.SaveLast(ctx, "")
	assert.ErrorIs(t, err, text2sql.ErrInvalidConfig)
}

// The lookup's cost: a repeated question answered from the store.
func BenchmarkSavedAnswerLookup(b *testing.B) {
	st, err := convsqlite.Open(filepath.Join(b.TempDir(), "memory.sqlite"), convsqlite.Options{})
	require.NoError(b, err)
	defer st.Close()
	ctx := context.Background()
	now := time.Now()
	for i := range conversation.DefaultRelated * 100 {
		q := "How many students entered in " + itoa(int64(1700+i)) + "?"
		_, err := st.SaveAnswer(ctx, conversation.SavedAnswer{ID: "sa-" + itoa(int64(i)), Owner: "alice", Question: q,
			Normalized: strings.ToLower(strings.TrimSuffix(q, "?")), SQL: "SELECT 1", Rows: [][]any{{1}}, Updated: now})
		require.NoError(b, err)
	}
	b.ResetTimer()
	for range b.N {
		a, err := st.FindAnswer(ctx, "alice", "how many students entered in 1750")
		if err != nil || a == nil {
			b.Fatal(err)
		}
	}
}

// fixedAsker answers every question with one row, without a model.
type fixedAsker struct{}

func (fixedAsker) Ask(_ context.Context, q string) (*text2sql.Answer, error) {
	return &text2sql.Answer{Question: q, Status: text2sql.StatusAnswered, SQL: "SELECT 1",
		Result: &text2sql.Result{Columns: []string{"n"}, Rows: [][]any{{int64(1)}}, RowCount: 1}}, nil
}

// What Memory adds to a question with no saved answer of its own: the
// lookup, then the owner's saved answers read and ranked for Related
// (DefaultMaxAnswersPerOwner of them).
func BenchmarkAskWithMemory(b *testing.B) {
	st, err := convsqlite.Open(filepath.Join(b.TempDir(), "memory.sqlite"), convsqlite.Options{})
	require.NoError(b, err)
	defer st.Close()
	ctx := context.Background()
	for i := range convsqlite.DefaultMaxAnswersPerOwner {
		q := "How many students entered in " + itoa(int64(1500+i)) + " by department?"
		_, err := st.SaveAnswer(ctx, conversation.SavedAnswer{ID: "sa-" + itoa(int64(i)), Owner: "alice", Question: q,
			Normalized: q, SQL: "SELECT 1", Rows: [][]any{{1}}, Words: "There is 1."})
		require.NoError(b, err)
	}
	for _, mem := range []bool{false, true} {
		b.Run(map[bool]string{false: "without", true: "with"}[mem], func(b *testing.B) {
			opts := conversation.Options{}
			if mem {
				opts.Memory = &conversation.Memory{Store: st, Owner: "alice"}
			}
			c, err := conversation.New(fixedAsker{}, opts)
			require.NoError(b, err)
			for range b.N {
				if _, err := c.Ask(ctx, "How many students entered in 2023?"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

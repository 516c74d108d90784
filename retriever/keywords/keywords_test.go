package keywords_test

import (
	"context"
	"errors"
	"os"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/executor/sqlite"
	"github.com/text2sql-go/text2sql/internal/shareddata"
	"github.com/text2sql-go/text2sql/retriever"
	"github.com/text2sql-go/text2sql/retriever/keywords"
)

// scripted answers every call with the next of answers (the last again
// when they run out) and counts the calls.
type scripted struct {
	answers []string
	err     error
	calls   atomic.Int32
	system  string
}

func (s *scripted) Complete(_ context.Context, req text2sql.ModelRequest) (*text2sql.ModelResponse, error) {
	n := int(s.calls.Add(1)) - 1
	s.system = req.System
	if s.err != nil {
		return nil, s.err
	}
	return &text2sql.ModelResponse{Text: s.answers[min(n, len(s.answers)-1)], Model: "scripted"}, nil
}

// The concert database: "venues" and "crowd size" name no table, so the
// retriever alone puts singer first; the model's keywords find stadium.
func TestKeywordsFindTheTable(t *testing.T) {
	path := shareddata.SpiderDB(t, "concert_singer")
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("Spider database: %v", err)
	}
	ex, err := sqlite.Open(path, sqlite.Options{})
	require.NoError(t, err)
	defer ex.Close()
	ctx := context.Background()
	h, err := retriever.NewHybrid(ctx, retriever.HybridOptions{Schema: ex.Schema(), MaxTables: 2, Budget: -1})
	require.NoError(t, err)
	q := text2sql.RetrieveRequest{Question: "List the venues with the largest crowd size"}
	plain, err := h.Retrieve(ctx, q)
	require.NoError(t, err)
	require.NotEqual(t, "stadium", plain.Tables[0].Name, "the premise: the question alone misses the stadium table")

	m := &scripted{answers: []string{`{"keywords": ["venue", "stadium", "capacity", "crowd size", "Stadium"]}`}}
	r, err := keywords.New(h, m, keywords.Options{})
	require.NoError(t, err)
	c, err := r.Retrieve(ctx, q)
	require.NoError(t, err)
	assert.EqualValues(t, 1, m.calls.Load())
	assert.Equal(t, "stadium", c.Tables[0].Name)
	require.NotNil(t, c.Keywords)
	assert.Equal(t, []string{"venue", "stadium", "capacity", "crowd size"}, c.Keywords.Keywords, "repeats dropped")
	assert.Len(t, c.Keywords.Calls, 1)
	assert.Empty(t, c.Keywords.Fallback)
	assert.Contains(t, m.system, "never an instruction")
}

// base records what it was asked.
type base struct{ got text2sql.RetrieveRequest }

func (b *base) Retrieve(_ context.Context, req text2sql.RetrieveRequest) (*text2sql.Retrieval, error) {
	b.got = req
	return &text2sql.Retrieval{Question: req.Question}, nil
}

func TestKeywordsFallBack(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		model    *scripted
		calls    int32
		fallback string
	}{
		{"malformed twice", &scripted{answers: []string{"no JSON here", "still none"}}, 2, "malformed answer"},
		{"model down", &scripted{err: &text2sql.ModelError{Provider: "p", Message: "down"}}, 1, "model error"},
		{"empty list", &scripted{answers: []string{`{"keywords": ["", "   "]}`}}, 1, "no keywords"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &base{}
			r, err := keywords.New(b, tc.model, keywords.Options{})
			require.NoError(t, err)
			c, err := r.Retrieve(ctx, text2sql.RetrieveRequest{Question: "q", Terms: []string{"judge hint"}})
			require.NoError(t, err, "a fallback is not an error")
			assert.Equal(t, tc.calls, tc.model.calls.Load())
			assert.Contains(t, c.Keywords.Fallback, tc.fallback)
			assert.Empty(t, c.Keywords.Keywords)
			assert.Equal(t, []string{"judge hint"}, b.got.Terms, "the request's own terms are kept")
		})
	}
}

func TestKeywordsBoundsAndErrors(t *testing.T) {
	ctx := context.Background()
	b := &base{}
	long := `{"keywords": ["a", "b", "c", "this keyword is far longer than sixty runes, a paragraph and not a phrase at all", "d"]}`
	r, err := keywords.New(b, &scripted{answers: []string{long}}, keywords.Options{MaxKeywords: 3})
	require.NoError(t, err)
	c, err := r.Retrieve(ctx, text2sql.RetrieveRequest{Question: "q", Terms: []string{"t"}})
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b", "c"}, c.Keywords.Keywords)
	assert.Equal(t, []string{"t", "a", "b", "c"}, b.got.Terms)

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, err = r.Retrieve(cancelled, text2sql.RetrieveRequest{Question: "q"})
	assert.True(t, errors.Is(err, context.Canceled), "%v", err)

	nilBase := text2sql.RetrieverFunc(func(context.Context, text2sql.RetrieveRequest) (*text2sql.Retrieval, error) { return nil, nil })
	r, err = keywords.New(nilBase, &scripted{answers: []string{`{"keywords": ["x"]}`}}, keywords.Options{})
	require.NoError(t, err)
	_, err = r.Retrieve(ctx, text2sql.RetrieveRequest{Question: "q"})
	assert.ErrorIs(t, err, text2sql.ErrNilResult)

	for _, bad := range []func() error{
		func() error { _, err := keywords.New(nil, &scripted{}, keywords.Options{}); return err },
		func() error { _, err := keywords.New(b, nil, keywords.Options{}); return err },
		func() error { _, err := keywords.New(b, &scripted{}, keywords.Options{MaxKeywords: -1}); return err },
	} {
		assert.ErrorIs(t, bad(), text2sql.ErrInvalidConfig)
	}
}

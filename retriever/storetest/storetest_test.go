package storetest_test

import (
	"context"
	"errors"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/retriever"
	"github.com/text2sql-go/text2sql/retriever/storetest"
)

// mapStore is a deliberately broken Store: a map with no validation, no
// cancellation, no kind filter, map-order results and a Reset that keeps
// the fingerprint.
type mapStore struct {
	recs map[string]retriever.Record
	fp   string
}

func (s *mapStore) Add(_ context.Context, rs []retriever.Record) error {
	for _, r := range rs {
		s.recs[r.ID] = r
	}
	return nil
}

func (s *mapStore) Query(_ context.Context, v []float32, k int, _ text2sql.ItemKind) ([]retriever.Hit, error) {
	var hits []retriever.Hit
	for id, r := range s.recs {
		hits = append(hits, retriever.Hit{ID: id, Kind: r.Kind, Similarity: 0.5})
	}
	if len(hits) > k && k > 0 {
		hits = hits[:k]
	}
	return hits, nil
}

func (s *mapStore) Count(context.Context) (int, error)                { return len(s.recs), nil }
func (s *mapStore) Fingerprint(context.Context) (string, error)       { return s.fp, nil }
func (s *mapStore) SetFingerprint(_ context.Context, fp string) error { s.fp = fp; return nil }
func (s *mapStore) Reset(context.Context) error                       { s.recs = map[string]retriever.Record{}; return nil }

func TestBrokenStoreFails(t *testing.T) {
	err := storetest.TestStore(func() (retriever.Store, error) {
		return &mapStore{recs: map[string]retriever.Record{}}, nil
	})
	require.Error(t, err)
	got := storetest.Violations(err)
	sort.Strings(got)
	for _, rule := range []string{
		storetest.RuleAddQuery, storetest.RuleSimilarity, storetest.RuleKind, storetest.RuleEmptyID,
		storetest.RuleNaN, storetest.RuleWrongLength, storetest.RuleZeroVector, storetest.RuleReset,
		storetest.RuleCancelled,
	} {
		assert.Contains(t, got, rule)
	}
	assert.NotContains(t, got, storetest.RuleEmpty, "a new map store is empty")
	assert.NotContains(t, got, storetest.RuleFingerprint, "the map store keeps its fingerprint")
	t.Log(err)
}

func TestConstructorError(t *testing.T) {
	boom := errors.New("boom")
	err := storetest.TestStore(func() (retriever.Store, error) { return nil, boom })
	require.ErrorIs(t, err, boom)
	assert.Len(t, storetest.Violations(err), 18)
}

func TestMemoryStorePasses(t *testing.T) {
	assert.NoError(t, storetest.TestStore(func() (retriever.Store, error) { return retriever.NewMemoryStore(), nil }))
}

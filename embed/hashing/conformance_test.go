package hashing_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/embed/embedtest"
	"github.com/text2sql-go/text2sql/embed/hashing"
)

// TestConformance runs the hashing embedder through the Embedder kit. It
// is local: it cannot hang or be refused, so those rules are not checked.
func TestConformance(t *testing.T) {
	for _, dim := range []int{0, 64} {
		assert.NoError(t, embedtest.TestEmbedder(func(b embedtest.Backend) (text2sql.Embedder, error) {
			if b.Hang || b.Reject {
				return nil, embedtest.ErrUnsupported
			}
			return hashing.New(dim)
		}, embedtest.Options{Deterministic: true}), "dimension %d", dim)
	}
}

package retriever_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/text2sql-go/text2sql/retriever"
	"github.com/text2sql-go/text2sql/retriever/storetest"
)

// TestStoresConform runs every Store of the package through the
// conformance kit.
func TestStoresConform(t *testing.T) {
	t.Run("memory", func(t *testing.T) {
		assert.NoError(t, storetest.TestStore(func() (retriever.Store, error) { return retriever.NewMemoryStore(), nil }))
		var zero retriever.MemoryStore
		used := false
		assert.NoError(t, storetest.TestStore(func() (retriever.Store, error) {
			if !used {
				used = true
				return &zero, nil // the zero value is ready to use
			}
			return new(retriever.MemoryStore), nil
		}))
	})
	t.Run("chromem", func(t *testing.T) {
		assert.NoError(t, storetest.TestStore(func() (retriever.Store, error) { return retriever.OpenChromem(t.TempDir()) }))
	})
}

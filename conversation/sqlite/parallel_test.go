package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/text2sql-go/text2sql/conversation"
	"github.com/text2sql-go/text2sql/conversation/sqlite"
)

// Many conversations saved at once by one process all succeed: its
// writers queue for the file instead of giving up on SQLite's lock
// ("database is locked" once a writer waited past the busy timeout).
// The owner's quota is raised so that every save is kept.
func TestStoreParallelSaves(t *testing.T) {
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "conversations.sqlite"), sqlite.Options{MaxConversationsPerOwner: 1000})
	require.NoError(t, err)
	defer st.Close()
	const saves = 1000
	errs := make(chan error, saves)
	var wg sync.WaitGroup
	for i := range saves {
		wg.Go(func() {
			errs <- st.Save(context.Background(), conversation.Saved{ID: fmt.Sprintf("c%05d", i), Owner: "static:bob"})
		})
	}
	wg.Wait()
	close(errs)
	failed := 0
	for err := range errs {
		if err != nil {
			failed++
		}
	}
	assert.Zero(t, failed, "saves failed")
	list, err := st.List(context.Background(), "static:bob", -1)
	require.NoError(t, err)
	assert.Equal(t, saves, len(list))
}

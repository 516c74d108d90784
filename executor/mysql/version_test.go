package mysql

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/text2sql-go/text2sql/internal/dbtest"
)

// Two writes within one second, with an answer between them: the second
// must move the version too (UPDATE_TIME alone, to the second, would not).
func TestDataVersion(t *testing.T) {
	e, db, _ := setup(t, Options{})
	ctx := context.Background()
	version := func() string {
		t.Helper()
		v, err := e.DataVersion(ctx)
		require.NoError(t, err)
		return v
	}
	v0 := version()
	for _, stmt := range []string{"UPDATE users SET balance = balance + 1 WHERE id = 1", "UPDATE users SET balance = balance + 1 WHERE id = 2", "DELETE FROM `order` WHERE id = 3"} {
		dbtest.Exec(t, db, stmt)
		v := version()
		assert.NotEqual(t, v0, v, stmt)
		v0 = v
	}

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, err := e.DataVersion(cancelled)
	require.Error(t, err)
}

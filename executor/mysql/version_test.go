package mysql

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/text2sql-go/text2sql/internal/dbtest"
)

// UPDATE_TIME has a resolution of a second: the test waits past it before
// each write it expects to see.
func TestDataVersion(t *testing.T) {
	e, db, _ := setup(t, Options{})
	ctx := context.Background()
	v0, err := e.DataVersion(ctx)
	require.NoError(t, err)
	again, err := e.DataVersion(ctx)
	require.NoError(t, err)
	assert.Equal(t, v0, again, "no write, same version")

	time.Sleep(1100 * time.Millisecond)
	dbtest.Exec(t, db, "UPDATE users SET balance = balance + 1 WHERE id = 1")
	v1, err := e.DataVersion(ctx)
	require.NoError(t, err)
	assert.NotEqual(t, v0, v1, "an UPDATE changes the version")

	time.Sleep(1100 * time.Millisecond)
	dbtest.Exec(t, db, "DELETE FROM `order` WHERE id = 3")
	v2, err := e.DataVersion(ctx)
	require.NoError(t, err)
	assert.NotEqual(t, v1, v2, "a DELETE changes the version")

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, err = e.DataVersion(cancelled)
	require.Error(t, err)
}

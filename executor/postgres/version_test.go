package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/text2sql-go/text2sql/internal/dbtest"
)

func TestDataVersion(t *testing.T) {
	db, _ := testDB(t,
		"CREATE TABLE users (id int PRIMARY KEY, name text)",
		"INSERT INTO users VALUES (1, 'ada'), (2, 'grace')",
		"CREATE SCHEMA other", "CREATE TABLE other.log (n int)")
	e := newExec(t, db, Options{Schemas: []string{"public"}})
	ctx := context.Background()
	// PostgreSQL publishes row counters when a backend's transaction
	// ends, at most once a second: wait for the version to settle.
	settled := func(prev string) string {
		t.Helper()
		var v string
		require.Eventually(t, func() bool {
			var err error
			v, err = e.DataVersion(ctx)
			require.NoError(t, err)
			return v != prev
		}, 15*time.Second, 100*time.Millisecond, "the version never moved from %q", prev)
		return v
	}
	v0 := settled("")

	dbtest.Exec(t, db, "UPDATE users SET name = 'Ada' WHERE id = 1")
	v1 := settled(v0)
	dbtest.Exec(t, db, "TRUNCATE users")
	v2 := settled(v1)
	assert.NotEqual(t, v0, v2)

	// A write outside the inspected schemas leaves the version alone.
	dbtest.Exec(t, db, "INSERT INTO other.log VALUES (1)")
	time.Sleep(1500 * time.Millisecond)
	v3, err := e.DataVersion(ctx)
	require.NoError(t, err)
	assert.Equal(t, v2, v3)
}

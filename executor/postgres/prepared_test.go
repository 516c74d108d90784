package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/exectest"
)

// The statements around a call's are prepared once per connection
// (pipeline). Two executors with other settings that share a pool run
// each with its own values on the same connection, and a connection
// whose prepared statements a pool dropped (DISCARD ALL) prepares them
// anew: the call runs, with the settings it asked for.
func TestPreparedSetup(t *testing.T) {
	db, _ := testDB(t, `CREATE TABLE big (id int PRIMARY KEY, label text)`, `INSERT INTO big VALUES (1, 'A')`)
	db.SetMaxOpenConns(1) // every call reuses the one connection
	opts := func(d time.Duration, mem int64) Options {
		return Options{Timeout: d, WorkMem: mem, AllowFunctions: []string{"current_setting"}}
	}
	short, long := newExec(t, db, opts(3*time.Second, 1<<20)), newExec(t, db, opts(7*time.Second, 2<<20))
	settings := `SELECT current_setting('statement_timeout'), current_setting('work_mem'), label FROM big`
	for range 2 {
		assert.Equal(t, [][]any{{"3s", "1MB", "A"}}, exectest.Run(t, short, settings).Rows)
		assert.Equal(t, [][]any{{"7s", "2MB", "A"}}, exectest.Run(t, long, settings).Rows)
		res, err := short.Execute(context.Background(), text2sql.ExecuteRequest{SQL: settings, Timeout: 5 * time.Second})
		require.NoError(t, err)
		assert.Equal(t, [][]any{{"5s", "1MB", "A"}}, res.Rows, "a request's own time limit")
	}
	// Each count has its own text: pgx's cache of prepared statements
	// does not survive DISCARD ALL either.
	prepared := func(when string) int {
		var n int
		require.NoError(t, db.QueryRow(`SELECT count(*) /* `+when+` */ FROM pg_prepared_statements WHERE name LIKE 'text2sql\_%'`).Scan(&n))
		return n
	}
	require.NotZero(t, prepared("before"), "the setup is prepared on the connection")
	_, err := db.Exec(`DISCARD ALL`)
	require.NoError(t, err)
	require.Zero(t, prepared("discarded"), "DISCARD ALL dropped the prepared statements")
	assert.Equal(t, [][]any{{"3s", "1MB", "A"}}, exectest.Run(t, short, settings).Rows, "after DISCARD ALL")
	assert.NotZero(t, prepared("after"), "prepared anew")
}

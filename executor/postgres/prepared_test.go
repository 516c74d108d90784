package postgres

import (
	"context"
	"database/sql"
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

// The statement runs only after every prepared statement of the setup
// before it ran, and one that drops them (DEALLOCATE, possible with the
// check off) cannot make a later call skip its setup or its rollback and
// unlock: the next call runs none of its own statements until they are
// prepared anew, and a rollback segment that fails closes the
// connection. Advisory locks never outlive a call.
func TestPreparedDropped(t *testing.T) {
	db, _ := testDB(t, `CREATE TABLE big (id int PRIMARY KEY, label text)`, `INSERT INTO big VALUES (1, 'A')`)
	db.SetMaxOpenConns(1)
	bare := newExec(t, db, Options{skipCheck: true})
	other, err := sql.Open("pgx", dsnOf(t, db))
	require.NoError(t, err)
	defer other.Close()
	for _, drop := range []string{`DEALLOCATE ALL`, `DEALLOCATE text2sql_begin`, `DEALLOCATE text2sql_strings`,
		`DEALLOCATE text2sql_rollback`, `DEALLOCATE text2sql_unlock`} {
		res := exectest.Run(t, bare, drop)
		require.Nil(t, res.Error, "%s: %+v", drop, res.Error)
		res = exectest.Run(t, bare, `SELECT pg_advisory_lock(7), current_setting('standard_conforming_strings'), current_setting('transaction_read_only'), label FROM big`)
		require.Nil(t, res.Error, "after %s: %+v", drop, res.Error)
		assert.Equal(t, [][]any{{"", "on", "on", "A"}}, res.Rows, "after %s: the setup ran", drop)
		var locks int
		require.NoError(t, other.QueryRow(`SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'`).Scan(&locks))
		assert.Zero(t, locks, "after %s: the advisory lock outlived its call", drop)
	}
}

package postgres

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/exectest"
)

func TestDataVersion(t *testing.T) {
	db, _ := testDB(t,
		"CREATE TABLE users (id int PRIMARY KEY, name text)",
		"INSERT INTO users VALUES (1, 'ada'), (2, 'grace')")
	e := newExec(t, db, Options{})
	ctx := context.Background()
	_, err := e.Execute(ctx, text2sql.ExecuteRequest{SQL: "SELECT count(*) FROM users"})
	require.NoError(t, err)
	// A commit is visible at once, even while its session stays busy
	// (the statistics counters would wait for it to go idle).
	conn, err := db.Conn(ctx)
	require.NoError(t, err)
	defer conn.Close()
	exectest.VersionMoves(t, e, func(stmt string) {
		_, err := conn.ExecContext(ctx, stmt)
		require.NoError(t, err)
	}, "UPDATE users SET name = 'Ada' WHERE id = 1", "TRUNCATE users")
}

package mysql

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/text2sql-go/text2sql/internal/dbtest"
	"github.com/text2sql-go/text2sql/internal/exectest"
)

// Two writes within one second, with an answer between them: the second
// must move the version too (UPDATE_TIME alone, to the second, would not).
func TestDataVersion(t *testing.T) {
	e, db, _ := setup(t, Options{})
	exectest.VersionMoves(t, e, func(stmt string) { dbtest.Exec(t, db, stmt) },
		"UPDATE users SET balance = balance + 1 WHERE id = 1", "UPDATE users SET balance = balance + 1 WHERE id = 2", "DELETE FROM `order` WHERE id = 3")

	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := e.DataVersion(cancelled)
	require.Error(t, err)
}

package mysql_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/text2sql-go/text2sql/executor/executortest"
	"github.com/text2sql-go/text2sql/executor/mysql"
	"github.com/text2sql-go/text2sql/internal/dbtest"
)

// TestConformance runs the MariaDB/MySQL executor through the Executor
// kit.
func TestConformance(t *testing.T) {
	db, dsn := dbtest.MySQL(t)
	dbtest.Exec(t, db,
		"CREATE TABLE kit (id INT PRIMARY KEY, name TEXT)",
		"INSERT INTO kit SELECT seq, CONCAT('row ', seq) FROM seq_1_to_20")
	e, err := mysql.Open(context.Background(), dsn, mysql.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { e.Close() })
	assert.NoError(t, executortest.TestExecutor(e, executortest.Fixture{
		Table: "kit", Rows: 20,
		ForbiddenFunction: "SELECT SLEEP(30)",
		Slow:              "SELECT count(*) FROM seq_1_to_1000000 a, seq_1_to_500 b", // ends on its own (about 13 s) even if a limit failed
	}))
}

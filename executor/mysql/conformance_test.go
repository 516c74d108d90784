package mysql_test

import (
	"context"
	"testing"

	"github.com/text2sql-go/text2sql/executor/mysql"
	"github.com/text2sql-go/text2sql/internal/dbtest"
	"github.com/text2sql-go/text2sql/internal/exectest"
)

// TestConformance runs the MariaDB/MySQL executor through the Executor
// kit.
func TestConformance(t *testing.T) {
	_, dsn, fx := dbtest.MySQLKit(t)
	e, err := mysql.Open(context.Background(), dsn, mysql.Options{})
	exectest.Conforms(t, e, err, fx, "SELECT SLEEP(30)")
}

package sqlite_test

import (
	"testing"

	"github.com/text2sql-go/text2sql/executor/sqlite"
	"github.com/text2sql-go/text2sql/internal/dbtest"
	"github.com/text2sql-go/text2sql/internal/exectest"
)

// TestConformance runs the SQLite executor through the Executor kit.
func TestConformance(t *testing.T) {
	path, fx := dbtest.SQLiteKit(t)
	e, err := sqlite.Open(path, sqlite.Options{})
	exectest.Conforms(t, e, err, fx, "SELECT load_extension('x')")
}

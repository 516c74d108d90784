package mcpexec

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A hostile server's DDL can create tables, indexes and views in the
// private schema file and nothing else: no file elsewhere, no trigger, no
// pragma, no rows.
func TestCreateSchemaRefusesHostileDDL(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(dir, "outside.db")
	for name, ddl := range map[string]string{
		"attach":        "CREATE TABLE t (a INT); ATTACH DATABASE '" + outside + "' AS x; CREATE TABLE x.t (a INT)",
		"vacuum into":   "CREATE TABLE t (a INT); VACUUM INTO '" + outside + "'",
		"trigger":       "CREATE TABLE t (a INT); CREATE TRIGGER tr AFTER INSERT ON t BEGIN SELECT 1; END",
		"pragma":        "PRAGMA writable_schema = 1",
		"rows":          "CREATE TABLE t (a INT); INSERT INTO t VALUES (1)",
		"hidden attach": "CREATE TABLE t (a INT) /* ; */; /**/ATTACH '" + outside + "' AS y",
	} {
		path := filepath.Join(dir, name+".sqlite")
		err := createSchema(context.Background(), path, ddl)
		assert.Error(t, err, name)
		_, statErr := os.Stat(outside)
		assert.True(t, os.IsNotExist(statErr), "%s wrote %s", name, outside)
	}
	ok := filepath.Join(dir, "ok.sqlite")
	require.NoError(t, createSchema(context.Background(), ok,
		"CREATE TABLE a (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT UNIQUE); CREATE UNIQUE INDEX a_name ON a (name); CREATE VIEW v AS SELECT name FROM a;"))
}

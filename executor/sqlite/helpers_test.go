package sqlite

import (
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func open(t testing.TB, path string, opts Options) *Executor {
	t.Helper()
	e, err := Open(path, opts)
	require.NoError(t, err)
	t.Cleanup(func() { e.Close() })
	return e
}

func fileHash(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func listDir(t testing.TB, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names
}

// untouched records a database file's hash and its directory's listing,
// and checks at cleanup that neither changed: nothing was written and no
// file (journal, exfiltration target) was created.
func untouched(t *testing.T, path string) {
	t.Helper()
	h, files := fileHash(t, path), listDir(t, filepath.Dir(path))
	t.Cleanup(func() {
		assert.Equal(t, h, fileHash(t, path), "database file changed")
		assert.Equal(t, files, listDir(t, filepath.Dir(path)), "directory changed")
	})
}

// count returns a table's row count through a plain connection.
func count(t testing.TB, path, table string) int {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	require.NoError(t, err)
	defer db.Close()
	var n int
	require.NoError(t, db.QueryRow(`SELECT count(*) FROM "`+table+`"`).Scan(&n), "count %s", table)
	return n
}

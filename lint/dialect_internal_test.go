package lint

import (
	"database/sql"
	"sort"
	"strings"
	"testing"

	_ "github.com/mattn/go-sqlite3"

	text2sql "github.com/text2sql-go/text2sql"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every function the SQLite list calls foreign is unknown to the engine
// (a plain go-sqlite3 connection, without the guarded executor's
// allow-list), so naming it is never a false failure.
func TestSQLiteForeignFunctionsAreUnknown(t *testing.T) {
	db, err := sql.Open("sqlite3", ":memory:")
	require.NoError(t, err)
	defer db.Close()
	var names []string
	for n := range foreignFunctions[text2sql.DialectSQLite] {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		for _, args := range []string{"1", "1, 2", "1, 2, 3", "'a', 'b'"} {
			_, err := db.Exec("SELECT " + n + "(" + args + ")")
			if !assert.Error(t, err, "SQLite knows %s(%s): it must not be called foreign", n, args) {
				continue
			}
			assert.True(t, strings.Contains(err.Error(), "no such function") || (n == "isnull" && strings.Contains(err.Error(), "syntax error")),
				"%s(%s): %v, want no such function", n, args, err)
		}
	}
	// And the functions SQLite has are never called foreign.
	for _, n := range []string{"iif", "ifnull", "strftime", "julianday", "group_concat", "instr", "substr", "total", "printf", "concat", "string_agg", "random"} {
		assert.NotContains(t, foreignFunctions[text2sql.DialectSQLite], n, "%s is a SQLite function", n)
	}
}

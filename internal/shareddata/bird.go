package shareddata

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
)

// BIRDQuestion is one question of BIRD mini-dev.
type BIRDQuestion struct {
	ID    int    `json:"question_id"`
	DBID  string `json:"db_id"`
	SQL   string `json:"SQL"`        // the gold query
	Level string `json:"difficulty"` // "simple", "moderate" or "challenging"
}

// birdFiles names the BIRD mini-dev file of each dialect's gold queries.
var birdFiles = map[text2sql.Dialect]string{
	text2sql.DialectSQLite:   "mini_dev_sqlite.json",
	text2sql.DialectPostgres: "mini_dev_postgresql.json",
	text2sql.DialectMySQL:    "mini_dev_mysql.json",
}

// BIRDMiniDev returns the BIRD mini-dev questions with their gold queries
// written for dialect d (SQLite, PostgreSQL or MySQL), in file order. It
// skips the test when the data is absent and fails it unless the file
// holds the 500 questions.
func BIRDMiniDev(tb testing.TB, d text2sql.Dialect) []BIRDQuestion {
	tb.Helper()
	file, ok := birdFiles[d]
	if !ok {
		tb.Fatalf("BIRD mini-dev has no %s gold queries", d)
	}
	b, err := os.ReadFile(Path(tb, "bird", "mini_dev", file))
	require.NoError(tb, err)
	var qs []BIRDQuestion
	require.NoError(tb, json.Unmarshal(b, &qs), file)
	require.Len(tb, qs, birdMiniDevSize, file)
	return qs
}

// birdMiniDevSize is how many questions BIRD mini-dev has in each dialect.
const birdMiniDevSize = 500

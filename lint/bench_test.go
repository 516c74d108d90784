package lint_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/executor/sqlite"
	"github.com/text2sql-go/text2sql/internal/shareddata"
	"github.com/text2sql-go/text2sql/lint"
)

// BenchmarkCheckSpiderGold measures Check (names, types, dialect
// constructs, static warnings) per query over the 972 Spider dev gold
// queries; ns/op is per query.
func BenchmarkCheckSpiderGold(b *testing.B) {
	qs, _ := shareddata.SpiderDev(b)
	checkers := map[string]*lint.Checker{}
	for _, q := range qs {
		if checkers[q.DBID] == nil {
			ex, err := sqlite.Open(shareddata.SpiderDB(b, q.DBID), sqlite.Options{})
			require.NoError(b, err)
			checkers[q.DBID] = lint.New(ex.Schema(), text2sql.DialectSQLite)
			require.NoError(b, ex.Close())
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		q := qs[i%len(qs)]
		checkers[q.DBID].Check(q.Query)
	}
}

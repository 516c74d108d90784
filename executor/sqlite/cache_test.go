package sqlite

import (
	"testing"

	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/exectest"
)

// A statement the lexical check accepted before is not lexed again, but
// SQLite still prepares it under the authorizer on every call: a denied
// function stays denied, and an allowed query reaches the authorizer
// each time. Refusals of the lexical check are not kept.
func TestPassedKeepsEngineChecks(t *testing.T) {
	e := open(t, bigDB(t, 10), Options{})
	denied := "SELECT load_extension('x') FROM big"
	for range 2 {
		exectest.RunKind(t, e, denied, text2sql.KindForbiddenFunction)
	}
	_, kept := e.passed.Get(denied)
	require.True(t, kept, "the accepted text is kept")

	ok := "SELECT id FROM big WHERE id = 1;  -- trailing"
	for range 2 {
		before := e.authCalls.Load()
		res := exectest.Run(t, e, ok)
		require.Nil(t, res.Error)
		require.Equal(t, [][]any{{int64(1)}}, res.Rows)
		require.Greater(t, e.authCalls.Load(), before, "the authorizer ran")
	}
	q, kept := e.passed.Get(ok)
	require.True(t, kept)
	require.Equal(t, "SELECT id FROM big WHERE id = 1", q, "the text prepared, without what trails it")

	for range 2 {
		exectest.RunKind(t, e, "SELECT 1; SELECT 2", text2sql.KindMultipleStatements)
	}
	_, kept = e.passed.Get("SELECT 1; SELECT 2")
	require.False(t, kept, "a refusal is not kept")
}

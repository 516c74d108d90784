package catalog_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/exectest"
)

// The statement was stripped of "trailing comments" by PostgreSQL's
// lexical rules before any dialect read it, and a CTE's step and the final
// SELECT of a merge were cut at the last token of their query as that
// reading saw it. Text PostgreSQL reads as a comment is code to MySQL
// ("--1" is minus minus one: "--" starts a comment only before white
// space) and to SQLite (block comments do not nest: "/* /* */" ends at
// the first "*/"), so the catalog silently cut code off and the member ran
// another statement than the one written: a wrong answer, no error. What
// the catalog's reading takes for trivia is now left to the engine: MySQL
// runs it, the SQLite guard refuses a nested comment (KindDialect), which
// it never saw when the catalog had cut it.
func TestAttackCutsOnlyWhatTheEngineReadsAsTrivia(t *testing.T) {
	c := mixed(t)
	ctx := context.Background()
	for _, tc := range []struct {
		sql  string
		want [][]any // nil: refused as KindDialect
	}{
		// MySQL: PetID > 1 - -1, i.e. PetID > 2: one pet, not two.
		{"SELECT count(*) FROM shop.`Pets` WHERE PetID > 1 --1", [][]any{{int64(1)}}},
		{"SELECT count(*) FROM shop.`Pets` WHERE PetID > 1 --1;", [][]any{{int64(1)}}},
		// SQLite: Age > 30 + 10 (Age > 40, three singers) ran as Age > 30
		// (four).
		{"SELECT count(*) FROM concert.singer WHERE Age > 30 /* /* */ + 10", nil},
		{"SELECT count(*) FROM concert.singer WHERE Age > 30 /* /* */ * 2 -- */\n", nil},
		// The final SELECT of a merge, in SQLite.
		{"WITH p AS (SELECT PetID FROM shop.`Pets`), s AS (SELECT Age FROM concert.singer) " +
			"SELECT count(*) FROM p, s WHERE Age > 30 /* /* */ + 10", nil},
		// A CTE's query up to its closing parenthesis, read by its member.
		{"WITH p AS (SELECT PetID FROM shop.`Pets` WHERE PetID > 1 --1\n), s AS (SELECT Age FROM concert.singer) " +
			"SELECT count(*) FROM p, s", [][]any{{int64(6)}}},
		{"WITH p AS (SELECT PetID FROM shop.`Pets`), s AS (SELECT Age FROM concert.singer WHERE Age > 30 /* /* */ + 10 -- */\n) " +
			"SELECT count(*) FROM p, s", nil},
	} {
		res := exectest.Run(t, c, tc.sql)
		if tc.want == nil {
			exectest.WantKind(t, tc.sql, res, text2sql.KindDialect)
			assert.Nil(t, res.Rows, tc.sql)
			continue
		}
		require.Nil(t, res.Error, "%s: %v", tc.sql, res.Error)
		assert.Equal(t, tc.want, res.Rows, tc.sql)
	}
	// What every reading takes for trivia is still cut.
	res, err := c.Execute(ctx, text2sql.ExecuteRequest{SQL: "SELECT count(*) FROM shop.`Pets` WHERE PetID > 1 -- x;\n ;"})
	require.NoError(t, err)
	require.Nil(t, res.Error)
	assert.Equal(t, "SELECT count(*) FROM `Pets` WHERE PetID > 1", res.Steps[0].SQL)
	res, err = c.Execute(ctx, text2sql.ExecuteRequest{SQL: "SELECT count(*) FROM concert.singer /* x */ ;"})
	require.NoError(t, err)
	require.Nil(t, res.Error)
	assert.Equal(t, "SELECT count(*) FROM singer", res.Steps[0].SQL)
}

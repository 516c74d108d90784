package sqlparse

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/text2sql-go/text2sql"
)

func TestQueryAt(t *testing.T) {
	// The subquery sits in text the tree skipped (NOTzq is no operator).
	s := Parse("SELECT a FROM t WHERE b NOTzq IN (SELECT c FROM u) ORDER BY a", text2sql.DialectSQLite)
	k := -1
	for i, tok := range s.Tokens {
		if tok.Is("select") && i > 0 {
			k = i
		}
	}
	require.Positive(t, k)
	q := s.QueryAt(k)
	require.NotNil(t, q)
	assert.Equal(t, "SELECT c FROM u", q.Text())
	assert.Equal(t, k, q.From)
	assert.Equal(t, ")", s.Tokens[q.To].Text)

	assert.Nil(t, s.QueryAt(1), "no query starts at a")
	assert.Nil(t, s.QueryAt(-1))
	assert.Nil(t, s.QueryAt(len(s.Tokens)))
}

func TestFromAt(t *testing.T) {
	// The tree ends the block at the lone GROUP; the FROM after it is
	// skipped text.
	s := Parse("SELECT a, GROUP x FROM t JOIN u ON t.id = u.id WHERE b", text2sql.DialectSQLite)
	k := -1
	for i, tok := range s.Tokens {
		if tok.Is("from") {
			k = i
		}
	}
	require.Positive(t, k)
	items := s.FromAt(k + 1)
	require.Len(t, items, 1)
	j, ok := items[0].(*Join)
	require.True(t, ok)
	assert.Equal(t, "t JOIN u ON t.id = u.id", j.Text())
	assert.Nil(t, s.FromAt(len(s.Tokens)))
}

package mysql

import (
	"context"
	"database/sql"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/lint"
)

// The server's errors get their kinds from their numbers, the same kinds
// their messages gave (lint.Classify, the fallback), and an error without
// a number is left to the message.
func TestErrorKind(t *testing.T) {
	_, db, _ := setup(t, Options{})
	ctx := context.Background()
	for q, want := range map[string]text2sql.ErrorKind{
		"SELECT * FROM no_such_table":   text2sql.KindUnknownTable,
		"SELECT no_such_col FROM users": text2sql.KindUnknownColumn,
		"SELEC 1":                       text2sql.KindSyntax,
		"SELECT 1 FROM users WHERE":     text2sql.KindSyntax,
	} {
		_, err := db.ExecContext(ctx, q)
		require.Error(t, err, q)
		assert.Equal(t, want, errorKind(err), "%s: %v", q, err)
		assert.Equal(t, lint.Classify(err.Error()), errorKind(err), "%s: %v", q, err)
	}

	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	require.NoError(t, err)
	defer tx.Rollback()
	_, err = tx.ExecContext(ctx, "DELETE FROM users")
	require.Error(t, err)
	assert.Equal(t, text2sql.KindNotReadOnly, errorKind(err), "%v", err)

	_, err = db.ExecContext(ctx, "SELECT no_such_fn(1)")
	require.Error(t, err)
	assert.Equal(t, text2sql.KindRuntime, errorKind(err), "a number not listed: %v", err)

	assert.Equal(t, text2sql.ErrorKind(""), errorKind(errors.New("driver: bad connection")), "no number")
}

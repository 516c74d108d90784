package lint_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/lint"
)

// PostgreSQL errors as pgx renders them through database/sql (the generic
// executor) keep their kinds: found by executor/executortest.
func TestClassifyPgxRendering(t *testing.T) {
	for msg, want := range map[string]text2sql.ErrorKind{
		`ERROR: relation "executortest_no_such_table" does not exist (SQLSTATE 42P01)`: text2sql.KindUnknownTable,
		`ERROR: column "nme" does not exist (SQLSTATE 42703)`:                          text2sql.KindUnknownColumn,
		`ERROR: syntax error at or near "SELEC" (SQLSTATE 42601)`:                      text2sql.KindSyntax,
	} {
		assert.Equal(t, want, lint.Classify(msg), msg)
	}
	assert.Equal(t, "executortest_no_such_table", lint.UnknownName(`ERROR: relation "executortest_no_such_table" does not exist (SQLSTATE 42P01)`))
}

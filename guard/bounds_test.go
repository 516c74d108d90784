package guard_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/guard"
)

func TestBoundsError(t *testing.T) {
	assert.Nil(t, guard.BoundsError(guard.MaxDepth, guard.MaxTokens))
	if se := guard.BoundsError(guard.MaxDepth+1, 1); assert.NotNil(t, se) {
		assert.Equal(t, text2sql.KindTooLarge, se.Kind)
		assert.Contains(t, se.Message, "levels deep")
	}
	if se := guard.BoundsError(1, guard.MaxTokens+1); assert.NotNil(t, se) {
		assert.Equal(t, text2sql.KindTooLarge, se.Kind)
		assert.Contains(t, se.Message, "tokens")
	}
}

package sqltext

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestDepthBound(t *testing.T) {
	for q, want := range map[string]int{
		`SELECT 1`:         1,
		`SELECT 1 + 2 * 3`: 3,
		`SELECT x FROM t WHERE x IN (-1, -2, 3, 4)`: 11,
		`SELECT '1+1' /* + */ -- +`:                 1,
		`SELECT ARRAY[1+1+1]`:                       5,
		`SELECT a[1]`:                               3,
	} {
		assert.Equal(t, want, DepthBound(Lex(q)), q)
	}
	for _, deep := range []string{
		"SELECT 1" + strings.Repeat("+1", 30000),
		"SELECT ARRAY[1" + strings.Repeat("+1", 30000) + "]",
		"SELECT true" + strings.Repeat(" ISNULL", 30000),
		"SELECT 1 FROM t" + strings.Repeat(" CROSS JOIN t", 15000),
	} {
		assert.Greater(t, DepthBound(Lex(deep)), 30000, deep[:20])
		assert.Greater(t, DepthBound(LexMySQL(deep, MySQLMode{})), 30000, deep[:20])
	}
	long := "SELECT x FROM t WHERE x IN (" + strings.Repeat("1, ", 100000) + "2)"
	assert.Less(t, DepthBound(Lex(long)), 20)
}

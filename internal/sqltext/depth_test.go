package sqltext

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestBounds(t *testing.T) {
	for q, want := range map[string][2]int{
		`SELECT 1`:         {1, 2},
		`SELECT 1 + 2 * 3`: {3, 6},
		`SELECT x FROM t WHERE x IN (-1, -2, 3, 4)`: {11, 18},
		`SELECT '1+1' /* + */ -- +`:                 {1, 2},
		`SELECT 'a' 'b' 'c'`:                        {3, 4},
		`SELECT @a + ?`:                             {4, 4},
	} {
		d, n := Bounds(LexMySQL(q, MySQLMode{}))
		assert.Equal(t, want, [2]int{d, n}, q)
	}
	for _, deep := range []string{
		"SELECT 1" + strings.Repeat("+1", 30000),
		"SELECT true" + strings.Repeat(" ISNULL", 30000),
		"SELECT 1 FROM t" + strings.Repeat(" CROSS JOIN t", 15000),
		"SELECT 'x'" + strings.Repeat(" 'x'", 30000),
		"SELECT 1" + strings.Repeat("?1", 30000),
	} {
		d, _ := Bounds(LexMySQL(deep, MySQLMode{}))
		assert.Greater(t, d, 30000, deep[:20])
	}
	_, n := Bounds(LexMySQL("SELECT x FROM t WHERE x IN ("+strings.Repeat("1, ", 100000)+"2)", MySQLMode{}))
	assert.Greater(t, n, 200000)
}

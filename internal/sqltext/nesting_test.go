package sqltext

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestNesting(t *testing.T) {
	for q, want := range map[string]int{
		`SELECT 1`:         0,
		`SELECT 1 + 2 * 3`: 2,
		`SELECT ((1))`:     2,
		`SELECT x FROM t WHERE x IN (-1, -2, +3)`: 2, // IN and the parentheses; signs in a list join nothing
		`SELECT a FROM t WHERE a = 1 AND NOT b`:   3,
		`SELECT 1 UNION SELECT 2 UNION SELECT 3`:  2,
		`SELECT '1+1' /* + */ -- +`:               0,
	} {
		assert.Equal(t, want, Nesting(Lex(q)), q)
	}
	deep := "SELECT 1" + strings.Repeat("+1", 30000)
	assert.Equal(t, 30000, Nesting(Lex(deep)))
	assert.Equal(t, 30000, Nesting(LexMySQL(deep, MySQLMode{})))
}

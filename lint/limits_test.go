package lint_test

import (
	"context"
	"strings"
	"testing"
	"time"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/lint"

	"github.com/stretchr/testify/assert"
)

// Pathological texts are checked in roughly linear time: nesting,
// long arithmetic chains, huge lists. Each must finish well within the
// bound even under the race detector.
func TestPathologicalInputsAreFast(t *testing.T) {
	c := lint.New(fuzzDB, text2sql.DialectSQLite)
	for name, q := range map[string]string{
		"nested parens":   "SELECT " + strings.Repeat("(", 10000) + "1" + strings.Repeat(")", 10000),
		"unclosed parens": "SELECT " + strings.Repeat("(", 10000),
		"nested FROM":     strings.Repeat("SELECT * FROM (", 1000) + "SELECT 1" + strings.Repeat(")", 1000),
		"nested CASE":     "SELECT " + strings.Repeat("CASE WHEN 1 THEN ", 2000) + "1" + strings.Repeat(" END", 2000),
		"division chain":  "SELECT " + strings.Repeat("n / ", 5000) + "1 FROM t",
		"many unions":     strings.Repeat("SELECT id FROM t UNION ", 2000) + "SELECT 1",
		"long lists":      "SELECT " + strings.Repeat("v, ", 5000) + "n FROM t ORDER BY " + strings.Repeat("v, ", 5000) + "n LIMIT 1",
		"many CTEs":       "WITH " + strings.Repeat("a AS (SELECT 1), ", 1000) + "b AS (SELECT 1) SELECT 1",
		"nested selects":  "SELECT " + strings.Repeat("(SELECT ", 1000) + "1" + strings.Repeat(")", 1000),
	} {
		start := time.Now()
		c.Check(q)
		c.Warn(context.Background(), q, nil)
		assert.LessOrEqual(t, time.Since(start), 5*time.Second, name)
	}
}

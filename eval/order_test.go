package eval

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/accuracy"
)

func run(t *testing.T, ex text2sql.Executor, q string) *text2sql.Result {
	t.Helper()
	r, err := ex.Execute(context.Background(), text2sql.ExecuteRequest{SQL: q})
	require.NoError(t, err, q)
	require.Nil(t, r.Error, q)
	return r
}

func orderCheck(t *testing.T, ex text2sql.Executor, q string) *accuracy.OrderReport {
	t.Helper()
	rep, err := accuracy.OrderCheck(context.Background(), ex, q, run(t, ex, q))
	require.NoError(t, err, q)
	return rep
}

func hasWarning(rep *accuracy.OrderReport, kind string) bool {
	if rep == nil {
		return false
	}
	for _, w := range rep.Warnings {
		if strings.HasPrefix(w, kind+":") {
			return true
		}
	}
	return false
}

// C6 #37 (mini_dev#49): t(v TEXT) with '9', '10', NULL; the gold
// SELECT v FROM t ORDER BY v LIMIT 1 returns NULL (SQLite sorts NULLs
// first), and the harness warns about ORDER BY over NULLs and over
// numbers stored as text.
func TestC6OrderByNullsAndNumericText(t *testing.T) {
	ex := openExec(t, newDB(t, "c37.sqlite", "CREATE TABLE t(v TEXT)", "INSERT INTO t VALUES ('9'), ('10'), (NULL)"))
	const gold = "SELECT v FROM t ORDER BY v LIMIT 1"
	r := run(t, ex, gold)
	require.Len(t, r.Rows, 1)
	require.Nil(t, r.Rows[0][0], "SQLite returns NULL first")
	rep := orderCheck(t, ex, gold)
	require.NotNil(t, rep)
	assert.True(t, hasWarning(rep, accuracy.WarnOrderNulls), "warnings %v", rep.Warnings)
	assert.True(t, hasWarning(rep, accuracy.WarnOrderNumericText), "warnings %v", rep.Warnings)
	assert.False(t, rep.Nondeterministic, "no tie here: %s", rep.Detail)
	// The variant without NULLs still warns about numeric text.
	rep = orderCheck(t, ex, "SELECT v FROM t WHERE v IS NOT NULL ORDER BY v DESC")
	require.NotNil(t, rep)
	assert.False(t, hasWarning(rep, accuracy.WarnOrderNulls), "warnings %v", rep.Warnings)
	assert.True(t, hasWarning(rep, accuracy.WarnOrderNumericText), "warnings %v", rep.Warnings)
}

// A gold whose LIMIT cuts through tied rows is nondeterministic, reported
// as such.
func TestOrderCheckTies(t *testing.T) {
	ex := openExec(t, newDB(t, "ties.sqlite",
		"CREATE TABLE s(name TEXT, age INT, city TEXT)",
		"INSERT INTO s VALUES ('ann', 30, 'Rome'), ('bob', 30, 'Oslo'), ('cid', 25, 'Rome'), ('dan', 40, 'Oslo'), ('eve', 40, 'Oslo')",
	))
	tests := []struct {
		sql    string
		nondet bool
	}{
		{"SELECT name FROM s ORDER BY age DESC LIMIT 1", true},          // dan/eve tie at 40
		{"SELECT name FROM s ORDER BY age DESC LIMIT 2", false},         // both 40s in
		{"SELECT name FROM s ORDER BY age DESC LIMIT 3", true},          // ann/bob tie at 30
		{"SELECT name FROM s ORDER BY age DESC, name LIMIT 1", false},   // tie broken
		{"SELECT city FROM s ORDER BY age DESC LIMIT 1", false},         // tied rows agree on city
		{"SELECT name FROM s ORDER BY age LIMIT 1", false},              // cid alone at 25
		{"SELECT name FROM s ORDER BY age DESC LIMIT 1 OFFSET 1", true}, // dan/eve straddle the offset
		{"SELECT name FROM s ORDER BY age DESC LIMIT 1, 2", true},       // the same, SQLite form
		{"SELECT city, count(*) AS n FROM s GROUP BY city ORDER BY n DESC LIMIT 1", false},
		{"SELECT name FROM s ORDER BY 1 LIMIT 2", false}, // by position, unique
		{"SELECT name FROM s LIMIT 2", true},             // no ORDER BY: any 2 rows
		{"SELECT count(*) FROM s LIMIT 1", false},        // one row only
		{"SELECT name FROM s WHERE age = 30 UNION SELECT name FROM s WHERE age = 40 ORDER BY name LIMIT 2", false},
		{"SELECT name FROM s WHERE name IN (SELECT name FROM s ORDER BY age LIMIT 1)", false}, // inner LIMIT: not checked
		{"SELECT max(age) AS m, name FROM s GROUP BY city ORDER BY m DESC LIMIT 1", false},
		{"SELECT name FROM s ORDER BY city COLLATE NOCASE LIMIT 1", true}, // bob/dan/eve tie in Oslo
	}
	for _, tc := range tests {
		rep := orderCheck(t, ex, tc.sql)
		assert.Equal(t, tc.nondet, rep != nil && rep.Nondeterministic, "%s: nondeterministic (%+v)", tc.sql, rep)
		assert.False(t, hasWarning(rep, accuracy.WarnOrderUnchecked), "%s: unchecked (%+v)", tc.sql, rep)
	}
	assert.Nil(t, orderCheck(t, ex, "SELECT name FROM s"), "no ORDER BY or LIMIT")
	rep := orderCheck(t, ex, "SELECT name FROM s ORDER BY age LIMIT (SELECT 1)")
	assert.True(t, hasWarning(rep, accuracy.WarnOrderUnchecked), "a LIMIT that is no literal (%+v)", rep)
	rep = orderCheck(t, ex, "SELECT name FROM s ORDER BY age DESC LIMIT 1")
	require.NotNil(t, rep)
	assert.Contains(t, rep.Detail, "rows 1 to 2")
}

func TestTopLevelOrderBy(t *testing.T) {
	for sql, want := range map[string]bool{
		"SELECT a FROM t ORDER BY a":                                     true,
		"SELECT a FROM t WHERE b = (SELECT max(b) FROM u ORDER BY b)":    false,
		"WITH x AS (SELECT a FROM t ORDER BY a) SELECT a FROM x":         false,
		"SELECT a FROM t UNION SELECT a FROM u ORDER BY a":               true,
		"SELECT 'order by' FROM t":                                       false,
		"SELECT a FROM t -- order by a":                                  false,
		"SELECT a FROM (SELECT a FROM t ORDER BY a LIMIT 3) ORDER BY a;": true,
		"select a from t order   by a":                                   true,
		"(SELECT a FROM t ORDER BY a)":                                   false,
		"SELECT a FROM t ORDER BY a; SELECT b FROM u":                    true,
		"SELECT a FROM t; SELECT b FROM u ORDER BY b":                    false,
	} {
		assert.Equal(t, want, accuracy.TopLevelOrderBy(sql), "accuracy.TopLevelOrderBy(%q)", sql)
	}
	// The Spider evaluator's rule is a substring test.
	assert.True(t, accuracy.SpiderOrderMatters("SELECT a FROM t WHERE b IN (SELECT b FROM u ORDER BY c LIMIT 1)"))
	assert.False(t, accuracy.SpiderOrderMatters("SELECT a FROM t order  by a"))
}

func TestSpiderRewrite(t *testing.T) {
	tests := []struct {
		in         string
		prediction bool
		keep       bool
		want       string
	}{
		{"SELECT DISTINCT name FROM t WHERE a > = 1", false, false, "SELECT  name FROM t WHERE a >= 1"},
		{"SELECT count(DISTINCT name) FROM t", false, false, "SELECT count( name) FROM t"},
		{"SELECT DISTINCT name FROM t", false, true, "SELECT DISTINCT name FROM t"},
		{"SELECT 'distinct', \"distinct\" FROM t", false, false, "SELECT 'distinct', \"distinct\" FROM t"},
		{"SELECT total_value FROM t WHERE x = 'value'", true, false, "SELECT total_1 FROM t WHERE x = '1'"},
		{"SELECT total_value FROM t", false, false, "SELECT total_value FROM t"},
		{"SELECT * FROM t WHERE y = YEAR ( curdate( ) ) - 1", false, false, "SELECT * FROM t WHERE y = 2020- 1"},
		{"SELECT a FROM t WHERE a ! = 1 AND b < = 2", false, false, "SELECT a FROM t WHERE a != 1 AND b <= 2"},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, accuracy.SpiderRewrite(tc.in, tc.prediction, tc.keep), "accuracy.SpiderRewrite(%q)", tc.in)
	}
}

package mysql

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/exectest"
)

// The Guard needs no server: every attack of the security tests is
// refused offline with its kind.
func TestGuardOffline(t *testing.T) {
	c := NewGuard("", nil)
	var _ text2sql.Guard = c
	w := &world{token: "off"}
	for _, a := range w.attacks() {
		se := c.CheckSQL(a.sql)
		if a.kind == "" {
			assert.Nil(t, se, a.sql)
			continue
		}
		if assert.NotNil(t, se, a.sql) {
			assert.Equal(t, a.kind, se.Kind, "%q: %s", a.sql, se.Message)
			assert.NotEmpty(t, se.Message)
		}
		assert.Error(t, c.Check(context.Background(), a.sql))
	}
	for q, kind := range map[string]text2sql.ErrorKind{
		"SELECT 'a\xff'":                        text2sql.KindSyntax,
		"":                                      text2sql.KindEmpty,
		" ; -- x":                               text2sql.KindEmpty,
		"SELECT * FROM t AS OF TIMESTAMP NOW()": text2sql.KindDialect,
		"SELECT a FROM t WHERE a ILIKE 'x'":     text2sql.KindDialect,
		"SELECT TOP 1 a FROM t":                 text2sql.KindDialect,
		"SELECT a::int FROM t":                  text2sql.KindDialect,
		"SELECT [a] FROM t":                     text2sql.KindDialect,
		"SELECT strftime('%Y', d) FROM t":       text2sql.KindDialect,
		"SELECT util.f(1)":                      text2sql.KindForbiddenFunction,
		"SELECT my_udf(1)":                      text2sql.KindForbiddenFunction,
		"SELEC 1":                               text2sql.KindSyntax,
		"SELECT 1 FROM t PROCEDURE ANALYSE()":   text2sql.KindForbiddenStatement,
	} {
		se := c.CheckSQL(q)
		if assert.NotNil(t, se, q) {
			assert.Equal(t, kind, se.Kind, "%q: %s", q, se.Message)
		}
	}
}

// Prepare returns the text the server runs: comments blanked, trailing
// semicolons gone, strings untouched.
func TestPrepareText(t *testing.T) {
	c := NewGuard("", nil)
	text, se := c.Prepare("SELECT '#x' AS s /* c */, 1 # d\n;")
	require.Nil(t, se)
	assert.Equal(t, "SELECT '#x' AS s        , 1", text)
}

// The session's sql_mode decides how "…" and backslashes are read.
func TestGuardModes(t *testing.T) {
	ansi := NewGuard("STRICT_TRANS_TABLES,ANSI_QUOTES", nil)
	assert.Nil(t, ansi.CheckSQL(`SELECT "Name" FROM singer`))
	// Under ANSI_QUOTES "…" is an identifier, so this hides nothing in a string.
	se := ansi.CheckSQL(`SELECT "a\" , LOAD_FILE('/etc/hostname') -- "`)
	require.NotNil(t, se)
	assert.Equal(t, text2sql.KindSyntax, se.Kind)
	assert.Contains(t, se.Message, "backslash")
	// The parser would read one name from "a\" to the last quote; the server
	// reads a call between two names.
	se = ansi.CheckSQL(`SELECT "a\" , LOAD_FILE('/etc/hostname') , "\" FROM singer`)
	require.NotNil(t, se)
	assert.Equal(t, text2sql.KindSyntax, se.Kind)
	noBS := NewGuard("NO_BACKSLASH_ESCAPES", nil)
	// Without backslash escapes 'a\' ends at the second quote: INTO and
	// OUTFILE are in the next string, read as the server reads them (the
	// parser does not read the text; its tokens are decided).
	st, se := noBS.Plan(`SELECT 'a\' , ' INTO OUTFILE '/tmp/x' -- '`)
	require.Nil(t, se)
	assert.True(t, st.Unparsed)
	assert.Empty(t, st.Calls)
	se = noBS.CheckSQL(`SELECT 'a\', LOAD_FILE('/etc/hostname') -- '`)
	require.NotNil(t, se)
	assert.Equal(t, text2sql.KindForbiddenFunction, se.Kind)
	assert.Nil(t, NewGuard("", nil).CheckSQL(`SELECT 'a\', LOAD_FILE(''/etc/hostname'') -- '`))
}

// Options.AllowFunctions names stored functions, with or without schema.
func TestAllowFunctions(t *testing.T) {
	c := NewGuard("", []string{"My_Func", "util.f"})
	assert.Nil(t, c.CheckSQL("SELECT my_func(1), UTIL.F(2)"))
	assert.NotNil(t, c.CheckSQL("SELECT other.my_func(1)"))
	assert.NotNil(t, c.CheckSQL("SELECT f(1)"))
}

// The reflection walk decides a node an Accept method did not visit,
// reached through an interface field, or through a pointer field and a
// slice of pointers.
func TestReflectWalkBackstop(t *testing.T) {
	c := NewGuard("", nil)
	sleep := &ast.FuncCallExpr{FnName: ast.NewCIStr("sleep")}
	for _, stmt := range []*ast.SelectStmt{
		{Where: sleep},
		{Fields: &ast.FieldList{Fields: []*ast.SelectField{{Expr: sleep}}}},
	} {
		v := &visitor{c: c, seen: map[ast.Node]bool{stmt: true}} // as if Accept stopped at the top
		c.reflectWalk(reflect.ValueOf(stmt), v, map[uintptr]bool{})
		require.NotNil(t, v.err)
		assert.Equal(t, text2sql.KindForbiddenFunction, v.err.Kind)
		assert.True(t, strings.Contains(v.err.Message, "sleep"))
	}
}

// Every name on the allow-list is lower case and unique, and none of the
// denied functions is on it.
func TestDefaultFunctions(t *testing.T) {
	seen := map[string]bool{}
	for _, f := range DefaultFunctions {
		assert.Equal(t, strings.ToLower(f), f)
		assert.False(t, seen[f], "%s twice", f)
		seen[f] = true
	}
	for _, f := range []string{"load_file", "sleep", "benchmark", "get_lock", "release_lock", "release_all_locks",
		"is_free_lock", "is_used_lock", "master_pos_wait", "source_pos_wait", "master_gtid_wait",
		"wait_for_executed_gtid_set", "nextval", "setval", "lastval", "password"} {
		assert.False(t, seen[f], f)
	}
}

// Statements whose depth bound passes guard.MaxDepth are refused
// before the parser sees them (TiDB's parser took 566 MB for 140,000 ×
// BINARY); a chain of 500 terms still parses.
func TestDeepStatements(t *testing.T) {
	c := NewGuard("", nil)
	for _, q := range append(exectest.DeepStatements(),
		"SELECT 1 FROM DUAL WHERE "+strings.Repeat("NOT ", 20000)+"1",
		"SELECT "+strings.Repeat("BINARY ", 140000)+"'a'",
		"SELECT "+strings.Repeat("CASE WHEN 1 THEN ", 40000)+"1"+strings.Repeat(" END", 40000),
		"SELECT 1 FROM singer a"+strings.Repeat(" JOIN singer", 40000),
		"SELECT 'x'"+strings.Repeat(" 'x'", 100000),
	) {
		se := c.CheckSQL(q)
		if assert.NotNil(t, se) {
			assert.Equal(t, text2sql.KindTooLarge, se.Kind)
		}
	}
	assert.Nil(t, c.CheckSQL("SELECT 1"+strings.Repeat("+1", 500)))
}

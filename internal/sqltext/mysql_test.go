package sqltext

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// kinds renders the significant tokens of s as kind:text.
func kinds(toks []Token) string {
	var b []string
	for _, t := range toks {
		if t.Kind == Space {
			continue
		}
		b = append(b, []string{"sp", "line", "block", "str", "ident", "num", "word", "param", "punct"}[t.Kind]+":"+t.Text)
	}
	return strings.Join(b, " ")
}

func TestLexMySQL(t *testing.T) {
	for _, c := range []struct {
		in   string
		mode MySQLMode
		want string
	}{
		{`SELECT 'a\' , ' x`, MySQLMode{}, `word:SELECT str:'a\' , ' word:x`},
		{`SELECT 'a\' , ' x`, MySQLMode{NoBackslashEscapes: true}, `word:SELECT str:'a\' punct:, str:' x`},
		{`SELECT "a\"b" c`, MySQLMode{}, `word:SELECT str:"a\"b" word:c`},
		{`SELECT "a""b" c`, MySQLMode{ANSIQuotes: true}, `word:SELECT ident:"a""b" word:c`},
		{"SELECT 1 # x\n2", MySQLMode{}, "word:SELECT num:1 line:# x num:2"},
		{"SELECT 1 --1", MySQLMode{}, "word:SELECT num:1 punct:- punct:- num:1"},
		{"SELECT 1 -- 1", MySQLMode{}, "word:SELECT num:1 line:-- 1"},
		{"SELECT 1 --\x01x", MySQLMode{}, "word:SELECT num:1 line:--\x01x"},
		{"SELECT 1 --", MySQLMode{}, "word:SELECT num:1 line:--"},
		{"SELECT /* a /* b */ c */", MySQLMode{}, "word:SELECT block:/* a /* b */ word:c punct:* punct:/"},
		{"SELECT `a``b`, 1abc, 1e3, @v, @@x, ?", MySQLMode{}, "word:SELECT ident:`a``b` punct:, word:1abc punct:, num:1e3 punct:, param:@v punct:, param:@@x punct:, param:?"},
		{`SELECT X'41', b'1', N'a\'b', x 'y', 0b101, 0b2`, MySQLMode{}, `word:SELECT str:X'41' punct:, str:b'1' punct:, str:N'a\'b' punct:, word:x str:'y' punct:, num:0b101 punct:, word:0b2`},
		{`SELECT N'a\' x`, MySQLMode{NoBackslashEscapes: true}, `word:SELECT str:N'a\' word:x`},
	} {
		toks := LexMySQL(c.in, c.mode)
		assert.Equal(t, c.want, kinds(toks), "LexMySQL(%q, %+v)", c.in, c.mode)
		var b strings.Builder
		for _, tk := range toks {
			b.WriteString(tk.Text)
		}
		assert.Equal(t, c.in, b.String(), "round trip of %q", c.in)
	}
}

func TestExecutableComment(t *testing.T) {
	for in, want := range map[string]string{
		"/*! x */": "/*!", "/*!50000 x */": "/*!", "/*M! x */": "/*M!", "/*m!100000 x*/": "/*M!",
		"/*+ HINT */": "/*+", "/* plain */": "", "/*M plain */": "",
	} {
		assert.Equal(t, want, ExecutableComment(LexMySQL(in, MySQLMode{})[0]), "ExecutableComment(%q)", in)
	}
	assert.Empty(t, ExecutableComment(LexMySQL("'/*! x */'", MySQLMode{})[0]), "a string is not a comment")
}

func TestParseMySQLMode(t *testing.T) {
	m := ParseMySQLMode("STRICT_TRANS_TABLES,ANSI_QUOTES")
	assert.True(t, m.ANSIQuotes, "%+v", m)
	assert.False(t, m.NoBackslashEscapes, "%+v", m)
	m = ParseMySQLMode("no_backslash_escapes")
	assert.True(t, m.NoBackslashEscapes, "%+v", m)
	m = ParseMySQLMode("ANSI")
	assert.True(t, m.ANSIQuotes, "%+v", m)
	assert.Equal(t, "SELECT 1", StripTrailingMySQL("SELECT 1 # x\n;", MySQLMode{}), "StripTrailingMySQL")
	assert.Len(t, StatementsMySQL(`SELECT 'a\';b'`, MySQLMode{}), 1, "StatementsMySQL")
}

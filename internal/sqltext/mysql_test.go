package sqltext

import (
	"strings"
	"testing"
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
		{"SELECT `a``b`, 1abc, 1e3, @v, @@x, ?", MySQLMode{}, "word:SELECT ident:`a``b` punct:, word:1abc punct:, num:1e3 punct:, param:@v punct:, punct:@ param:@x punct:, param:?"},
	} {
		toks := LexMySQL(c.in, c.mode)
		if got := kinds(toks); got != c.want {
			t.Errorf("LexMySQL(%q, %+v)\n got %s\nwant %s", c.in, c.mode, got, c.want)
		}
		var b strings.Builder
		for _, tk := range toks {
			b.WriteString(tk.Text)
		}
		if b.String() != c.in {
			t.Errorf("round trip of %q: %q", c.in, b.String())
		}
	}
}

func TestExecutableComment(t *testing.T) {
	for in, want := range map[string]string{
		"/*! x */": "/*!", "/*!50000 x */": "/*!", "/*M! x */": "/*M!", "/*m!100000 x*/": "/*M!",
		"/*+ HINT */": "/*+", "/* plain */": "", "/*M plain */": "",
	} {
		if got := ExecutableComment(LexMySQL(in, MySQLMode{})[0]); got != want {
			t.Errorf("ExecutableComment(%q) = %q, want %q", in, got, want)
		}
	}
	if ExecutableComment(LexMySQL("'/*! x */'", MySQLMode{})[0]) != "" {
		t.Error("a string is not a comment")
	}
}

func TestParseMySQLMode(t *testing.T) {
	if m := ParseMySQLMode("STRICT_TRANS_TABLES,ANSI_QUOTES"); !m.ANSIQuotes || m.NoBackslashEscapes {
		t.Errorf("%+v", m)
	}
	if m := ParseMySQLMode("no_backslash_escapes"); !m.NoBackslashEscapes {
		t.Errorf("%+v", m)
	}
	if m := ParseMySQLMode("ANSI"); !m.ANSIQuotes {
		t.Errorf("%+v", m)
	}
	if StripTrailingMySQL("SELECT 1 # x\n;", MySQLMode{}) != "SELECT 1" || len(StatementsMySQL(`SELECT 'a\';b'`, MySQLMode{})) != 1 {
		t.Error("StripTrailingMySQL / StatementsMySQL")
	}
}

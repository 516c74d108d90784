package lint_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/lint"
	"github.com/text2sql-go/text2sql/schema"
)

func TestClassify(t *testing.T) {
	cases := map[string]text2sql.ErrorKind{
		"no such table: topic":                                   text2sql.KindUnknownTable,
		`relation "orders" does not exist`:                       text2sql.KindUnknownTable,
		"Error 1146 (42S02): Table 'shop.topic' doesn't exist":   text2sql.KindUnknownTable,
		"no such column: ck.cell_name":                           text2sql.KindUnknownColumn,
		`column "nope" does not exist`:                           text2sql.KindUnknownColumn,
		"Error 1054 (42S22): Unknown column 'x' in 'field list'": text2sql.KindUnknownColumn,
		`near "FROM": syntax error`:                              text2sql.KindSyntax,
		"incomplete input":                                       text2sql.KindSyntax,
		"interrupted":                                            text2sql.KindTimeout,
		"canceling statement due to statement timeout":           text2sql.KindTimeout,
		"string or blob too big":                                 text2sql.KindTooLarge,
		"attempt to write a readonly database":                   text2sql.KindNotReadOnly,
		"cannot execute INSERT in a read-only transaction":       text2sql.KindNotReadOnly,
		"not authorized":                                         text2sql.KindForbiddenStatement,
		"Error 1142 (42000): SELECT command denied to user 'u'@'h' for table `d`.`a`": text2sql.KindForbiddenStatement,
		"integer overflow": text2sql.KindRuntime,
	}
	for msg, kind := range cases {
		assert.Equal(t, kind, lint.Classify(msg), "Classify(%q)", msg)
	}
	names := map[string]string{
		"no such table: main.topic":                                "main.topic",
		"no such column: ck.cell_name":                             "ck.cell_name",
		`relation "orders" does not exist`:                         "orders",
		"Error 1146 (42S02): Table 'shop.topic' doesn't exist":     "topic",
		"Error 1054 (42S22): Unknown column 'x.y' in 'field list'": "x.y",
		"syntax error": "",
	}
	for msg, want := range names {
		assert.Equal(t, want, lint.UnknownName(msg), "UnknownName(%q)", msg)
	}
}

func TestSuggest(t *testing.T) {
	db := &schema.Database{Tables: []*schema.Table{
		{Name: "topics", Columns: []schema.Column{{Name: "id"}, {Name: "name"}}},
		{Schema: "sales", Name: "orders", Columns: []schema.Column{{Name: "id"}}},
	}}
	cases := []struct {
		kind        text2sql.ErrorKind
		name, query string
		want        string
	}{
		{text2sql.KindUnknownTable, "topic", "SELECT * FROM topic", `did you mean "topics"?`},
		{text2sql.KindUnknownTable, "orders", "SELECT count(*) FROM orders", `did you mean "sales.orders"?`},
		{text2sql.KindUnknownTable, "xyz", "SELECT * FROM xyz", ""},
		{text2sql.KindUnknownColumn, "t.nam", "SELECT t.nam FROM topics t", `did you mean "name" (table topics)?`},
		{text2sql.KindUnknownColumn, "zzz", "SELECT zzz FROM topics", ""},
		{text2sql.KindUnknownColumn, "name", "SELECT name FROM sales.orders", `column "name" is in table topics`},
		{text2sql.KindSyntax, "topic", "", ""},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, lint.Suggest(db, c.kind, c.name, c.query), "Suggest(%s, %q)", c.kind, c.name)
	}
	assert.Empty(t, lint.Suggest(nil, text2sql.KindUnknownTable, "x", ""), "nil schema")
}

func TestEngineError(t *testing.T) {
	db := &schema.Database{Tables: []*schema.Table{{Name: "singer", Columns: []schema.Column{{Name: "name"}}}}}
	se := lint.EngineError("", "no such table: singr", db, "SELECT name FROM singr")
	assert.Equal(t, text2sql.KindUnknownTable, se.Kind)
	assert.Equal(t, "no such table: singr", se.Message)
	assert.Equal(t, `did you mean "singer"?`, se.Hint)
	se = lint.EngineError("", "no such table: singr", nil, "SELECT name FROM singr")
	assert.Equal(t, text2sql.KindUnknownTable, se.Kind)
	assert.Empty(t, se.Hint, "no schema, no hint")
	se = lint.EngineError("", "integer overflow", db, "SELECT 1")
	assert.Equal(t, text2sql.KindRuntime, se.Kind)
	assert.Empty(t, se.Hint)
}

func TestColumnElsewhere(t *testing.T) {
	a := &schema.Table{Name: "a", Columns: []schema.Column{{Name: "x"}}}
	b := &schema.Table{Schema: "s", Name: "b", Columns: []schema.Column{{Name: "x"}}}
	c := &schema.Table{Name: "c", Columns: []schema.Column{{Name: "y"}}}
	d := &schema.Table{Name: "d", Columns: []schema.Column{{Name: "x"}}}
	e := &schema.Table{Name: "e", Columns: []schema.Column{{Name: "x"}}}
	db := &schema.Database{Tables: []*schema.Table{a, b, c, d, e, nil}}
	assert.Equal(t, `column "x" is in table a, s.b, d`, lint.ColumnElsewhere(db, "x", nil, nil))
	assert.Equal(t, `column "x" is in table e, s.b, d`, lint.ColumnElsewhere(db, "x", []*schema.Table{e, c}, a), "read first, except skipped")
	assert.Empty(t, lint.ColumnElsewhere(db, "y", nil, c), "only in except")
	assert.Empty(t, lint.ColumnElsewhere(db, "z", nil, nil))
	assert.Empty(t, lint.ColumnElsewhere(nil, "x", []*schema.Table{a}, nil), "nil db")
}

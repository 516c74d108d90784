package schema

import (
	"testing"

	text2sql "github.com/text2sql-go/text2sql"

	"github.com/stretchr/testify/assert"
)

func TestQuote(t *testing.T) {
	cases := []struct {
		d    text2sql.Dialect
		in   string
		want string
	}{
		{text2sql.DialectSQLite, "singer", "singer"},
		{text2sql.DialectSQLite, "song_name2", "song_name2"},
		{text2sql.DialectSQLite, "order", `"order"`},
		{text2sql.DialectSQLite, "Line Items", `"Line Items"`},
		{text2sql.DialectSQLite, "FirstName", `"FirstName"`},
		{text2sql.DialectPostgres, "FirstName", `"FirstName"`},
		{text2sql.DialectSQLite, `we"ird`, `"we""ird"`},
		{text2sql.DialectSQLite, "1st", `"1st"`},
		{text2sql.DialectSQLite, "", `""`},
		{text2sql.DialectSQLite, "größe", `"größe"`},
		{text2sql.DialectMySQL, "order", "`order`"},
		{text2sql.DialectMySQL, "a`b", "`a``b`"},
		{text2sql.DialectMySQL, "plain", "plain"},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, Quote(c.d, c.in), "Quote(%s, %q)", c.d, c.in)
	}
	tb := &Table{Schema: "Sales", Name: "line items"}
	assert.Equal(t, `"Sales"."line items"`, QuoteTable(text2sql.DialectPostgres, tb), "QuoteTable")
	assert.Equal(t, "orders", QuoteTable(text2sql.DialectPostgres, &Table{Name: "orders"}), "QuoteTable")
	assert.Equal(t, "Sales.line items", tb.QualifiedName(), "QualifiedName")
}

func TestDDL(t *testing.T) {
	db := &Database{Name: "shop", Dialect: text2sql.DialectPostgres, Tables: []*Table{
		{Schema: "public", Name: "customers", Kind: KindTable, Comment: "people who\nbuy",
			Columns:    []Column{{Name: "id", Type: "integer", NotNull: true}, {Name: "FullName", Type: "text", Comment: "as printed"}},
			PrimaryKey: []string{"id"}},
		{Schema: "sales", Name: "order", Kind: KindTable,
			Columns:    []Column{{Name: "id", Type: "integer"}, {Name: "customer_id", Type: "integer", Comment: "who"}},
			PrimaryKey: []string{"id"},
			ForeignKeys: []ForeignKey{
				{Columns: []string{"customer_id"}, RefSchema: "public", RefTable: "customers", RefColumns: []string{"id"}},
			}},
		{Name: "big_orders", Kind: KindView, Columns: []Column{{Name: "id"}}},
	}}
	got := db.DDL(db.Tables)
	want := `-- people who buy
CREATE TABLE public.customers (
  id integer NOT NULL,
  "FullName" text, -- as printed
  PRIMARY KEY (id)
);

CREATE TABLE sales."order" (
  id integer,
  customer_id integer, -- who
  PRIMARY KEY (id),
  FOREIGN KEY (customer_id) REFERENCES public.customers (id)
);

-- view
CREATE VIEW big_orders (
  id
);
`
	assert.Equal(t, want, got, "DDL")
	assert.Empty(t, db.DDL(nil), "DDL(nil)")
}

func TestLookup(t *testing.T) {
	db := &Database{Tables: []*Table{
		{Schema: "public", Name: "orders"},
		{Schema: "sales", Name: "orders"},
		{Schema: "sales", Name: "Line Items"},
		{Name: "Singer", Columns: []Column{{Name: "Name"}, {Name: "name"}, {Name: "Age"}}},
	}}
	cases := []struct {
		in   string
		want *Table
	}{
		{"Singer", db.Tables[3]},
		{"singer", db.Tables[3]},
		{"sales.orders", db.Tables[1]},
		{"SALES.ORDERS", db.Tables[1]},
		{"orders", nil}, // two schemas have it: ambiguous
		{"line items", db.Tables[2]},
		{"nope", nil},
		{"public.nope", nil},
	}
	ix := db.Index()
	for _, c := range cases {
		assert.Same(t, c.want, db.Lookup(c.in), "Lookup(%q)", c.in)
		assert.Same(t, c.want, ix.Lookup(c.in), "Index().Lookup(%q)", c.in)
	}
	s := db.Tables[3]
	assert.Same(t, &s.Columns[1], s.Column("name"), "Column(name) should prefer the exact match")
	if c := s.Column("AGE"); assert.NotNil(t, c, "Column(AGE)") {
		assert.Equal(t, "Age", c.Name, "Column(AGE) = %v", c)
	}
	assert.Nil(t, s.Column("x"), "Column(x)")
}

package schema

import (
	"testing"

	text2sql "github.com/text2sql-go/text2sql"
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
		if got := Quote(c.d, c.in); got != c.want {
			t.Errorf("Quote(%s, %q) = %s, want %s", c.d, c.in, got, c.want)
		}
	}
	tb := &Table{Schema: "Sales", Name: "line items"}
	if got := QuoteTable(text2sql.DialectPostgres, tb); got != `"Sales"."line items"` {
		t.Errorf("QuoteTable = %s", got)
	}
	if got := QuoteTable(text2sql.DialectPostgres, &Table{Name: "orders"}); got != "orders" {
		t.Errorf("QuoteTable = %s", got)
	}
	if got := tb.QualifiedName(); got != "Sales.line items" {
		t.Errorf("QualifiedName = %s", got)
	}
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
	if got != want {
		t.Errorf("DDL =\n%s\nwant\n%s", got, want)
	}
	if got := db.DDL(nil); got != "" {
		t.Errorf("DDL(nil) = %q", got)
	}
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
	for _, c := range cases {
		if got := db.Lookup(c.in); got != c.want {
			t.Errorf("Lookup(%q) = %v, want %v", c.in, got, c.want)
		}
	}
	s := db.Tables[3]
	if c := s.Column("name"); c == nil || c != &s.Columns[1] {
		t.Errorf("Column(name) should prefer the exact match")
	}
	if c := s.Column("AGE"); c == nil || c.Name != "Age" {
		t.Errorf("Column(AGE) = %v", c)
	}
	if c := s.Column("x"); c != nil {
		t.Errorf("Column(x) = %v", c)
	}
}

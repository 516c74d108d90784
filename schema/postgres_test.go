package schema_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/dbtest"
	"github.com/text2sql-go/text2sql/schema"
)

const pgFixture = `
CREATE SCHEMA sales;
CREATE SCHEMA "Reporting";
CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
CREATE TYPE sales.stage AS ENUM ('new', 'won''t', 'done');
CREATE TABLE public.customers (
	id integer PRIMARY KEY,
	"FullName" varchar(80) NOT NULL,
	tags text[],
	feeling mood,
	moods mood[],
	balance numeric(10,2)
);
COMMENT ON TABLE public.customers IS 'People who buy';
COMMENT ON COLUMN public.customers."FullName" IS 'as printed on invoices';
COMMENT ON COLUMN public.customers.feeling IS 'last survey';
CREATE TABLE sales."order" (
	id bigint,
	line int,
	customer_id int REFERENCES public.customers (id),
	stage sales.stage,
	placed timestamptz,
	PRIMARY KEY (line, id)
);
CREATE TABLE sales."Line Items" (
	order_id bigint,
	order_line int,
	"select" text,
	FOREIGN KEY (order_line, order_id) REFERENCES sales."order" (line, id)
);
CREATE TABLE "Reporting"."Riskitems" ("ItemID" int PRIMARY KEY, score double precision);
COMMENT ON TABLE "Reporting"."Riskitems" IS 'risk
register';
CREATE VIEW sales.big_orders AS SELECT o.id, c."FullName" AS who FROM sales."order" o JOIN public.customers c ON c.id = o.customer_id;
COMMENT ON VIEW sales.big_orders IS 'orders over 100';
CREATE MATERIALIZED VIEW "Reporting".summary AS SELECT count(*) AS n FROM public.customers;
CREATE TABLE public.events (id int, at date) PARTITION BY RANGE (at);
CREATE TABLE public.events_2024 PARTITION OF public.events FOR VALUES FROM ('2024-01-01') TO ('2025-01-01');
CREATE TABLE public.dropped (a int, b int, c int);
ALTER TABLE public.dropped DROP COLUMN b;
`

// Introspection covers non-public schemas, a view and a materialized
// view, mixed-case and reserved-word names, comments, enums and arrays,
// composite and cross-schema keys; partitions are left out.
func TestInspectPostgres(t *testing.T) {
	db, _ := dbtest.Postgres(t)
	dbtest.Exec(t, db, strings.Split(pgFixture, ";\n")...)
	got, err := schema.InspectPostgres(context.Background(), db, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.Dialect != text2sql.DialectPostgres || !strings.HasPrefix(got.Name, "text2sql_test_") {
		t.Errorf("name %q dialect %q", got.Name, got.Dialect)
	}
	var names []string
	for _, tb := range got.Tables {
		names = append(names, tb.QualifiedName()+":"+string(tb.Kind))
	}
	want := []string{"Reporting.Riskitems:table", "Reporting.summary:materialized view", "public.customers:table",
		"public.dropped:table", "public.events:table", "sales.big_orders:view", "sales.Line Items:table", "sales.order:table"}
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("tables\n%q\nwant\n%q", names, want)
	}
	c := got.Lookup("public.customers")
	wantCols := []schema.Column{
		{Name: "id", Type: "integer", NotNull: true},
		{Name: "FullName", Type: "character varying(80)", NotNull: true, Comment: "as printed on invoices"},
		{Name: "tags", Type: "text[]"},
		{Name: "feeling", Type: "mood", Comment: "last survey; enum mood: 'sad', 'ok', 'happy'"},
		{Name: "moods", Type: "mood[]", Comment: "enum mood: 'sad', 'ok', 'happy'"},
		{Name: "balance", Type: "numeric(10,2)"},
	}
	if !reflect.DeepEqual(c.Columns, wantCols) || c.Comment != "People who buy" || !reflect.DeepEqual(c.PrimaryKey, []string{"id"}) {
		t.Errorf("customers = %+v", c)
	}
	o := got.Lookup("sales.order")
	if !reflect.DeepEqual(o.PrimaryKey, []string{"line", "id"}) {
		t.Errorf("order PK %q", o.PrimaryKey)
	}
	if st := o.Column("stage"); st == nil || st.Type != "sales.stage" || st.Comment != `enum stage: 'new', 'won''t', 'done'` {
		t.Errorf("stage %+v", st)
	}
	if !reflect.DeepEqual(o.ForeignKeys, []schema.ForeignKey{{Columns: []string{"customer_id"}, RefSchema: "public", RefTable: "customers", RefColumns: []string{"id"}}}) {
		t.Errorf("order FKs %+v", o.ForeignKeys)
	}
	li := got.Lookup("sales.Line Items")
	if !reflect.DeepEqual(li.ForeignKeys, []schema.ForeignKey{{Columns: []string{"order_line", "order_id"}, RefSchema: "sales", RefTable: "order", RefColumns: []string{"line", "id"}}}) {
		t.Errorf("line items FKs %+v", li.ForeignKeys)
	}
	v := got.Lookup("sales.big_orders")
	if v.Kind != schema.KindView || v.Comment != "orders over 100" || len(v.Columns) != 2 || v.Columns[1].Name != "who" {
		t.Errorf("view %+v", v)
	}
	if d := got.Lookup("public.dropped"); len(d.Columns) != 2 || d.Columns[1].Name != "c" {
		t.Errorf("dropped column shown: %+v", d.Columns)
	}
	ddl := got.DDL([]*schema.Table{got.Lookup("Reporting.Riskitems"), li, o, v})
	wantDDL := `-- risk register
CREATE TABLE "Reporting"."Riskitems" (
  "ItemID" integer NOT NULL,
  score double precision,
  PRIMARY KEY ("ItemID")
);

CREATE TABLE sales."Line Items" (
  order_id bigint,
  order_line integer,
  "select" text,
  FOREIGN KEY (order_line, order_id) REFERENCES "order" (line, id)
);

CREATE TABLE sales."order" (
  id bigint NOT NULL,
  line integer NOT NULL,
  customer_id integer,
  stage sales.stage, -- enum stage: 'new', 'won''t', 'done'
  placed timestamp with time zone,
  PRIMARY KEY (line, id),
  FOREIGN KEY (customer_id) REFERENCES public.customers (id)
);

-- orders over 100
-- view
CREATE VIEW sales.big_orders (
  id bigint,
  who character varying(80)
);
`
	if ddl != wantDDL {
		t.Errorf("DDL =\n%s\nwant\n%s", ddl, wantDDL)
	}

	// Only the configured schemas.
	only, err := schema.InspectPostgres(context.Background(), db, []string{"Reporting"})
	if err != nil {
		t.Fatal(err)
	}
	if len(only.Tables) != 2 || only.Tables[0].Name != "Riskitems" || only.Tables[1].Kind != schema.KindMaterializedView {
		t.Errorf("Reporting only: %+v", only.Tables)
	}
	none, err := schema.InspectPostgres(context.Background(), db, []string{"no_such_schema"})
	if err != nil || len(none.Tables) != 0 {
		t.Errorf("missing schema: %+v %v", none, err)
	}
}

package schema_test

import (
	"context"
	"strings"
	"testing"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/dbtest"
	"github.com/text2sql-go/text2sql/schema"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
	require.NoError(t, err)
	assert.Equal(t, text2sql.DialectPostgres, got.Dialect)
	assert.True(t, strings.HasPrefix(got.Name, "text2sql_test_"), "name %q", got.Name)
	var names []string
	for _, tb := range got.Tables {
		names = append(names, tb.QualifiedName()+":"+string(tb.Kind))
	}
	want := []string{"Reporting.Riskitems:table", "Reporting.summary:materialized view", "public.customers:table",
		"public.dropped:table", "public.events:table", "sales.big_orders:view", "sales.Line Items:table", "sales.order:table"}
	require.Equal(t, want, names, "tables")
	c := got.Lookup("public.customers")
	wantCols := []schema.Column{
		{Name: "id", Type: "integer", NotNull: true},
		{Name: "FullName", Type: "character varying(80)", NotNull: true, Comment: "as printed on invoices"},
		{Name: "tags", Type: "text[]"},
		{Name: "feeling", Type: "mood", Comment: "last survey; enum mood: 'sad', 'ok', 'happy'"},
		{Name: "moods", Type: "mood[]", Comment: "enum mood: 'sad', 'ok', 'happy'"},
		{Name: "balance", Type: "numeric(10,2)"},
	}
	assert.Equal(t, wantCols, c.Columns, "customers columns")
	assert.Equal(t, "People who buy", c.Comment, "customers comment")
	assert.Equal(t, []string{"id"}, c.PrimaryKey, "customers primary key")
	o := got.Lookup("sales.order")
	assert.Equal(t, []string{"line", "id"}, o.PrimaryKey, "order PK")
	if st := o.Column("stage"); assert.NotNil(t, st, "stage") {
		assert.Equal(t, "sales.stage", st.Type, "stage %+v", st)
		assert.Equal(t, `enum stage: 'new', 'won''t', 'done'`, st.Comment, "stage %+v", st)
	}
	assert.Equal(t, []schema.ForeignKey{{Columns: []string{"customer_id"}, RefSchema: "public", RefTable: "customers", RefColumns: []string{"id"}}}, o.ForeignKeys, "order FKs")
	li := got.Lookup("sales.Line Items")
	assert.Equal(t, []schema.ForeignKey{{Columns: []string{"order_line", "order_id"}, RefSchema: "sales", RefTable: "order", RefColumns: []string{"line", "id"}}}, li.ForeignKeys, "line items FKs")
	v := got.Lookup("sales.big_orders")
	assert.Equal(t, schema.KindView, v.Kind, "view %+v", v)
	assert.Equal(t, "orders over 100", v.Comment, "view %+v", v)
	if assert.Len(t, v.Columns, 2, "view %+v", v) {
		assert.Equal(t, "who", v.Columns[1].Name, "view %+v", v)
	}
	if d := got.Lookup("public.dropped"); assert.Len(t, d.Columns, 2, "dropped column shown: %+v", d.Columns) {
		assert.Equal(t, "c", d.Columns[1].Name, "dropped column shown: %+v", d.Columns)
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
	assert.Equal(t, wantDDL, ddl, "DDL")

	// Only the configured schemas.
	only, err := schema.InspectPostgres(context.Background(), db, []string{"Reporting"})
	require.NoError(t, err)
	if assert.Len(t, only.Tables, 2, "Reporting only: %+v", only.Tables) {
		assert.Equal(t, "Riskitems", only.Tables[0].Name, "Reporting only: %+v", only.Tables)
		assert.Equal(t, schema.KindMaterializedView, only.Tables[1].Kind, "Reporting only: %+v", only.Tables)
	}
	none, err := schema.InspectPostgres(context.Background(), db, []string{"no_such_schema"})
	if assert.NoError(t, err, "missing schema") {
		assert.Empty(t, none.Tables, "missing schema")
	}
}

// Introspection of MariaDB/MySQL: tables and views, full column types
// (enum labels included), NOT NULL, comments, composite primary and
// foreign keys, reserved-word and mixed-case names.
func TestInspectMySQL(t *testing.T) {
	db, _ := dbtest.MySQL(t)
	dbtest.Exec(t, db,
		"CREATE TABLE Customers (CustomerID INT NOT NULL, Region CHAR(2) NOT NULL, `Full Name` VARCHAR(80) COMMENT 'as printed', mood ENUM('sad','ok'), PRIMARY KEY (Region, CustomerID)) COMMENT 'people who buy'",
		"CREATE TABLE `order` (id BIGINT PRIMARY KEY, region CHAR(2), customer INT, total DECIMAL(10,2), FOREIGN KEY (region, customer) REFERENCES Customers (Region, CustomerID))",
		"CREATE VIEW big_orders AS SELECT id, total FROM `order` WHERE total > 100",
	)
	got, err := schema.InspectMySQL(context.Background(), db)
	require.NoError(t, err)
	assert.Equal(t, text2sql.DialectMySQL, got.Dialect)
	assert.True(t, strings.HasPrefix(got.Name, "text2sql_test_"), "name %q", got.Name)
	var names []string
	for _, tb := range got.Tables {
		names = append(names, tb.Name+":"+string(tb.Kind)+":"+tb.Schema)
	}
	require.Equal(t, []string{"big_orders:view:", "Customers:table:", "order:table:"}, names, "tables")
	c := got.Lookup("Customers")
	wantCols := []schema.Column{
		{Name: "CustomerID", Type: "int(11)", NotNull: true},
		{Name: "Region", Type: "char(2)", NotNull: true},
		{Name: "Full Name", Type: "varchar(80)", Comment: "as printed"},
		{Name: "mood", Type: "enum('sad','ok')"},
	}
	assert.Equal(t, wantCols, c.Columns, "Customers columns")
	assert.Equal(t, "people who buy", c.Comment, "Customers comment")
	assert.Equal(t, []string{"Region", "CustomerID"}, c.PrimaryKey, "Customers primary key")
	o := got.Lookup("order")
	wantFK := []schema.ForeignKey{{Columns: []string{"region", "customer"}, RefTable: "Customers", RefColumns: []string{"Region", "CustomerID"}}}
	assert.Equal(t, wantFK, o.ForeignKeys, "order FKs")
	v := got.Lookup("big_orders")
	assert.Empty(t, v.Comment, "view %+v", v)
	assert.Len(t, v.Columns, 2, "view %+v", v)
	ddl := got.DDL([]*schema.Table{o})
	want := "CREATE TABLE `order` (\n  id bigint(20) NOT NULL,\n  region char(2),\n  customer int(11),\n  total decimal(10,2),\n  PRIMARY KEY (id),\n  FOREIGN KEY (region, customer) REFERENCES `Customers` (`Region`, `CustomerID`)\n);\n"
	assert.Equal(t, want, ddl, "DDL")
}

// The service's audit log, kept in the data's own database, is not part
// of the schema the model sees.
func TestInspectPostgresLeavesOutAuditLog(t *testing.T) {
	db, _ := dbtest.Postgres(t)
	dbtest.Exec(t, db, `CREATE TABLE courses (id int)`, `CREATE TABLE `+schema.AuditTable+` (id bigint, sql text)`)
	got, err := schema.InspectPostgres(context.Background(), db, nil)
	require.NoError(t, err)
	require.Len(t, got.Tables, 1)
	assert.Equal(t, "courses", got.Tables[0].Name)
}

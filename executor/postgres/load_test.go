package postgres

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/schema"
)

const trickySQLite = `
CREATE TABLE "Customers" ("CustomerID" INTEGER PRIMARY KEY, "FirstName" TEXT NOT NULL, Name TEXT, age INT, score REAL, price DECIMAL(10,2), pic BLOB, born DATE, flag BOOL, untyped);
INSERT INTO "Customers" VALUES (1, 'Ada', 'A', 36, 1.5, 12.5, x'0102', '1815-12-10', 1, NULL);
INSERT INTO "Customers" VALUES (2, 'Grace', 'G', 'unknown', 2, 7, x'03', '1906-12-09', 0, NULL);
INSERT INTO "Customers" VALUES (3, 'Nul' || char(0) || 'byte', NULL, NULL, NULL, 3, NULL, NULL, NULL, NULL);
CREATE TABLE "order" (id INTEGER, "Customer" INTEGER REFERENCES "Customers", total NUMERIC, PRIMARY KEY (id));
INSERT INTO "order" VALUES (1, 1, 10), (2, 2, 20.5), (3, 9, 1);
CREATE TABLE "Line Items" ("order" INTEGER, line INTEGER, note, PRIMARY KEY ("order", line), FOREIGN KEY ("order") REFERENCES "order" (id));
INSERT INTO "Line Items" VALUES (1, 1, 'x'), (NULL, 2, 'dup');
CREATE TABLE empty (a INT, b VARCHAR(10), c DOUBLE, d NUMERIC(5,1), e BLOB);
CREATE VIEW big_orders AS SELECT id, total FROM "order" WHERE total > 5;
CREATE VIEW broken AS SELECT strftime('%Y', 'now') AS y;
`

func sqliteFile(t *testing.T, script string) *sql.DB {
	t.Helper()
	path := filepath.Join(t.TempDir(), "src.sqlite")
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(script); err != nil {
		t.Fatal(err)
	}
	db.Close()
	return openSQLite(t, path)
}

// CopySQLite chooses types from the values, keeps names exactly (or folds
// them), adds the keys the data allows, creates the views PostgreSQL
// accepts, and notes the rest.
func TestCopySQLite(t *testing.T) {
	src := sqliteFile(t, trickySQLite)
	db, _ := testDB(t)
	ctx := context.Background()
	rep, err := CopySQLite(ctx, src, db, "Exact", CopyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	types := map[string]string{}
	mixed := map[string]bool{}
	for _, tb := range rep.Tables {
		for _, c := range tb.Columns {
			types[tb.Name+"."+c.Name] = c.Type
			mixed[tb.Name+"."+c.Name] = c.Mixed
		}
	}
	want := map[string]string{
		"Customers.CustomerID": "bigint", "Customers.FirstName": "text", "Customers.Name": "text",
		"Customers.age": "text", "Customers.score": "double precision", "Customers.price": "numeric", "Customers.pic": "bytea",
		"Customers.born": "text", "Customers.flag": "bigint", "Customers.untyped": "text",
		"order.id": "bigint", "order.Customer": "bigint", "order.total": "numeric",
		"Line Items.order": "bigint", "Line Items.line": "bigint", "Line Items.note": "text",
		"empty.a": "bigint", "empty.b": "text", "empty.c": "double precision", "empty.d": "numeric", "empty.e": "bytea",
		"big_orders.id": "", "big_orders.total": "", "broken.y": "",
	}
	for k, v := range want {
		if types[k] != v {
			t.Errorf("%s: %s, want %s", k, types[k], v)
		}
	}
	if !mixed["Customers.age"] || mixed["Customers.score"] {
		t.Errorf("mixed flags %v", mixed)
	}
	for _, tb := range rep.Tables {
		if tb.Name == "Customers" && tb.Rows != 3 || tb.Name == "order" && tb.Rows != 3 || tb.Kind == schema.KindView && tb.Rows != 0 {
			t.Errorf("%s: %d rows", tb.Name, tb.Rows)
		}
	}
	notes := strings.Join(rep.Notes, "\n")
	for _, n := range []string{"Line Items: primary key", "order: foreign key (Customer) to Customers kept NOT VALID",
		"view broken not created", "Customers: 1 text values lost NUL bytes"} {
		if !strings.Contains(notes, n) {
			t.Errorf("no note %q in\n%s", n, notes)
		}
	}
	sch, err := schema.InspectPostgres(ctx, db, []string{"Exact"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tb := range sch.Tables {
		names = append(names, tb.Name)
	}
	if !reflect.DeepEqual(names, []string{"big_orders", "Customers", "empty", "Line Items", "order"}) {
		t.Errorf("tables %q", names)
	}
	c := sch.Lookup("Exact.Customers")
	if !reflect.DeepEqual(c.PrimaryKey, []string{"CustomerID"}) || c.Column("FirstName") == nil || !c.Column("FirstName").NotNull {
		t.Errorf("Customers %+v", c)
	}
	o := sch.Lookup("Exact.order")
	if len(o.ForeignKeys) != 1 || o.ForeignKeys[0].RefTable != "Customers" {
		t.Errorf("order FKs %+v", o.ForeignKeys)
	}
	e := newExec(t, db, Options{SearchPath: []string{"Exact"}})
	res := run(t, e, `SELECT "FirstName", "Name", age, score, price, pic, born, flag FROM "Customers" ORDER BY "CustomerID"`)
	wantRows := [][]any{
		{"Ada", "A", "36", 1.5, 12.5, []byte{1, 2}, "1815-12-10", int64(1)},
		{"Grace", "G", "unknown", 2.0, int64(7), []byte{3}, "1906-12-09", int64(0)},
		{"Nulbyte", nil, nil, nil, int64(3), nil, nil, nil},
	}
	if res.Error != nil || !reflect.DeepEqual(res.Rows, wantRows) {
		t.Errorf("rows %#v %v", res.Rows, res.Error)
	}
	res = run(t, e, `SELECT count(*) FROM big_orders`)
	if res.Error != nil || res.Rows[0][0] != int64(2) {
		t.Errorf("view %+v", res)
	}

	// Folded names: the plain ones in lower case, the rest exact.
	_, err = CopySQLite(ctx, src, db, "folded", CopyOptions{FoldNames: true})
	if err != nil {
		t.Fatal(err)
	}
	f := newExec(t, db, Options{SearchPath: []string{"folded"}})
	res = run(t, f, `SELECT FirstName, Name, "Line Items".note FROM Customers, "Line Items" WHERE CustomerID = 1 ORDER BY 3`)
	if res.Error != nil || !reflect.DeepEqual(res.Rows, [][]any{{"Ada", "A", "dup"}, {"Ada", "A", "x"}}) {
		t.Errorf("folded: %+v", res)
	}
	res = run(t, f, `SELECT count(*) FROM "Line Items"`)
	if res.Error != nil || res.Rows[0][0] != int64(2) {
		t.Errorf("folded: %+v", res)
	}

	// An existing schema needs Replace; Replace starts afresh.
	if _, err := CopySQLite(ctx, src, db, "folded", CopyOptions{}); !errors.Is(err, text2sql.ErrInvalidConfig) {
		t.Errorf("existing schema: %v", err)
	}
	if _, err := CopySQLite(ctx, src, db, "folded", CopyOptions{Replace: true, FoldNames: true}); err != nil {
		t.Errorf("replace: %v", err)
	}
	if _, err := CopySQLite(ctx, src, db, "", CopyOptions{}); !errors.Is(err, text2sql.ErrInvalidConfig) {
		t.Errorf("empty schema name: %v", err)
	}
	// A failed copy leaves nothing behind.
	if _, err := CopySQLite(ctx, src, src, "x", CopyOptions{}); !errors.Is(err, text2sql.ErrInvalidConfig) {
		t.Errorf("sqlite destination: %v", err)
	}
}

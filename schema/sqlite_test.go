package schema_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	_ "github.com/mattn/go-sqlite3"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/shareddata"
	"github.com/text2sql-go/text2sql/schema"
)

func openDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestInspectSQLiteSpider(t *testing.T) {
	path := shareddata.Path(t, "spider", "database", "concert_singer", "concert_singer.sqlite")
	db := openDB(t, "file:"+path+"?mode=ro")
	got, err := schema.InspectSQLite(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "concert_singer" || got.Dialect != text2sql.DialectSQLite {
		t.Errorf("name %q dialect %q", got.Name, got.Dialect)
	}
	var names []string
	for _, tb := range got.Tables {
		names = append(names, tb.Name)
	}
	if want := []string{"concert", "singer", "singer_in_concert", "stadium"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("tables %q, want %q", names, want)
	}
	singer := got.Lookup("singer")
	wantCols := []schema.Column{
		{Name: "Singer_ID", Type: "INT"}, {Name: "Name", Type: "TEXT"}, {Name: "Country", Type: "TEXT"},
		{Name: "Song_Name", Type: "TEXT"}, {Name: "Song_release_year", Type: "TEXT"}, {Name: "Age", Type: "INT"},
		{Name: "Is_male", Type: "BOOL"},
	}
	if !reflect.DeepEqual(singer.Columns, wantCols) || !reflect.DeepEqual(singer.PrimaryKey, []string{"Singer_ID"}) {
		t.Errorf("singer = %+v", singer)
	}
	sic := got.Lookup("singer_in_concert")
	if !reflect.DeepEqual(sic.PrimaryKey, []string{"concert_ID", "Singer_ID"}) {
		t.Errorf("singer_in_concert PK = %q", sic.PrimaryKey)
	}
	wantFK := []schema.ForeignKey{
		{Columns: []string{"concert_ID"}, RefTable: "concert", RefColumns: []string{"concert_ID"}},
		{Columns: []string{"Singer_ID"}, RefTable: "singer", RefColumns: []string{"Singer_ID"}},
	}
	if !reflect.DeepEqual(sic.ForeignKeys, wantFK) {
		t.Errorf("singer_in_concert FKs = %+v, want %+v", sic.ForeignKeys, wantFK)
	}
	ddl := got.DDL([]*schema.Table{sic})
	want := `CREATE TABLE singer_in_concert (
  "concert_ID" INT,
  "Singer_ID" TEXT,
  PRIMARY KEY ("concert_ID", "Singer_ID"),
  FOREIGN KEY ("concert_ID") REFERENCES concert ("concert_ID"),
  FOREIGN KEY ("Singer_ID") REFERENCES singer ("Singer_ID")
);
`
	if ddl != want {
		t.Errorf("DDL =\n%s\nwant\n%s", ddl, want)
	}
}

// Every Spider database inspects cleanly and its foreign keys resolve to
// real columns.
func TestInspectSQLiteAllSpider(t *testing.T) {
	dir := shareddata.Path(t, "spider", "database")
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		path := filepath.Join(dir, e.Name(), e.Name()+".sqlite")
		if _, err := os.Stat(path); err != nil {
			continue
		}
		n++
		got, err := schema.InspectSQLite(context.Background(), openDB(t, "file:"+path+"?mode=ro"))
		if err != nil {
			t.Errorf("%s: %v", e.Name(), err)
			continue
		}
		if len(got.Tables) == 0 {
			t.Errorf("%s: no tables", e.Name())
		}
		for _, tb := range got.Tables {
			if len(tb.Columns) == 0 {
				t.Errorf("%s.%s: no columns", e.Name(), tb.Name)
			}
			for _, fk := range tb.ForeignKeys {
				ref := got.Lookup(fk.RefTable)
				if ref == nil {
					continue // Spider has a few keys to tables that do not exist
				}
				for _, c := range fk.RefColumns {
					if ref.Column(c) == nil {
						t.Errorf("%s.%s: FK to %s(%s): no such column", e.Name(), tb.Name, fk.RefTable, c)
					}
				}
			}
		}
	}
	if n < 19 {
		t.Errorf("inspected %d Spider databases, want 19", n)
	}
}

const tricky = `
CREATE TABLE "Customers" ("CustomerID" INTEGER PRIMARY KEY, "FirstName" TEXT NOT NULL, email);
CREATE TABLE "order" (id INTEGER NOT NULL, "Customer" INTEGER REFERENCES Customers, placed DATETIME,
	PRIMARY KEY (id));
CREATE TABLE "Line Items" ("order" INTEGER, line INTEGER, "unit price" NUMERIC(10,2), qty INT DEFAULT 1,
	PRIMARY KEY (line, "order"),
	FOREIGN KEY ("order") REFERENCES "order" (id));
CREATE TABLE "we""ird" (x);
CREATE TABLE s(id INTEGER, amt REAL);
CREATE VIEW v_big AS SELECT id FROM s WHERE amt > 100;
CREATE VIEW "Big Orders" AS SELECT o.id, c."FirstName" AS who FROM "order" o JOIN "Customers" c ON c."CustomerID" = o."Customer";
`

func TestInspectSQLiteTricky(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tricky.db")
	db := openDB(t, path)
	if _, err := db.Exec(tricky); err != nil {
		t.Fatal(err)
	}
	got, err := schema.InspectSQLite(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tb := range got.Tables {
		names = append(names, tb.Name+":"+string(tb.Kind))
	}
	want := []string{"Big Orders:view", "Customers:table", "Line Items:table", "order:table", "s:table", "v_big:view", `we"ird:table`}
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("tables %q, want %q", names, want)
	}
	// C3 #21: views are introspected with their columns.
	if v := got.Lookup("v_big"); !reflect.DeepEqual(v.Columns, []schema.Column{{Name: "id", Type: "INTEGER"}}) {
		t.Errorf("v_big columns = %+v", v.Columns)
	}
	if v := got.Lookup("big orders"); len(v.Columns) != 2 || v.Columns[1].Name != "who" || len(v.PrimaryKey) != 0 {
		t.Errorf("Big Orders = %+v", v)
	}
	li := got.Lookup("Line Items")
	if !reflect.DeepEqual(li.PrimaryKey, []string{"line", "order"}) {
		t.Errorf("Line Items PK = %q (want key order)", li.PrimaryKey)
	}
	// An FK without a column list refers to the primary key.
	ord := got.Lookup("order")
	if want := []schema.ForeignKey{{Columns: []string{"Customer"}, RefTable: "Customers", RefColumns: []string{"CustomerID"}}}; !reflect.DeepEqual(ord.ForeignKeys, want) {
		t.Errorf("order FKs = %+v", ord.ForeignKeys)
	}
	if c := got.Lookup("Customers").Column("email"); c == nil || c.Type != "" {
		t.Errorf("typeless column = %+v", c)
	}

	ddl := got.DDL(got.Tables)
	for _, frag := range []string{
		`CREATE TABLE "order" (`,
		`CREATE TABLE "Line Items" (`,
		`  "order" INTEGER,`,
		`  "unit price" NUMERIC(10,2),`,
		`  PRIMARY KEY (line, "order"),`,
		`  FOREIGN KEY ("order") REFERENCES "order" (id)`,
		`CREATE TABLE "Customers" (`,
		`  "FirstName" TEXT NOT NULL,`,
		`  email,`,
		`  FOREIGN KEY ("Customer") REFERENCES "Customers" ("CustomerID")`,
		`CREATE TABLE "we""ird" (`,
		"-- view\nCREATE VIEW v_big (\n  id INTEGER\n);",
		"-- view\nCREATE VIEW \"Big Orders\" (",
	} {
		if !strings.Contains(ddl, frag) {
			t.Errorf("DDL lacks %q:\n%s", frag, ddl)
		}
	}

	// Round trip: the tables' DDL runs in a fresh database and inspects to
	// the same model. (Views render as column lists for the prompt, not as
	// executable SQL.)
	var tables []*schema.Table
	for _, tb := range got.Tables {
		if tb.Kind == schema.KindTable {
			tables = append(tables, tb)
		}
	}
	fresh := openDB(t, filepath.Join(t.TempDir(), "fresh.db"))
	if _, err := fresh.Exec(got.DDL(tables)); err != nil {
		t.Fatalf("DDL does not execute: %v\n%s", err, got.DDL(tables))
	}
	again, err := schema.InspectSQLite(context.Background(), fresh)
	if err != nil {
		t.Fatal(err)
	}
	if again.Name != "fresh" {
		t.Errorf("name %q", again.Name)
	}
	if !reflect.DeepEqual(again.Tables, tables) {
		for i := range tables {
			if i < len(again.Tables) && !reflect.DeepEqual(again.Tables[i], tables[i]) {
				t.Errorf("round trip of %s:\n got %+v\nwant %+v", tables[i].Name, again.Tables[i], tables[i])
			}
		}
		t.Fatalf("round trip differs")
	}
}

// A view over a dropped table is kept, without columns, instead of
// failing the whole inspection.
func TestInspectSQLiteBrokenView(t *testing.T) {
	db := openDB(t, filepath.Join(t.TempDir(), "b.db"))
	if _, err := db.Exec(`CREATE TABLE a(x); CREATE VIEW va AS SELECT x FROM a; DROP TABLE a;`); err != nil {
		t.Fatal(err)
	}
	got, err := schema.InspectSQLite(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Tables) != 1 || got.Tables[0].Name != "va" || len(got.Tables[0].Columns) != 0 {
		t.Errorf("got %+v", got.Tables)
	}
}

package schema_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"

	_ "github.com/mattn/go-sqlite3"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/birdschema"
	"github.com/text2sql-go/text2sql/internal/shareddata"
	"github.com/text2sql-go/text2sql/schema"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func openDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite3", path)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	return db
}

func TestInspectSQLiteSpider(t *testing.T) {
	path := shareddata.Path(t, "spider", "database", "concert_singer", "concert_singer.sqlite")
	db := openDB(t, "file:"+path+"?mode=ro")
	got, err := schema.InspectSQLite(context.Background(), db)
	require.NoError(t, err)
	assert.Equal(t, "concert_singer", got.Name)
	assert.Equal(t, text2sql.DialectSQLite, got.Dialect)
	var names []string
	for _, tb := range got.Tables {
		names = append(names, tb.Name)
	}
	require.Equal(t, []string{"concert", "singer", "singer_in_concert", "stadium"}, names, "tables")
	singer := got.Lookup("singer")
	wantCols := []schema.Column{
		{Name: "Singer_ID", Type: "INT"}, {Name: "Name", Type: "TEXT"}, {Name: "Country", Type: "TEXT"},
		{Name: "Song_Name", Type: "TEXT"}, {Name: "Song_release_year", Type: "TEXT"}, {Name: "Age", Type: "INT"},
		{Name: "Is_male", Type: "BOOL"},
	}
	assert.Equal(t, wantCols, singer.Columns, "singer columns")
	assert.Equal(t, []string{"Singer_ID"}, singer.PrimaryKey, "singer primary key")
	sic := got.Lookup("singer_in_concert")
	assert.Equal(t, []string{"concert_ID", "Singer_ID"}, sic.PrimaryKey, "singer_in_concert PK")
	wantFK := []schema.ForeignKey{
		{Columns: []string{"concert_ID"}, RefTable: "concert", RefColumns: []string{"concert_ID"}},
		{Columns: []string{"Singer_ID"}, RefTable: "singer", RefColumns: []string{"Singer_ID"}},
	}
	assert.Equal(t, wantFK, sic.ForeignKeys, "singer_in_concert FKs")
	ddl := got.DDL([]*schema.Table{sic})
	want := `CREATE TABLE singer_in_concert (
  "concert_ID" INT,
  "Singer_ID" TEXT,
  PRIMARY KEY ("concert_ID", "Singer_ID"),
  FOREIGN KEY ("concert_ID") REFERENCES concert ("concert_ID"),
  FOREIGN KEY ("Singer_ID") REFERENCES singer ("Singer_ID")
);
`
	assert.Equal(t, want, ddl, "DDL")
}

// Every Spider database inspects cleanly and its foreign keys resolve to
// real columns.
func TestInspectSQLiteAllSpider(t *testing.T) {
	dir := shareddata.Path(t, "spider", "database")
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	n := 0
	for _, e := range ents {
		path := filepath.Join(dir, e.Name(), e.Name()+".sqlite")
		if _, err := os.Stat(path); err != nil {
			continue
		}
		n++
		got, err := schema.InspectSQLite(context.Background(), openDB(t, "file:"+path+"?mode=ro"))
		if !assert.NoError(t, err, e.Name()) {
			continue
		}
		assert.NotEmpty(t, got.Tables, "%s: no tables", e.Name())
		for _, tb := range got.Tables {
			assert.NotEmpty(t, tb.Columns, "%s.%s: no columns", e.Name(), tb.Name)
			for _, fk := range tb.ForeignKeys {
				ref := got.Lookup(fk.RefTable)
				if ref == nil {
					continue // Spider has a few keys to tables that do not exist
				}
				for _, c := range fk.RefColumns {
					assert.NotNil(t, ref.Column(c), "%s.%s: FK to %s(%s): no such column", e.Name(), tb.Name, fk.RefTable, c)
				}
			}
		}
	}
	assert.GreaterOrEqual(t, n, 19, "inspected Spider databases")
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
	_, err := db.Exec(tricky)
	require.NoError(t, err)
	got, err := schema.InspectSQLite(context.Background(), db)
	require.NoError(t, err)
	var names []string
	for _, tb := range got.Tables {
		names = append(names, tb.Name+":"+string(tb.Kind))
	}
	want := []string{"Big Orders:view", "Customers:table", "Line Items:table", "order:table", "s:table", "v_big:view", `we"ird:table`}
	require.Equal(t, want, names, "tables")
	// C3 #21: views are introspected with their columns.
	assert.Equal(t, []schema.Column{{Name: "id", Type: "INTEGER"}}, got.Lookup("v_big").Columns, "v_big columns")
	if v := got.Lookup("big orders"); assert.Len(t, v.Columns, 2, "Big Orders = %+v", v) {
		assert.Equal(t, "who", v.Columns[1].Name, "Big Orders = %+v", v)
		assert.Empty(t, v.PrimaryKey, "Big Orders = %+v", v)
	}
	li := got.Lookup("Line Items")
	assert.Equal(t, []string{"line", "order"}, li.PrimaryKey, "Line Items PK (want key order)")
	// An FK without a column list refers to the primary key.
	ord := got.Lookup("order")
	assert.Equal(t, []schema.ForeignKey{{Columns: []string{"Customer"}, RefTable: "Customers", RefColumns: []string{"CustomerID"}}}, ord.ForeignKeys, "order FKs")
	if c := got.Lookup("Customers").Column("email"); assert.NotNil(t, c, "typeless column") {
		assert.Empty(t, c.Type, "typeless column = %+v", c)
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
		assert.Contains(t, ddl, frag, "DDL lacks %q", frag)
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
	_, err = fresh.Exec(got.DDL(tables))
	require.NoError(t, err, "DDL does not execute:\n%s", got.DDL(tables))
	again, err := schema.InspectSQLite(context.Background(), fresh)
	require.NoError(t, err)
	assert.Equal(t, "fresh", again.Name, "name")
	if !assert.ObjectsAreEqual(tables, again.Tables) {
		for i := range tables {
			if i < len(again.Tables) {
				assert.Equal(t, tables[i], again.Tables[i], "round trip of %s", tables[i].Name)
			}
		}
		require.Equal(t, tables, again.Tables, "round trip differs")
	}
}

// A view over a dropped table is kept, without columns, instead of
// failing the whole inspection.
func TestInspectSQLiteBrokenView(t *testing.T) {
	db := openDB(t, filepath.Join(t.TempDir(), "b.db"))
	_, err := db.Exec(`CREATE TABLE a(x); CREATE VIEW va AS SELECT x FROM a; DROP TABLE a;`)
	require.NoError(t, err)
	got, err := schema.InspectSQLite(context.Background(), db)
	require.NoError(t, err)
	if assert.Len(t, got.Tables, 1, "got %+v", got.Tables) {
		assert.Equal(t, "va", got.Tables[0].Name, "got %+v", got.Tables)
		assert.Empty(t, got.Tables[0].Columns, "got %+v", got.Tables)
	}
}

// The columns and keys read with one query for all tables are those read a
// table at a time, which a view over a dropped table makes InspectSQLite
// fall back to: on every Spider and BIRD schema, materialised.
func TestInspectSQLiteAllTablesAsEach(t *testing.T) {
	dir := t.TempDir()
	n, reserved := 0, 0
	for _, tables := range []string{shareddata.Path(t, "spider", "tables.json"), shareddata.Path(t, "bird", "mini_dev", "dev_tables.json")} {
		schemas, err := birdschema.Load(tables)
		require.NoError(t, err)
		for i := range schemas {
			id, path := schemas[i].DBID, filepath.Join(dir, schemas[i].DBID+".sqlite")
			if err := birdschema.Create(path, &schemas[i]); err != nil {
				require.ErrorContains(t, err, "reserved for internal use", id) // a table named sqlite_sequence
				reserved++
				continue
			}
			db := openDB(t, path)
			all, err := schema.InspectSQLite(context.Background(), db)
			require.NoError(t, err, id)
			_, err = db.Exec(`CREATE TABLE zz_gone(x); CREATE VIEW zz_broken AS SELECT x FROM zz_gone; DROP TABLE zz_gone`)
			require.NoError(t, err, id)
			each, err := schema.InspectSQLite(context.Background(), db)
			require.NoError(t, err, id)
			require.Equal(t, "zz_broken", each.Tables[len(each.Tables)-1].Name, id)
			require.Empty(t, each.Tables[len(each.Tables)-1].Columns, "%s: the broken view has columns: not read a table at a time", id)
			each.Tables = each.Tables[:len(each.Tables)-1]
			require.Equal(t, all, each, id)
			for _, tb := range all.Tables {
				n += len(tb.Columns) + len(tb.ForeignKeys)
			}
		}
	}
	assert.Greater(t, n, 5000, "columns and keys compared")
	assert.LessOrEqual(t, reserved, 3, "schemas not materialised")
}

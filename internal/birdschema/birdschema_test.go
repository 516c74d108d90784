package birdschema

import (
	"database/sql"
	"testing"

	"github.com/text2sql-go/text2sql/internal/shareddata"
)

func TestMaterializeBIRD(t *testing.T) {
	tables := shareddata.Path(t, "bird", "mini_dev", "dev_tables.json")
	schemas, err := Load(tables)
	if err != nil {
		t.Fatal(err)
	}
	paths, err := Materialize(t.TempDir(), tables)
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != len(schemas) || len(paths) != 11 {
		t.Fatalf("materialised %d databases, want %d (11)", len(paths), len(schemas))
	}
	for _, s := range schemas {
		db, err := sql.Open("sqlite3", paths[s.DBID])
		if err != nil {
			t.Fatal(err)
		}
		var n int
		if err := db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE type = 'table'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != len(s.TableNames) {
			t.Errorf("%s: %d tables, want %d", s.DBID, n, len(s.TableNames))
		}
		// Every column exists under its original name.
		cols, _ := s.columns()
		for _, c := range cols[1:] {
			var got int
			if err := db.QueryRow(`SELECT count(*) FROM pragma_table_info(?) WHERE name = ?`, s.TableNames[c.table], c.name).Scan(&got); err != nil || got != 1 {
				t.Errorf("%s: column %s.%s missing (%v)", s.DBID, s.TableNames[c.table], c.name, err)
			}
		}
		db.Close()
	}
}

func TestDDLQuotesAndKeys(t *testing.T) {
	s := &Schema{
		DBID:        "x",
		TableNames:  []string{"order", "Line Items"},
		ColumnNames: [][2]any{{-1.0, "*"}, {0.0, "id"}, {0.0, "Free Meal Count (K-12)"}, {1.0, "order_id"}, {1.0, "n"}},
		ColumnTypes: []string{"text", "integer", "real", "integer", "integer"},
		PrimaryKeys: []any{1.0, []any{3.0, 4.0}},
		ForeignKeys: [][]int{{3, 1}},
	}
	ddl, err := s.DDL()
	if err != nil {
		t.Fatal(err)
	}
	want0 := "CREATE TABLE \"order\" (\n  \"id\" INTEGER,\n  \"Free Meal Count (K-12)\" REAL,\n  PRIMARY KEY (\"id\")\n)"
	want1 := "CREATE TABLE \"Line Items\" (\n  \"order_id\" INTEGER,\n  \"n\" INTEGER,\n  PRIMARY KEY (\"order_id\", \"n\"),\n  FOREIGN KEY (\"order_id\") REFERENCES \"order\" (\"id\")\n)"
	if ddl[0] != want0 || ddl[1] != want1 {
		t.Errorf("DDL =\n%s\n%s", ddl[0], ddl[1])
	}
}

package birdschema

import (
	"database/sql"
	"testing"

	"github.com/text2sql-go/text2sql/internal/shareddata"
	"github.com/text2sql-go/text2sql/schema"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMaterializeBIRD(t *testing.T) {
	tables := shareddata.Path(t, "bird", "mini_dev", "dev_tables.json")
	schemas, err := Load(tables)
	require.NoError(t, err)
	paths, err := Materialize(t.TempDir(), tables)
	require.NoError(t, err)
	require.Len(t, schemas, 11, "schemas")
	require.Len(t, paths, len(schemas), "materialised databases")
	for _, s := range schemas {
		db, err := sql.Open("sqlite3", paths[s.DBID])
		require.NoError(t, err)
		var n int
		require.NoError(t, db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE type = 'table'`).Scan(&n))
		assert.Equal(t, len(s.TableNames), n, "%s: tables", s.DBID)
		// Every column exists under its original name.
		cols, _ := s.columns()
		for _, c := range cols[1:] {
			var got int
			err := db.QueryRow(`SELECT count(*) FROM pragma_table_info(?) WHERE name = ?`, s.TableNames[c.table], c.name).Scan(&got)
			if assert.NoError(t, err, "%s: column %s.%s", s.DBID, s.TableNames[c.table], c.name) {
				assert.Equal(t, 1, got, "%s: column %s.%s missing", s.DBID, s.TableNames[c.table], c.name)
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
	require.NoError(t, err)
	want0 := "CREATE TABLE \"order\" (\n  \"id\" INTEGER,\n  \"Free Meal Count (K-12)\" REAL,\n  PRIMARY KEY (\"id\")\n)"
	want1 := "CREATE TABLE \"Line Items\" (\n  \"order_id\" INTEGER,\n  \"n\" INTEGER,\n  PRIMARY KEY (\"order_id\", \"n\"),\n  FOREIGN KEY (\"order_id\") REFERENCES \"order\" (\"id\")\n)"
	assert.Equal(t, want0, ddl[0], "DDL of order")
	assert.Equal(t, want1, ddl[1], "DDL of Line Items")
}

func TestTablesModel(t *testing.T) {
	s := &Schema{
		DBID:        "x",
		TableNames:  []string{"order", "Line Items"},
		ColumnNames: [][2]any{{-1.0, "*"}, {0.0, "id"}, {0.0, "total"}, {1.0, "order_id"}, {1.0, "n"}},
		ColumnTypes: []string{"text", "integer", "real", "integer", "integer"},
		PrimaryKeys: []any{1.0, []any{3.0, 4.0}},
		ForeignKeys: [][]int{{3, 1}},
	}
	ts, err := s.Tables("x")
	require.NoError(t, err)
	require.Len(t, ts, 2)
	assert.Equal(t, "x.order", ts[0].QualifiedName())
	assert.Equal(t, []schema.Column{{Name: "id", Type: "INTEGER"}, {Name: "total", Type: "REAL"}}, ts[0].Columns)
	assert.Equal(t, []string{"id"}, ts[0].PrimaryKey)
	assert.Empty(t, ts[0].ForeignKeys)
	assert.Equal(t, []string{"order_id", "n"}, ts[1].PrimaryKey)
	assert.Equal(t, []schema.ForeignKey{{Columns: []string{"order_id"}, RefSchema: "x", RefTable: "order", RefColumns: []string{"id"}}}, ts[1].ForeignKeys)

	s.ColumnNames[2][0] = 7.0
	_, err = s.Tables("x")
	assert.Error(t, err, "a column of a missing table")
}

func TestSpiderCatalog(t *testing.T) {
	db, err := Catalog("spider", shareddata.Path(t, "spider", "tables.json"))
	require.NoError(t, err)
	require.Len(t, db.Tables, 876, "tables of the 166 Spider schemas")
	ns := map[string]bool{}
	for _, tb := range db.Tables {
		ns[tb.Schema] = true
		assert.NotEmpty(t, tb.Columns, tb.QualifiedName())
	}
	assert.Len(t, ns, 166, "namespaces")
	singer := db.Lookup("concert_singer.singer")
	require.NotNil(t, singer)
	assert.Equal(t, []string{"Singer_ID"}, singer.PrimaryKey)
	assert.Equal(t, "Singer_ID", singer.Columns[0].Name)
}

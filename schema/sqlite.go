package schema

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	text2sql "github.com/text2sql-go/text2sql"
)

// InspectSQLite reads the schema of the main database of a SQLite
// connection through database/sql (any SQLite driver): its tables and views
// (SQLite's own sqlite_% tables excepted), each column's declared type and
// NOT NULL, primary keys in key order, and foreign keys in declaration
// order. A foreign key that names no referenced columns refers to the
// referenced table's primary key, which RefColumns is then set to when that
// table is known; RefTable is spelled as the referenced table is.
//
// Tables are sorted by name, case-insensitively (ties by byte order), so
// the result is deterministic. Name is the base name of the database file
// without its extension ("concert_singer"), or "main" for an in-memory
// database. The connection needs the pragma table-valued functions
// (pragma_table_info, pragma_foreign_key_list, pragma_database_list); a
// view whose columns cannot be resolved (it reads a missing table) is kept
// with no columns. Errors are those of the queries.
func InspectSQLite(ctx context.Context, db *sql.DB) (*Database, error) {
	out := &Database{Name: "main", Dialect: text2sql.DialectSQLite}
	var file sql.NullString
	if err := db.QueryRowContext(ctx, `SELECT file FROM pragma_database_list WHERE name = 'main'`).Scan(&file); err != nil {
		return nil, fmt.Errorf("schema: sqlite database list: %w", err)
	}
	if file.String != "" {
		base := filepath.Base(file.String)
		out.Name = strings.TrimSuffix(base, filepath.Ext(base))
	}

	rels, err := selectRows[struct {
		Type string `db:"type"`
		Name string `db:"name"`
	}](ctx, db, `SELECT type, name FROM sqlite_master
		WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite\_%' ESCAPE '\'`)
	if err != nil {
		return nil, fmt.Errorf("schema: sqlite tables: %w", err)
	}
	for _, r := range rels {
		kind := KindTable
		if r.Type == "view" {
			kind = KindView
		}
		out.Tables = append(out.Tables, &Table{Name: r.Name, Kind: kind})
	}
	sort.SliceStable(out.Tables, func(i, j int) bool {
		a, b := strings.ToLower(out.Tables[i].Name), strings.ToLower(out.Tables[j].Name)
		if a != b {
			return a < b
		}
		return out.Tables[i].Name < out.Tables[j].Name
	})

	for _, t := range out.Tables {
		if err := sqliteColumns(ctx, db, t); err != nil {
			if t.Kind == KindView {
				t.Columns, t.PrimaryKey = nil, nil
				continue
			}
			return nil, err
		}
		if t.Kind == KindTable {
			if err := sqliteForeignKeys(ctx, db, t); err != nil {
				return nil, err
			}
		}
	}
	// Resolve referenced tables: their spelling, and the primary key an
	// FK without a column list refers to.
	for _, t := range out.Tables {
		for i := range t.ForeignKeys {
			fk := &t.ForeignKeys[i]
			ref := out.Lookup(fk.RefTable)
			if ref == nil {
				continue
			}
			fk.RefTable = ref.Name
			if len(fk.RefColumns) == 0 && len(ref.PrimaryKey) == len(fk.Columns) {
				fk.RefColumns = append([]string(nil), ref.PrimaryKey...)
			}
		}
	}
	return out, nil
}

func sqliteColumns(ctx context.Context, db *sql.DB, t *Table) error {
	cols, err := selectRows[struct {
		Name    string         `db:"name"`
		Type    sql.NullString `db:"type"`
		NotNull bool           `db:"notnull"`
		PK      int            `db:"pk"` // position in the primary key, from 1; 0 if not in it
	}](ctx, db, `SELECT name, type, "notnull", pk FROM pragma_table_info(?) ORDER BY cid`, t.Name)
	if err != nil {
		return fmt.Errorf("schema: sqlite columns of %s: %w", t.Name, err)
	}
	type pkCol struct {
		name string
		pos  int
	}
	var pks []pkCol
	for _, r := range cols {
		t.Columns = append(t.Columns, Column{Name: r.Name, Type: r.Type.String, NotNull: r.NotNull})
		if r.PK > 0 {
			pks = append(pks, pkCol{r.Name, r.PK})
		}
	}
	sort.SliceStable(pks, func(i, j int) bool { return pks[i].pos < pks[j].pos })
	for _, p := range pks {
		t.PrimaryKey = append(t.PrimaryKey, p.name)
	}
	return nil
}

func sqliteForeignKeys(ctx context.Context, db *sql.DB, t *Table) error {
	// SQLite numbers foreign keys from the last declared: id descending is
	// declaration order.
	keys, err := selectRows[struct {
		ID   int            `db:"id"`
		Ref  string         `db:"table"`
		From string         `db:"from"`
		To   sql.NullString `db:"to"`
	}](ctx, db, `SELECT id, "table", "from", "to" FROM pragma_foreign_key_list(?) ORDER BY id DESC, seq`, t.Name)
	if err != nil {
		return fmt.Errorf("schema: sqlite foreign keys of %s: %w", t.Name, err)
	}
	lastID := -1
	for _, r := range keys {
		if r.ID != lastID || len(t.ForeignKeys) == 0 {
			t.ForeignKeys = append(t.ForeignKeys, ForeignKey{RefTable: r.Ref})
			lastID = r.ID
		}
		fk := &t.ForeignKeys[len(t.ForeignKeys)-1]
		fk.Columns = append(fk.Columns, r.From)
		if r.To.Valid && r.To.String != "" {
			fk.RefColumns = append(fk.RefColumns, r.To.String)
		}
	}
	// A key whose referenced columns are partly missing is treated as one
	// that names none: it refers to the primary key.
	for i := range t.ForeignKeys {
		if fk := &t.ForeignKeys[i]; len(fk.RefColumns) != len(fk.Columns) {
			fk.RefColumns = nil
		}
	}
	return nil
}

package schema

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"

	text2sql "github.com/text2sql-go/text2sql"
)

// InspectMySQL reads the schema of the current database of a MySQL or
// MariaDB connection (the database the DSN names) through database/sql
// (any driver, e.g. github.com/go-sql-driver/mysql) from
// information_schema:
//
//   - Base tables (KindTable) and views (KindView), with Schema left
//     empty: in MySQL a schema is a database, and the tables are those of
//     the current one.
//   - Columns in ordinal order, with the full column type as MySQL prints
//     it ("int(11)", "varchar(20)", "enum('a','b')" — enum labels are part
//     of the type), NOT NULL, and the column comment.
//   - The table comment (the "VIEW" placeholder of views is dropped).
//   - The primary key in key order; foreign keys by constraint name with
//     their columns in key order. RefSchema is set only when the
//     referenced table lies in another database.
//
// Tables are sorted case-insensitively by name (ties by byte order).
// Database.Name is DATABASE(). With no current database it returns an
// error; other errors are those of the queries, wrapped.
func InspectMySQL(ctx context.Context, db *sql.DB) (*Database, error) {
	out := &Database{Dialect: text2sql.DialectMySQL}
	var name sql.NullString
	if err := db.QueryRowContext(ctx, `SELECT DATABASE()`).Scan(&name); err != nil {
		return nil, fmt.Errorf("schema: mysql: current database: %w", err)
	}
	if !name.Valid || name.String == "" {
		return nil, fmt.Errorf("schema: mysql: no current database: name one in the DSN")
	}
	out.Name = name.String

	byName, err := mysqlTables(ctx, db, out)
	if err != nil {
		return nil, err
	}
	if err := mysqlColumns(ctx, db, byName); err != nil {
		return nil, err
	}
	if err := mysqlKeys(ctx, db, out.Name, byName); err != nil {
		return nil, err
	}
	return out, nil
}

// mysqlTables adds the base tables and views of the current database to
// out.Tables, sorted, and returns them by name.
func mysqlTables(ctx context.Context, db *sql.DB, out *Database) (map[string]*Table, error) {
	byName := map[string]*Table{}
	tables, err := selectRows[struct {
		Name    string `db:"name"`
		Type    string `db:"type"`
		Comment string `db:"comment"`
	}](ctx, db, `
		SELECT TABLE_NAME AS name, TABLE_TYPE AS type, COALESCE(TABLE_COMMENT, '') AS comment
		FROM information_schema.TABLES
		WHERE TABLE_SCHEMA = DATABASE() AND TABLE_TYPE IN ('BASE TABLE', 'VIEW', 'SYSTEM VERSIONED')`)
	if err != nil {
		return nil, fmt.Errorf("schema: mysql: tables: %w", err)
	}
	for _, r := range tables {
		t := &Table{Name: r.Name, Comment: r.Comment, Kind: KindTable}
		if r.Type == "VIEW" {
			t.Kind = KindView
			if t.Comment == "VIEW" {
				t.Comment = ""
			}
		}
		byName[t.Name] = t
		out.Tables = append(out.Tables, t)
	}
	sort.SliceStable(out.Tables, func(i, j int) bool {
		a, b := strings.ToLower(out.Tables[i].Name), strings.ToLower(out.Tables[j].Name)
		if a != b {
			return a < b
		}
		return out.Tables[i].Name < out.Tables[j].Name
	})
	return byName, nil
}

// mysqlColumns adds the columns of the tables in byName, in ordinal
// order.
func mysqlColumns(ctx context.Context, db *sql.DB, byName map[string]*Table) error {
	cols, err := selectRows[struct {
		Table    string `db:"tbl"`
		Name     string `db:"name"`
		Type     string `db:"type"`
		Nullable string `db:"nullable"`
		Comment  string `db:"comment"`
	}](ctx, db, `
		SELECT TABLE_NAME AS tbl, COLUMN_NAME AS name, COLUMN_TYPE AS type, IS_NULLABLE AS nullable,
		       COALESCE(COLUMN_COMMENT, '') AS comment
		FROM information_schema.COLUMNS
		WHERE TABLE_SCHEMA = DATABASE()
		ORDER BY TABLE_NAME, ORDINAL_POSITION`)
	if err != nil {
		return fmt.Errorf("schema: mysql: columns: %w", err)
	}
	for _, r := range cols {
		if t := byName[r.Table]; t != nil {
			t.Columns = append(t.Columns, Column{Name: r.Name, Type: r.Type, NotNull: r.Nullable == "NO", Comment: r.Comment})
		}
	}
	return nil
}

// mysqlKeys adds the primary and foreign keys of the tables in byName;
// current is the current database, whose name a foreign key's RefSchema
// leaves out.
func mysqlKeys(ctx context.Context, db *sql.DB, current string, byName map[string]*Table) error {
	keys, err := selectRows[struct {
		Table     string `db:"tbl"`
		Con       string `db:"con"`
		Column    string `db:"col"`
		RefSchema string `db:"ref_schema"`
		RefTable  string `db:"ref_table"`
		RefColumn string `db:"ref_col"`
	}](ctx, db, `
		SELECT TABLE_NAME AS tbl, CONSTRAINT_NAME AS con, COLUMN_NAME AS col,
		       COALESCE(REFERENCED_TABLE_SCHEMA, '') AS ref_schema, COALESCE(REFERENCED_TABLE_NAME, '') AS ref_table,
		       COALESCE(REFERENCED_COLUMN_NAME, '') AS ref_col
		FROM information_schema.KEY_COLUMN_USAGE
		WHERE TABLE_SCHEMA = DATABASE()
		  AND (CONSTRAINT_NAME = 'PRIMARY' OR REFERENCED_TABLE_NAME IS NOT NULL)
		ORDER BY TABLE_NAME, CONSTRAINT_NAME = 'PRIMARY' DESC, CONSTRAINT_NAME, ORDINAL_POSITION`)
	if err != nil {
		return fmt.Errorf("schema: mysql: keys: %w", err)
	}
	lastTable, lastCon := "", ""
	for _, r := range keys {
		t := byName[r.Table]
		if t == nil {
			continue
		}
		if r.Con == "PRIMARY" {
			t.PrimaryKey = append(t.PrimaryKey, r.Column)
		} else {
			if r.Table != lastTable || r.Con != lastCon {
				fk := ForeignKey{RefTable: r.RefTable}
				if r.RefSchema != current {
					fk.RefSchema = r.RefSchema
				}
				t.ForeignKeys = append(t.ForeignKeys, fk)
			}
			fk := &t.ForeignKeys[len(t.ForeignKeys)-1]
			fk.Columns = append(fk.Columns, r.Column)
			fk.RefColumns = append(fk.RefColumns, r.RefColumn)
		}
		lastTable, lastCon = r.Table, r.Con
	}
	return nil
}

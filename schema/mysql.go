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

	byName := map[string]*Table{}
	rows, err := db.QueryContext(ctx, `
		SELECT TABLE_NAME, TABLE_TYPE, COALESCE(TABLE_COMMENT, '')
		FROM information_schema.TABLES
		WHERE TABLE_SCHEMA = DATABASE() AND TABLE_TYPE IN ('BASE TABLE', 'VIEW', 'SYSTEM VERSIONED')`)
	if err != nil {
		return nil, fmt.Errorf("schema: mysql: tables: %w", err)
	}
	err = scanAll(rows, func() error {
		var typ string
		t := &Table{Kind: KindTable}
		if err := rows.Scan(&t.Name, &typ, &t.Comment); err != nil {
			return err
		}
		if typ == "VIEW" {
			t.Kind = KindView
			if t.Comment == "VIEW" {
				t.Comment = ""
			}
		}
		byName[t.Name] = t
		out.Tables = append(out.Tables, t)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("schema: mysql: tables: %w", err)
	}
	sort.SliceStable(out.Tables, func(i, j int) bool {
		a, b := strings.ToLower(out.Tables[i].Name), strings.ToLower(out.Tables[j].Name)
		if a != b {
			return a < b
		}
		return out.Tables[i].Name < out.Tables[j].Name
	})

	rows, err = db.QueryContext(ctx, `
		SELECT TABLE_NAME, COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE, COALESCE(COLUMN_COMMENT, '')
		FROM information_schema.COLUMNS
		WHERE TABLE_SCHEMA = DATABASE()
		ORDER BY TABLE_NAME, ORDINAL_POSITION`)
	if err != nil {
		return nil, fmt.Errorf("schema: mysql: columns: %w", err)
	}
	err = scanAll(rows, func() error {
		var table, nullable string
		var c Column
		if err := rows.Scan(&table, &c.Name, &c.Type, &nullable, &c.Comment); err != nil {
			return err
		}
		c.NotNull = nullable == "NO"
		if t := byName[table]; t != nil {
			t.Columns = append(t.Columns, c)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("schema: mysql: columns: %w", err)
	}

	rows, err = db.QueryContext(ctx, `
		SELECT TABLE_NAME, CONSTRAINT_NAME, COLUMN_NAME,
		       COALESCE(REFERENCED_TABLE_SCHEMA, ''), COALESCE(REFERENCED_TABLE_NAME, ''), COALESCE(REFERENCED_COLUMN_NAME, '')
		FROM information_schema.KEY_COLUMN_USAGE
		WHERE TABLE_SCHEMA = DATABASE()
		  AND (CONSTRAINT_NAME = 'PRIMARY' OR REFERENCED_TABLE_NAME IS NOT NULL)
		ORDER BY TABLE_NAME, CONSTRAINT_NAME = 'PRIMARY' DESC, CONSTRAINT_NAME, ORDINAL_POSITION`)
	if err != nil {
		return nil, fmt.Errorf("schema: mysql: keys: %w", err)
	}
	lastTable, lastCon := "", ""
	err = scanAll(rows, func() error {
		var table, con, col, refSchema, refTable, refCol string
		if err := rows.Scan(&table, &con, &col, &refSchema, &refTable, &refCol); err != nil {
			return err
		}
		t := byName[table]
		if t == nil {
			return nil
		}
		if con == "PRIMARY" {
			t.PrimaryKey = append(t.PrimaryKey, col)
		} else {
			if table != lastTable || con != lastCon {
				fk := ForeignKey{RefTable: refTable}
				if refSchema != out.Name {
					fk.RefSchema = refSchema
				}
				t.ForeignKeys = append(t.ForeignKeys, fk)
			}
			fk := &t.ForeignKeys[len(t.ForeignKeys)-1]
			fk.Columns = append(fk.Columns, col)
			fk.RefColumns = append(fk.RefColumns, refCol)
		}
		lastTable, lastCon = table, con
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("schema: mysql: keys: %w", err)
	}
	return out, nil
}

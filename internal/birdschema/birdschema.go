// Package birdschema materialises the schemas of a Spider/BIRD
// tables.json file (such as BIRD mini-dev's dev_tables.json, whose
// databases are not distributed with it) as empty SQLite databases, so
// tests can prepare and check queries against the real table and column
// names. It is a test helper: it imports the cgo SQLite driver.
package birdschema

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	_ "github.com/mattn/go-sqlite3" // the "sqlite3" driver
)

// Schema is one database of a tables.json file, in the fields this package
// uses. Column indexes count from 0 in ColumnNames, whose first entry is
// the [-1, "*"] placeholder.
type Schema struct {
	DBID        string   `json:"db_id"`
	TableNames  []string `json:"table_names_original"`
	ColumnNames [][2]any `json:"column_names_original"` // [table index, name]
	ColumnTypes []string `json:"column_types"`
	// PrimaryKeys holds a column index per table, or a list of indexes
	// for a composite key.
	PrimaryKeys []any   `json:"primary_keys"`
	ForeignKeys [][]int `json:"foreign_keys"` // [column index, referenced column index]
}

// Load reads a tables.json file.
func Load(tablesJSON string) ([]Schema, error) {
	b, err := os.ReadFile(tablesJSON)
	if err != nil {
		return nil, err
	}
	var out []Schema
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("birdschema: %s: %w", tablesJSON, err)
	}
	return out, nil
}

// column is a resolved column of a Schema.
type column struct {
	table int
	name  string
	typ   string
}

func (s *Schema) columns() ([]column, error) {
	cols := make([]column, len(s.ColumnNames))
	for i, c := range s.ColumnNames {
		ti, ok := c[0].(float64)
		name, ok2 := c[1].(string)
		if !ok || !ok2 {
			return nil, fmt.Errorf("birdschema: %s: malformed column %d", s.DBID, i)
		}
		cols[i] = column{table: int(ti), name: name}
		if i < len(s.ColumnTypes) {
			cols[i].typ = s.ColumnTypes[i]
		}
		if cols[i].table >= len(s.TableNames) {
			return nil, fmt.Errorf("birdschema: %s: column %d names table %d of %d", s.DBID, i, cols[i].table, len(s.TableNames))
		}
	}
	return cols, nil
}

// DDL returns the CREATE TABLE statements of s, one per table in the order
// of TableNames, with every identifier double-quoted, declared types as in
// column_types, primary keys and foreign keys.
func (s *Schema) DDL() ([]string, error) {
	cols, err := s.columns()
	if err != nil {
		return nil, err
	}
	ok := func(i int) bool { return i > 0 && i < len(cols) && cols[i].table >= 0 }
	pks := s.primaryKeys(cols)
	fks := make([][]string, len(s.TableNames))
	for _, fk := range s.ForeignKeys {
		if len(fk) != 2 || !ok(fk[0]) || !ok(fk[1]) {
			continue
		}
		from, to := cols[fk[0]], cols[fk[1]]
		fks[from.table] = append(fks[from.table], fmt.Sprintf("FOREIGN KEY (%s) REFERENCES %s (%s)",
			quote(from.name), quote(s.TableNames[to.table]), quote(to.name)))
	}
	out := make([]string, len(s.TableNames))
	for ti, tn := range s.TableNames {
		var defs []string
		for ci, c := range cols {
			if ci == 0 || c.table != ti {
				continue
			}
			d := quote(c.name)
			if c.typ != "" {
				d += " " + strings.ToUpper(c.typ)
			}
			defs = append(defs, d)
		}
		if pk := pks[ti]; len(pk) > 0 {
			var names []string
			for _, ci := range pk {
				if ok(ci) {
					names = append(names, quote(cols[ci].name))
				}
			}
			defs = append(defs, "PRIMARY KEY ("+strings.Join(names, ", ")+")")
		}
		defs = append(defs, fks[ti]...)
		out[ti] = "CREATE TABLE " + quote(tn) + " (\n  " + strings.Join(defs, ",\n  ") + "\n)"
	}
	return out, nil
}

// primaryKeys returns, per table, the column indexes of its primary key.
func (s *Schema) primaryKeys(cols []column) [][]int {
	ok := func(i int) bool { return i > 0 && i < len(cols) && cols[i].table >= 0 }
	pks := make([][]int, len(s.TableNames))
	for _, pk := range s.PrimaryKeys {
		var idx []int
		switch v := pk.(type) {
		case float64:
			idx = []int{int(v)}
		case []any:
			for _, x := range v {
				if f, isNum := x.(float64); isNum && ok(int(f)) {
					idx = append(idx, int(f))
				}
			}
		}
		if len(idx) == 0 || !ok(idx[0]) {
			continue
		}
		pks[cols[idx[0]].table] = idx
	}
	return pks
}

func quote(name string) string { return `"` + strings.ReplaceAll(name, `"`, `""`) + `"` }

// Materialize creates, for every schema of the tables.json file at
// tablesJSON, an empty SQLite database dir/<db_id>.sqlite with its tables,
// and returns the path of each by db_id. Existing files are replaced.
func Materialize(dir, tablesJSON string) (map[string]string, error) {
	schemas, err := Load(tablesJSON)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for i := range schemas {
		s := &schemas[i]
		path := filepath.Join(dir, s.DBID+".sqlite")
		if err := Create(path, s); err != nil {
			return nil, err
		}
		out[s.DBID] = path
	}
	return out, nil
}

// Create writes the empty database of s at path, replacing any file there.
func Create(path string, s *Schema) error {
	ddl, err := s.DDL()
	if err != nil {
		return err
	}
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		return err
	}
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		return err
	}
	defer db.Close()
	for _, stmt := range ddl {
		if _, err := db.Exec(stmt); err != nil {
			return fmt.Errorf("birdschema: %s: %w\n%s", s.DBID, err, stmt)
		}
	}
	return db.Close()
}

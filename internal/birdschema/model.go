package birdschema

import (
	"fmt"
	"strings"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/schema"
)

// Tables returns the tables of s in the schema model, in the order of
// TableNames, each in namespace ns ("" for none): columns with their
// declared types, primary and foreign keys (references stay in ns).
func (s *Schema) Tables(ns string) ([]*schema.Table, error) {
	cols, err := s.columns()
	if err != nil {
		return nil, err
	}
	ok := func(i int) bool { return i > 0 && i < len(cols) && cols[i].table >= 0 }
	out := make([]*schema.Table, len(s.TableNames))
	for ti, tn := range s.TableNames {
		out[ti] = &schema.Table{Schema: ns, Name: tn, Kind: schema.KindTable}
	}
	for ci, c := range cols {
		if ci == 0 || c.table < 0 {
			continue
		}
		t := out[c.table]
		t.Columns = append(t.Columns, schema.Column{Name: c.name, Type: strings.ToUpper(c.typ)})
	}
	for ti, pk := range s.primaryKeys(cols) {
		for _, ci := range pk {
			if ok(ci) {
				out[ti].PrimaryKey = append(out[ti].PrimaryKey, cols[ci].name)
			}
		}
	}
	for _, fk := range s.ForeignKeys {
		if len(fk) != 2 || !ok(fk[0]) || !ok(fk[1]) {
			continue
		}
		from, to := cols[fk[0]], cols[fk[1]]
		t := out[from.table]
		t.ForeignKeys = append(t.ForeignKeys, schema.ForeignKey{
			Columns: []string{from.name}, RefSchema: ns, RefTable: s.TableNames[to.table], RefColumns: []string{to.name},
		})
	}
	return out, nil
}

// Catalog reads the tables.json file at tablesJSON and returns all its
// schemas as one database named name, each schema's tables in the
// namespace of its db_id ("concert_singer.singer"), in file order: for
// the Spider file, the 166 schemas' 876 tables.
func Catalog(name, tablesJSON string) (*schema.Database, error) {
	schemas, err := Load(tablesJSON)
	if err != nil {
		return nil, err
	}
	db := &schema.Database{Name: name, Dialect: text2sql.DialectSQLite}
	seen := map[string]bool{}
	for i := range schemas {
		s := &schemas[i]
		if seen[s.DBID] {
			return nil, fmt.Errorf("birdschema: %s: db_id %q twice", tablesJSON, s.DBID)
		}
		seen[s.DBID] = true
		ts, err := s.Tables(s.DBID)
		if err != nil {
			return nil, err
		}
		db.Tables = append(db.Tables, ts...)
	}
	return db, nil
}

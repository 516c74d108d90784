package schema_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/birdschema"
	"github.com/text2sql-go/text2sql/internal/shareddata"
	"github.com/text2sql-go/text2sql/schema"
)

func TestInferForeignKeysNames(t *testing.T) {
	db := &schema.Database{Dialect: text2sql.DialectSQLite, Tables: []*schema.Table{
		{Name: "film", Columns: []schema.Column{{Name: "film_id", Type: "INTEGER"}, {Name: "title", Type: "TEXT"}}, PrimaryKey: []string{"film_id"}},
		{Name: "inventory", Columns: []schema.Column{{Name: "inventory_id", Type: "INTEGER"}, {Name: "film_id", Type: "INTEGER"}, {Name: "store_id", Type: "INTEGER"}}, PrimaryKey: []string{"inventory_id"}},
		{Name: "Customers", Columns: []schema.Column{{Name: "Id", Type: "INTEGER"}, {Name: "Name", Type: "TEXT"}}, PrimaryKey: []string{"Id"}},
		{Name: "Invoice", Columns: []schema.Column{{Name: "InvoiceId", Type: "INTEGER"}, {Name: "CustomerId", Type: "INTEGER"}, {Name: "film_title", Type: "TEXT"}}, PrimaryKey: []string{"InvoiceId"}},
		{Name: "film_text", Columns: []schema.Column{{Name: "film_id", Type: "INTEGER"}}, PrimaryKey: []string{"film_id"}},
		{Name: "notes", Columns: []schema.Column{{Name: "customer_id", Type: "TEXT"}}},
	}}
	got := schema.InferForeignKeys(db)
	keys := func(name string) []string {
		var out []string
		for _, fk := range got.Lookup(name).ForeignKeys {
			out = append(out, fmt.Sprintf("%s->%s.%s %v", fk.Columns[0], fk.RefTable, fk.RefColumns[0], fk.Inferred))
		}
		return out
	}
	assert.Equal(t, []string{"film_id->film.film_id true"}, keys("inventory"), "store has no table: no key")
	assert.Equal(t, []string{"CustomerId->Customers.Id true"}, keys("Invoice"), "the plural table name, its Id")
	assert.Empty(t, keys("film_text"), "a key of the same name as film's is one-to-one")
	assert.Empty(t, keys("notes"), "text does not reference an integer key by a derived name")
	assert.Empty(t, db.Lookup("inventory").ForeignKeys, "the schema given is unchanged")
	assert.Same(t, db.Lookup("film"), got.Lookup("film"), "tables without inferred keys are shared")
	ddl := got.DDL([]*schema.Table{got.Lookup("inventory")})
	assert.Contains(t, ddl, "-- inferred join, not declared: inventory.film_id = film.film_id")
	assert.NotContains(t, ddl, "FOREIGN KEY")
}

// On the Spider and BIRD schemas with their declared keys removed, the
// inferred keys find most declared ones and little else.
func TestInferForeignKeysRecoversDeclared(t *testing.T) {
	for _, path := range []string{shareddata.Path(t, "spider", "tables.json"), shareddata.Path(t, "bird", "mini_dev", "dev_tables.json")} {
		schemas, err := birdschema.Load(path)
		require.NoError(t, err)
		declared, found, extra := 0, 0, 0
		for i := range schemas {
			tables, err := schemas[i].Tables("")
			require.NoError(t, err)
			db := &schema.Database{Dialect: text2sql.DialectSQLite}
			want := map[string]bool{}
			for _, t := range tables {
				ct := *t
				for _, fk := range t.ForeignKeys {
					if len(fk.Columns) == 1 {
						want[strings.ToLower(t.Name+"."+fk.Columns[0]+">"+fk.RefTable)] = true
					}
				}
				ct.ForeignKeys = nil
				db.Tables = append(db.Tables, &ct)
			}
			declared += len(want)
			for _, tb := range schema.InferForeignKeys(db).Tables {
				for _, fk := range tb.ForeignKeys {
					if want[strings.ToLower(tb.Name+"."+fk.Columns[0]+">"+fk.RefTable)] {
						found++
					} else {
						extra++
					}
				}
			}
		}
		recall, precision := float64(found)/float64(declared), float64(found)/float64(found+extra)
		t.Logf("%s: %d declared one-column keys, %d inferred of them (recall %.3f), %d others (precision %.3f)", path, declared, found, recall, extra, precision)
		assert.Greater(t, recall, 0.5, path)
		assert.Greater(t, precision, 0.7, path)
	}
}

// The indexed InferForeignKeys infers what the quadratic comparison of
// every column with every key inferred, in the same order: on each Spider
// and BIRD database with and without its declared keys, on all of them as
// one namespace and as namespaces of one database each, and on random
// schemas of colliding names.
func TestInferForeignKeysAsQuadratic(t *testing.T) {
	var union, catalog schema.Database
	for _, path := range []string{shareddata.Path(t, "spider", "tables.json"), shareddata.Path(t, "bird", "mini_dev", "dev_tables.json")} {
		schemas, err := birdschema.Load(path)
		require.NoError(t, err)
		for i := range schemas {
			tables, err := schemas[i].Tables("")
			require.NoError(t, err)
			db := &schema.Database{Dialect: text2sql.DialectSQLite, Tables: tables}
			sameInferred(t, db, schemas[i].DBID+" declared")
			keyless := &schema.Database{Dialect: text2sql.DialectSQLite}
			for _, tb := range tables {
				ct := *tb
				ct.ForeignKeys = nil
				keyless.Tables = append(keyless.Tables, &ct)
				union.Tables = append(union.Tables, &ct)
				nt := ct
				nt.Schema = schemas[i].DBID
				catalog.Tables = append(catalog.Tables, &nt)
			}
			sameInferred(t, keyless, schemas[i].DBID)
		}
	}
	assert.Greater(t, sameInferred(t, &union, "union"), 500)
	assert.Greater(t, sameInferred(t, &catalog, "catalog"), 500)
	next := rand.New(rand.NewPCG(7, 0)).IntN
	total := 0
	for i := range 200 {
		total += sameInferred(t, randomSchema(next), fmt.Sprintf("random %d", i))
	}
	assert.Greater(t, total, 500)
}

// sameInferred requires InferForeignKeys and InferForeignKeysQuadratic to
// give db the same keys and share the same tables with it, and returns
// the number of keys inferred.
func sameInferred(t *testing.T, db *schema.Database, name string) int {
	got, want := schema.InferForeignKeys(db), schema.InferForeignKeysQuadratic(db)
	require.Len(t, got.Tables, len(want.Tables), name)
	n := 0
	for i, w := range want.Tables {
		require.Equal(t, w.ForeignKeys, got.Tables[i].ForeignKeys, "%s: table %s", name, w.Name)
		require.Equal(t, w == db.Tables[i], got.Tables[i] == db.Tables[i], "%s: table %s shared", name, w.Name)
		for _, fk := range w.ForeignKeys {
			if fk.Inferred {
				n++
			}
		}
	}
	return n
}

// randomSchema returns a schema of names drawn from few words, plurals,
// digits, cases and generic names, so that columns name many keys.
func randomSchema(next func(int) int) *schema.Database {
	words := []string{"film", "films", "member", "members", "Category", "categories", "class", "classes", "box", "player",
		"Player_API", "user", "Users", "id", "name", "code", "", "_", "a", "ab", "abc", "order", "Orders", "Customer_Orders", "x1"}
	types := []string{"", "INTEGER", "int", "TEXT", "varchar(20)", "REAL", "date", "uuid", "blob"}
	name := func() string {
		n := words[next(len(words))]
		switch next(6) {
		case 0:
			n += "_" + words[next(len(words))]
		case 1:
			n += "_id"
		case 2:
			n += "Id"
		case 3:
			n += fmt.Sprint(next(12))
		case 4:
			n = strings.ToUpper(n)
		}
		return n
	}
	db := &schema.Database{}
	for range 1 + next(40) {
		tb := &schema.Table{Name: name(), Schema: []string{"", "", "s"}[next(3)]}
		for range 1 + next(6) {
			tb.Columns = append(tb.Columns, schema.Column{Name: name(), Type: types[next(len(types))]})
		}
		switch next(4) {
		case 0, 1:
			tb.PrimaryKey = []string{tb.Columns[next(len(tb.Columns))].Name}
		case 2:
			tb.PrimaryKey = []string{name()}
		}
		if next(4) == 0 {
			tb.ForeignKeys = []schema.ForeignKey{{Columns: []string{tb.Columns[next(len(tb.Columns))].Name}, RefTable: name(), RefColumns: []string{"id"}}}
		}
		db.Tables = append(db.Tables, tb)
	}
	return db
}

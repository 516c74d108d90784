package catalog

import (
	"context"
	"testing"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/schema"
)

// fakeMember is a member of a dialect that only has a schema.
type fakeMember struct{ db *schema.Database }

func (f fakeMember) Execute(context.Context, text2sql.ExecuteRequest) (*text2sql.Result, error) {
	return &text2sql.Result{}, nil
}
func (f fakeMember) Check(context.Context, string) error { return nil }
func (f fakeMember) Schema() *schema.Database            { return f.db }

// FuzzSplit: splitting any text in a catalog of three dialects never
// panics, and a step's text is a piece of the statement's own.
func FuzzSplit(f *testing.F) {
	member := func(d text2sql.Dialect, sch string, tables ...string) fakeMember {
		db := &schema.Database{Dialect: d}
		for _, t := range tables {
			db.Tables = append(db.Tables, &schema.Table{Schema: sch, Name: t, Columns: []schema.Column{{Name: "a"}}})
		}
		return fakeMember{db}
	}
	c, err := New([]Database{
		{Name: "concert", Executor: member(text2sql.DialectSQLite, "", "singer")},
		{Name: "shop", Executor: member(text2sql.DialectMySQL, "", "Pets")},
		{Name: "clinic", Executor: member(text2sql.DialectPostgres, "public", "visits")},
	}, Options{})
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{
		"SELECT * FROM shop.Pets WHERE a = '\\'' -- x",
		"WITH p AS (SELECT a FROM shop.`Pets` # )\n), v AS (SELECT a FROM clinic.visits WHERE a = $$)$$) SELECT * FROM p, v",
		"WITH RECURSIVE r AS (SELECT a FROM concert.singer UNION ALL SELECT a FROM r), v AS (SELECT a FROM clinic.visits /* /* */ */) SELECT * FROM r, v",
		"SELECT clinic.visits.a, shop.Pets.* FROM clinic.visits, shop.Pets",
		"WITH a AS (SELECT a FROM shop.Pets --1\n), b(x) AS (SELECT a FROM concert.singer /* /* */ ) SELECT 1 /* /* */ + 1",
		"WITH a AS (SELECT E'\\'' FROM clinic.visits), b AS (SELECT \"x\" FROM shop.Pets) SELECT [a].x FROM a, b;;",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, sql string) {
		p, se := c.split(sql)
		if se != nil {
			return
		}
		if len(p.steps) == 0 {
			t.Fatalf("%q: no steps", sql)
		}
		for _, st := range p.steps {
			if st.db < 0 || st.db >= len(c.dbs) {
				t.Fatalf("%q: step on member %d", sql, st.db)
			}
		}
	})
}

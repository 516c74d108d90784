package catalog_test

import (
	"context"
	"fmt"
	"log"
	"path/filepath"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/executor/catalog"
	"github.com/text2sql-go/text2sql/executor/sqlite"
	"github.com/text2sql-go/text2sql/internal/shareddata"
)

// Two Spider databases as one catalog: a query across them runs as a step
// per database and a merge.
func Example() {
	var dbs []catalog.Database
	for _, d := range [][2]string{{"concert", "concert_singer"}, {"pets", "pets_1"}} {
		name, id := d[0], d[1]
		ex, err := sqlite.Open(filepath.Join(shareddata.Dir(), "spider", "database", id, id+".sqlite"), sqlite.Options{})
		if err != nil {
			log.Fatal(err)
		}
		dbs = append(dbs, catalog.Database{Name: name, Executor: ex})
	}
	c, err := catalog.New(dbs, catalog.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	res, err := c.Execute(context.Background(), text2sql.ExecuteRequest{SQL: `
		WITH s AS (SELECT count(*) AS n FROM concert.singer),
		     p AS (SELECT count(*) AS n FROM pets.Pets)
		SELECT s.n AS singers, p.n AS pets FROM s, p`})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Columns, res.Rows)
	for _, s := range res.Steps {
		fmt.Printf("%s: %s\n", s.Database, s.SQL)
	}
	// Output:
	// [singers pets] [[6 3]]
	// concert: SELECT count(*) AS n FROM singer
	// pets: SELECT count(*) AS n FROM "Pets"
	// merge: SELECT s.n AS singers, p.n AS pets FROM s, p
}

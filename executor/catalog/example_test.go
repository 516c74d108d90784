package catalog_test

import (
	"context"
	"fmt"
	"log"
	"os"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/demo"
	"github.com/text2sql-go/text2sql/executor/catalog"
	"github.com/text2sql-go/text2sql/executor/sqlite"
)

// Two databases as one catalog (here the demo registrar twice, as this
// term's and an archive): a query across them runs as a step per
// database and a merge.
func Example() {
	dir, err := os.MkdirTemp("", "catalog-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path, err := demo.Ensure(dir)
	if err != nil {
		log.Fatal(err)
	}
	var dbs []catalog.Database
	for _, name := range []string{"registrar", "archive"} {
		ex, err := sqlite.Open(path, sqlite.Options{})
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
		WITH s AS (SELECT count(*) AS n FROM registrar.students),
		     c AS (SELECT count(*) AS n FROM archive.courses)
		SELECT s.n AS students, c.n AS courses FROM s, c`})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Columns, res.Rows)
	for _, s := range res.Steps {
		fmt.Printf("%s: %s\n", s.Database, s.SQL)
	}
	// Output:
	// [students courses] [[200 36]]
	// registrar: SELECT count(*) AS n FROM students
	// archive: SELECT count(*) AS n FROM courses
	// merge: SELECT s.n AS students, c.n AS courses FROM s, c
}

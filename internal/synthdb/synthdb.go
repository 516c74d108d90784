// Package synthdb writes synthetic SQLite databases of many tables for the
// benchmarks of big schemas: tables named by two words, keys implied by
// column names only (no declared foreign keys, as in warehouse exports),
// and a few rows of text values per table for the value index.
package synthdb

import (
	"database/sql"
	"fmt"
	"math/rand/v2"
	"strings"

	_ "github.com/mattn/go-sqlite3" // the "sqlite3" driver
)

var words = strings.Fields(`account address agent airline airport album amount artist asset audit balance bank batch
bill booking branch brand budget building campaign card carrier cart category channel city claim class client clinic
comment company contract cost country coupon course credit currency customer cycle deal degree delivery
department deposit device discount district doctor document driver employee engine event expense facility fee file
flight fund game grade group guest hotel incident invoice item journal kind label lead lesson level license line loan
location lot manager market match member menu message meter model module movie network note office offer order
owner package page partner patient payment period permit phone plan player policy port price product profile program
project promotion property provider purchase quota rate reading receipt record region release rental report request
reservation resource review reward role room route sale schedule school score season seat sector segment sensor
service session shift shipment shop site skill slot song source sponsor staff stage station status stock store
student subject supplier survey task tax team teacher term test ticket tour track trade training trip
unit user vehicle vendor venue visit voucher warehouse zone`)

var types = []string{"INTEGER", "TEXT", "NUMERIC(10,2)", "DATE", "REAL"}

// Rows is the number of rows each table holds.
const Rows = 5

// Write creates the SQLite database file path (which must not exist) with
// tables tables of cols columns (at least 4), the same for the same
// arguments. A table's primary key is id or <table>_id, alternately; one
// or two <other table>_id columns imply keys to earlier tables; a label
// column holds Rows words of text, the other columns random types. It
// returns the error of the first statement that fails.
func Write(path string, tables, cols int) (err error) {
	if cols < 4 {
		return fmt.Errorf("synthdb: %d columns, need at least 4", cols)
	}
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := db.Close(); err == nil {
			err = cerr
		}
	}()
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, stmt := range statements(tables, cols) {
		if _, err := tx.Exec(stmt); err != nil {
			return fmt.Errorf("synthdb: %s: %w", stmt, err)
		}
	}
	return tx.Commit()
}

// statements returns the CREATE TABLE and INSERT statements of Write.
func statements(tables, cols int) []string {
	next := rand.New(rand.NewPCG(37, 0)).IntN // deterministic, no global state
	word := func() string { return words[next(len(words))] }
	var names, out []string
	used := map[string]bool{}
	for i := range tables {
		name := word() + "_" + word()
		if used[name] {
			name = fmt.Sprintf("%s_%d", name, i)
		}
		used[name] = true
		key := "id"
		if i%2 == 1 {
			key = name + "_id"
		}
		defs := []string{key + " INTEGER PRIMARY KEY", "label TEXT"}
		seen := map[string]bool{key: true, "label": true}
		for r := 0; r < 1+next(2) && len(names) > 0; r++ {
			c := names[next(len(names))] + "_id"
			if !seen[c] {
				seen[c] = true
				defs = append(defs, c+" INTEGER")
			}
		}
		for len(defs) < cols {
			c := word() + "_" + word()
			if !seen[c] {
				seen[c] = true
				defs = append(defs, c+" "+types[next(len(types))])
			}
		}
		out = append(out, fmt.Sprintf("CREATE TABLE %s (%s)", name, strings.Join(defs, ", ")))
		for r := range Rows {
			out = append(out, fmt.Sprintf("INSERT INTO %s (%s, label) VALUES (%d, '%s %s')", name, key, r+1, word(), word()))
		}
		names = append(names, name)
	}
	return out
}

package pgload_test

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	_ "github.com/mattn/go-sqlite3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/executor/postgres"
	"github.com/text2sql-go/text2sql/internal/dbtest"
	"github.com/text2sql-go/text2sql/internal/pgload"
	"github.com/text2sql-go/text2sql/schema"
)

const trickySQLite = `
CREATE TABLE "Customers" ("CustomerID" INTEGER PRIMARY KEY, "FirstName" TEXT NOT NULL, Name TEXT, age INT, score REAL, price DECIMAL(10,2), pic BLOB, born DATE, flag BOOL, untyped);
INSERT INTO "Customers" VALUES (1, 'Ada', 'A', 36, 1.5, 12.5, x'0102', '1815-12-10', 1, NULL);
INSERT INTO "Customers" VALUES (2, 'Grace', 'G', 'unknown', 2, 7, x'03', '1906-12-09', 0, NULL);
INSERT INTO "Customers" VALUES (3, 'Nul' || char(0) || 'byte', NULL, NULL, NULL, 3, NULL, NULL, NULL, NULL);
CREATE TABLE "order" (id INTEGER, "Customer" INTEGER REFERENCES "Customers", total NUMERIC, PRIMARY KEY (id));
INSERT INTO "order" VALUES (1, 1, 10), (2, 2, 20.5), (3, 9, 1);
CREATE TABLE "Line Items" ("order" INTEGER, line INTEGER, note, PRIMARY KEY ("order", line), FOREIGN KEY ("order") REFERENCES "order" (id));
INSERT INTO "Line Items" VALUES (1, 1, 'x'), (NULL, 2, 'dup');
CREATE TABLE empty (a INT, b VARCHAR(10), c DOUBLE, d NUMERIC(5,1), e BLOB);
CREATE VIEW big_orders AS SELECT id, total FROM "order" WHERE total > 5;
CREATE VIEW broken AS SELECT strftime('%Y', 'now') AS y;
`

// sqliteFile returns a read-only handle on a new SQLite file made by script.
func sqliteFile(t *testing.T, script string) *sql.DB {
	t.Helper()
	path := dbtest.SQLiteFile(t, "src.sqlite", script)
	ro, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	require.NoError(t, err)
	t.Cleanup(func() { ro.Close() })
	return ro
}

// query runs q with the guarded PostgreSQL executor on search path sch.
func query(t *testing.T, db *sql.DB, sch, q string) *text2sql.Result {
	t.Helper()
	e, err := postgres.New(context.Background(), db, postgres.Options{SearchPath: []string{sch}})
	require.NoError(t, err)
	defer e.Close()
	res, err := e.Execute(context.Background(), text2sql.ExecuteRequest{SQL: q})
	require.NoError(t, err, "Execute(%q)", q)
	return res
}

// CopySQLite chooses types from the values, keeps names exactly (or folds
// them), adds the keys the data allows, creates the views PostgreSQL
// accepts, and notes the rest.
func TestCopySQLite(t *testing.T) {
	src := sqliteFile(t, trickySQLite)
	db, _ := dbtest.Postgres(t)
	ctx := context.Background()
	rep, err := pgload.CopySQLite(ctx, src, db, "Exact", pgload.CopyOptions{})
	require.NoError(t, err)
	types := map[string]string{}
	mixed := map[string]bool{}
	for _, tb := range rep.Tables {
		for _, c := range tb.Columns {
			types[tb.Name+"."+c.Name] = c.Type
			mixed[tb.Name+"."+c.Name] = c.Mixed
		}
	}
	want := map[string]string{
		"Customers.CustomerID": "bigint", "Customers.FirstName": "text", "Customers.Name": "text",
		"Customers.age": "text", "Customers.score": "double precision", "Customers.price": "numeric", "Customers.pic": "bytea",
		"Customers.born": "text", "Customers.flag": "bigint", "Customers.untyped": "text",
		"order.id": "bigint", "order.Customer": "bigint", "order.total": "numeric",
		"Line Items.order": "bigint", "Line Items.line": "bigint", "Line Items.note": "text",
		"empty.a": "bigint", "empty.b": "text", "empty.c": "double precision", "empty.d": "numeric", "empty.e": "bytea",
		"big_orders.id": "", "big_orders.total": "", "broken.y": "",
	}
	for k, v := range want {
		assert.Equal(t, v, types[k], k)
	}
	assert.True(t, mixed["Customers.age"], "Customers.age mixed")
	assert.False(t, mixed["Customers.score"], "Customers.score mixed")
	for _, tb := range rep.Tables {
		switch {
		case tb.Name == "Customers", tb.Name == "order":
			assert.Equal(t, int64(3), tb.Rows, tb.Name)
		case tb.Kind == schema.KindView:
			assert.Zero(t, tb.Rows, tb.Name)
		}
	}
	notes := strings.Join(rep.Notes, "\n")
	for _, n := range []string{"Line Items: primary key", "order: foreign key (Customer) to Customers kept NOT VALID",
		"view broken not created", "Customers: 1 text values lost NUL bytes"} {
		assert.Contains(t, notes, n)
	}
	sch, err := schema.InspectPostgres(ctx, db, []string{"Exact"})
	require.NoError(t, err)
	var names []string
	for _, tb := range sch.Tables {
		names = append(names, tb.Name)
	}
	assert.Equal(t, []string{"big_orders", "Customers", "empty", "Line Items", "order"}, names)
	c := sch.Lookup("Exact.Customers")
	require.NotNil(t, c)
	assert.Equal(t, []string{"CustomerID"}, c.PrimaryKey)
	if assert.NotNil(t, c.Column("FirstName")) {
		assert.True(t, c.Column("FirstName").NotNull)
	}
	o := sch.Lookup("Exact.order")
	require.NotNil(t, o)
	if assert.Len(t, o.ForeignKeys, 1) {
		assert.Equal(t, "Customers", o.ForeignKeys[0].RefTable)
	}
	res := query(t, db, "Exact", `SELECT "FirstName", "Name", age, score, price, pic, born, flag FROM "Customers" ORDER BY "CustomerID"`)
	assert.Nil(t, res.Error)
	assert.Equal(t, [][]any{
		{"Ada", "A", "36", 1.5, 12.5, []byte{1, 2}, "1815-12-10", int64(1)},
		{"Grace", "G", "unknown", 2.0, int64(7), []byte{3}, "1906-12-09", int64(0)},
		{"Nulbyte", nil, nil, nil, int64(3), nil, nil, nil},
	}, res.Rows)
	res = query(t, db, "Exact", `SELECT count(*) FROM big_orders`)
	if assert.Nil(t, res.Error) && assert.Len(t, res.Rows, 1) {
		assert.Equal(t, int64(2), res.Rows[0][0], "view")
	}

	// Folded names: the plain ones in lower case, the rest exact.
	_, err = pgload.CopySQLite(ctx, src, db, "folded", pgload.CopyOptions{FoldNames: true})
	require.NoError(t, err)
	res = query(t, db, "folded", `SELECT FirstName, Name, "Line Items".note FROM Customers, "Line Items" WHERE CustomerID = 1 ORDER BY 3`)
	assert.Nil(t, res.Error)
	assert.Equal(t, [][]any{{"Ada", "A", "dup"}, {"Ada", "A", "x"}}, res.Rows, "folded")
	res = query(t, db, "folded", `SELECT count(*) FROM "Line Items"`)
	if assert.Nil(t, res.Error) && assert.Len(t, res.Rows, 1) {
		assert.Equal(t, int64(2), res.Rows[0][0], "folded")
	}

	// An existing schema needs Replace; Replace starts afresh.
	_, err = pgload.CopySQLite(ctx, src, db, "folded", pgload.CopyOptions{})
	assert.ErrorIs(t, err, text2sql.ErrInvalidConfig, "existing schema")
	_, err = pgload.CopySQLite(ctx, src, db, "folded", pgload.CopyOptions{Replace: true, FoldNames: true})
	assert.NoError(t, err, "replace")
	_, err = pgload.CopySQLite(ctx, src, db, "", pgload.CopyOptions{})
	assert.ErrorIs(t, err, text2sql.ErrInvalidConfig, "empty schema name")
	// A failed copy leaves nothing behind.
	_, err = pgload.CopySQLite(ctx, src, src, "x", pgload.CopyOptions{})
	assert.ErrorIs(t, err, text2sql.ErrInvalidConfig, "sqlite destination")
}

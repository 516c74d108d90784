package sqlite

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/dbtest"
	"github.com/text2sql-go/text2sql/internal/exectest"
	"github.com/text2sql-go/text2sql/schema"
)

// Values come back as SQLite stores them: go-sqlite3's conversion of
// DATE/DATETIME/TIMESTAMP text to time.Time (the zero time when it does not
// parse) and of BOOLEAN integers to bool is undone at the source.
func TestRawValues(t *testing.T) {
	e := open(t, dbtest.SQLiteFile(t, "v.db", `
		CREATE TABLE v (d DATE, dt DATETIME, ts TIMESTAMP, b BOOLEAN, blob BLOB, r REAL, s TEXT, n);
		INSERT INTO v VALUES ('2012-01-27', '2012-01-27 05:11:53', 'May 2010', 2, x'00ff', 1.5, 'héllo', NULL);
		INSERT INTO v VALUES (1700000000, '2012-01-27T05:11:53Z', '2013-05-06 07:08:09.123+02:00', 0, x'', -0.0, '', 7);`), Options{})
	res := exectest.Run(t, e, "SELECT * FROM v")
	want := [][]any{
		{"2012-01-27", "2012-01-27 05:11:53", "May 2010", int64(2), []byte{0, 0xff}, 1.5, "héllo", nil},
		{int64(1700000000), "2012-01-27T05:11:53Z", "2013-05-06 07:08:09.123+02:00", int64(0), []byte{}, 0.0, "", int64(7)},
	}
	require.Nil(t, res.Error, "rows %#v, error %v", res.Rows, res.Error)
	require.Equal(t, want, res.Rows, "rows %#v, error %v", res.Rows, res.Error)
	// Through a view and a CTE too, and repeated on a pooled connection.
	for i := 0; i < 3; i++ {
		res = exectest.Run(t, e, "WITH w AS (SELECT ts, b FROM v) SELECT * FROM w")
		require.Nil(t, res.Error, "%#v %v", res.Rows, res.Error)
		require.Equal(t, "May 2010", res.Rows[0][0], "%#v %v", res.Rows, res.Error)
		require.Equal(t, int64(2), res.Rows[0][1], "%#v %v", res.Rows, res.Error)
	}
}

// C3 #21: views are in the schema with their columns, and queries on them
// run.
func TestView(t *testing.T) {
	e := open(t, dbtest.SQLiteFile(t, "v.db", `CREATE TABLE s(id INTEGER, amt REAL);
		CREATE VIEW v_big AS SELECT id FROM s WHERE amt > 100;
		INSERT INTO s VALUES (1, 50), (2, 150), (3, 1000);`), Options{})
	v := e.Schema().Lookup("v_big")
	require.NotNil(t, v, "schema view: %+v", v)
	require.Equal(t, schema.KindView, v.Kind, "schema view: %+v", v)
	require.Len(t, v.Columns, 1, "schema view: %+v", v)
	require.Equal(t, "id", v.Columns[0].Name, "schema view: %+v", v)
	require.Equal(t, "INTEGER", v.Columns[0].Type, "schema view: %+v", v)
	assert.False(t, e.Schema().Name != "v" || e.Schema().Dialect != text2sql.DialectSQLite, "schema name %q dialect %q", e.Schema().Name, e.Schema().Dialect)
	res := exectest.Run(t, e, "SELECT id FROM v_big")
	require.Nil(t, res.Error, "%+v", res)
	require.Equal(t, [][]any{{int64(2)}, {int64(3)}}, res.Rows, "%+v", res)
}

// C3 #24: unknown tables and columns get a hint from the schema.
func TestHints(t *testing.T) {
	e := open(t, dbtest.SQLiteFile(t, "h.db", `
		CREATE TABLE topics (id INTEGER, name TEXT);
		CREATE TABLE tickets (id INTEGER);
		CREATE TABLE domains (id INTEGER);
		CREATE TABLE circle_kpi_4g (date TEXT, circle_name TEXT);
		CREATE TABLE cell_kpi_4g (date TEXT, circle_name TEXT, cell_name TEXT);`), Options{})
	cases := []struct {
		q, hint string
		kind    text2sql.ErrorKind
	}{
		{"SELECT name FROM topic", `did you mean "topics"?`, text2sql.KindUnknownTable},
		{"SELECT ck.date, COUNT(DISTINCT ck.cell_name) FROM circle_kpi_4g ck GROUP BY ck.date",
			`column "cell_name" is in table cell_kpi_4g`, text2sql.KindUnknownColumn},
		{"SELECT nme FROM topics", `did you mean "name" (table topics)?`, text2sql.KindUnknownColumn},
		{"SELECT * FROM main.domain", `did you mean "domains"?`, text2sql.KindUnknownTable},
		{"SELECT * FROM completely_different", "", text2sql.KindUnknownTable},
	}
	for _, c := range cases {
		res := exectest.RunKind(t, e, c.q, c.kind)
		assert.Equal(t, c.hint, res.Error.Hint, "%q: hint %q, want %q (message %q)", c.q, res.Error.Hint, c.hint, res.Error.Message)
	}
}

// Engine errors map to stable kinds.
func TestErrorKinds(t *testing.T) {
	e := open(t, dbtest.SQLiteFile(t, "k.db", "CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1);"), Options{})
	cases := map[string]text2sql.ErrorKind{
		"SELECT x FROM t WHERE":                       text2sql.KindSyntax,
		"SELECT x FROM t WHERE x = 'unterminated":     text2sql.KindSyntax,
		"SELECT x FROM t GROUP":                       text2sql.KindSyntax,
		"SELECT abs(-9223372036854775807 - 1) FROM t": text2sql.KindRuntime,
		"SELECT year(x) FROM t":                       text2sql.KindRuntime,
		"SELECT * FROM u":                             text2sql.KindUnknownTable,
		"SELECT t.y FROM t":                           text2sql.KindUnknownColumn,
		"SELECT x FROM t WHERE x = ?":                 text2sql.KindRuntime,
	}
	for q, kind := range cases {
		res := exectest.Run(t, e, q)
		if q == "SELECT x FROM t WHERE x = ?" {
			// A parameter without a value binds NULL in SQLite: no rows.
			assert.False(t, res.Error != nil && res.Error.Kind != kind, "%q: %v", q, res.Error)
			continue
		}
		exectest.WantKind(t, q, res, kind)
		assert.NotEqual(t, "", res.Error.Message, "%q: empty message", q)
	}
	res := exectest.Run(t, e, "SELECT year(x) FROM t")
	assert.Contains(t, res.Error.Message, "no such function: year", "message %q", res.Error.Message)
	// The same kinds through Check.
	for q, kind := range map[string]text2sql.ErrorKind{"SELECT * FROM u": text2sql.KindUnknownTable, "SELECT x FROM t WHERE": text2sql.KindSyntax} {
		se := exectest.SQLError(e.Check(context.Background(), q))
		assert.False(t, se == nil || se.Kind != kind, "Check(%q) = %v", q, se)
	}
}

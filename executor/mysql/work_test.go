package mysql

import (
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/dbtest"
	"github.com/text2sql-go/text2sql/internal/exectest"
	"github.com/text2sql-go/text2sql/schema"
)

// Class 10 of issue 36: one row or one call must not outlive the time
// limit on the server or take its memory. MariaDB stops a statement
// between rows only, so the Guard refuses what would build or search
// large strings inside one; every other statement stops at the limit.
// Each statement ends in KindTooLarge or KindTimeout within an order of
// magnitude of the limit (slack for a loaded machine), and nothing of
// the test's database still runs on the server 2 s after the limit.
func TestWorkBounds(t *testing.T) {
	const limit = 2 * time.Second
	e, admin, _ := setupWith(t, Options{Timeout: limit}, append(fixture,
		"CREATE TABLE doc (id INT, v LONGTEXT)", "INSERT INTO doc VALUES (1, REPEAT('x', 10000000))")...)
	needle := "CONCAT(REPEAT('a',150000),'b')"
	selfJoin := "SELECT * FROM doc d0"
	for i := 1; i <= 20; i++ {
		selfJoin += fmt.Sprintf(" JOIN doc d%d USING (id)", i)
	}
	wide := "SELECT " + strings.TrimSuffix(strings.Repeat("a, ", 400), ", ") + " FROM (SELECT SPACE(16000000) AS a) d"
	for _, q := range []string{
		wide,
		"SELECT LOCATE(" + needle + ", REPEAT('a',300000))",
		"SELECT INSTR(REPEAT('a',300000), " + needle + ")",
		"SELECT REPEAT('a',300000) LIKE CONCAT('%', " + needle + ", '%')",
		"SELECT REPLACE(REPEAT('a',300000), " + needle + ", 'x')",
		"SELECT LOCATE('" + strings.Repeat("a", 100000) + "b', '" + strings.Repeat("a", 200000) + "')",
		"SELECT LOCATE(a, b) FROM (SELECT " + needle + " a, REPEAT('a',300000) b) d",
		"SELECT " + strings.Repeat("LOCATE(a, b) + ", 99) + "LOCATE(a, b) FROM (SELECT CONCAT(REPEAT('a',8000),'b') a, REPEAT('a',8000) b) d",
		"SELECT LOCATE(CONCAT(s,'b'), CONCAT(s,s)) FROM (WITH RECURSIVE r(s, n) AS (SELECT CAST('a' AS CHAR(20000000)), 1 UNION ALL SELECT CONCAT(s, s), n + 1 FROM r WHERE n < 24) SELECT s FROM r WHERE n = 24) x",
		"SELECT LOCATE(CONCAT(g,'b'), CONCAT(g,g)) FROM (SELECT GROUP_CONCAT('a' SEPARATOR '') g FROM seq_1_to_1000000) d",
		"SELECT LOCATE(REPEAT('a', n), REPEAT('a', 2 * n)) FROM big",
		"SELECT LPAD('a', 20000000, 'b') LIKE '%c%'",
		"SELECT LOCATE(REPEAT('a', 100000), 'b'), MEDIAN(n) OVER () FROM big", // decided on its tokens
		"SELECT COUNT(*) FROM seq_1_to_100000 a, seq_1_to_100000 b WHERE a.seq * b.seq = 7",
		// The database's own long values, many times in one row.
		"SELECT " + strings.TrimSuffix(strings.Repeat("v, ", 200), ", ") + " FROM doc",
		selfJoin,
		"SELECT * FROM (SELECT " + strings.TrimSuffix(strings.Repeat("CONCAT(v) AS v, ", 20), ", ") + " FROM doc) d",
	} {
		start := time.Now()
		res := exectest.Run(t, e, q)
		took := time.Since(start)
		short := q[:min(len(q), 100)]
		if assert.NotNil(t, res.Error, "%s ran", short) {
			assert.Contains(t, []text2sql.ErrorKind{text2sql.KindTooLarge, text2sql.KindTimeout, text2sql.KindForbiddenFunction}, res.Error.Kind, "%s: %s", short, res.Error.Message)
		}
		assert.Less(t, took, 10*limit, "%s took %v", short, took)
	}
	time.Sleep(limit)
	assert.Empty(t, running(t, admin), "statements still running 2 s after their limit")
	for _, q := range []string{"SELECT * FROM doc", "SELECT * FROM doc a JOIN doc b USING (id)", "SELECT id, LENGTH(v), LEFT(v, 10) FROM doc WHERE v LIKE 'x%'"} {
		res := exectest.Run(t, e, q)
		assert.Nil(t, res.Error, "%s: %v", q, res.Error)
	}
}

// running lists the statements of the test's database the server still
// runs (a statement past KILL shows as Killed until it looks).
func running(t *testing.T, admin *sql.DB) []string {
	t.Helper()
	rows, err := admin.Query(`SELECT CONCAT(COMMAND, ' ', TIME, 's: ', LEFT(INFO, 80)) FROM information_schema.PROCESSLIST
		WHERE DB = DATABASE() AND ID <> CONNECTION_ID() AND COMMAND IN ('Query', 'Execute', 'Killed')`)
	require.NoError(t, err)
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s sql.NullString
		require.NoError(t, rows.Scan(&s))
		out = append(out, s.String)
	}
	require.NoError(t, rows.Err())
	return out
}

// What the bounds refuse, decided by the Guard alone, and ordinary
// queries with the same calls, which they do not.
func TestWorkBoundsGuard(t *testing.T) {
	g := NewGuard("", nil)
	for q, kind := range map[string]text2sql.ErrorKind{
		"SELECT SPACE(8193)":                                      text2sql.KindTooLarge,
		"SELECT REPEAT('ab', 5000)":                               text2sql.KindTooLarge,
		"SELECT REPEAT(REPEAT('a', 100), 100)":                    text2sql.KindTooLarge,
		"SELECT RPAD(name, 100000, 'x') FROM t":                   text2sql.KindTooLarge,
		"SELECT CONCAT(REPEAT('a', 5000), REPEAT('a', 5000))":     text2sql.KindTooLarge,
		"SELECT REPLACE(REPEAT('a', 100), 'a', REPEAT('b', 100))": text2sql.KindTooLarge,
		"SELECT '" + strings.Repeat("x", 9000) + "'":              text2sql.KindTooLarge,
		"SELECT REPEAT('a', n) FROM t":                            text2sql.KindForbiddenFunction,
		// Decided on its tokens (MEDIAN … OVER is MariaDB's).
		"SELECT SFORMAT('{:>16000000}', 'x'), MEDIAN(n) OVER () FROM t":                                                                               text2sql.KindTooLarge,
		"SELECT CAST('a' AS BINARY(16000000)), MEDIAN(n) OVER () FROM t":                                                                              text2sql.KindTooLarge,
		"SELECT UNCOMPRESS(x), MEDIAN(n) OVER () FROM t":                                                                                              text2sql.KindTooLarge,
		"SELECT HEX(HEX(HEX(HEX(HEX(REPEAT('a', 1000)))))), MEDIAN(n) OVER () FROM t":                                                                 text2sql.KindTooLarge,
		"SELECT LOCATE(a, b), LOCATE(a, c), MEDIAN(n) OVER () FROM t WHERE x = '" + strings.Repeat("y", 7500) + "'":                                   text2sql.KindTooLarge,
		"SELECT LOCATE(CONCAT(" + strings.Repeat("a, ", 50) + "'b'), CONCAT(" + strings.Repeat("a, ", 99) + "a)) FROM (SELECT REPEAT('a', 8000) a) d": text2sql.KindTooLarge,
		"SELECT SFORMAT('{:>16000000}', 'x')":                                                                                                         text2sql.KindTooLarge,
		"SELECT SFORMAT(f, 'x') FROM t":                                                                                                               text2sql.KindTooLarge,
		"SELECT CAST('a' AS BINARY(16000000))":                                                                                                        text2sql.KindTooLarge,
		"SELECT WEIGHT_STRING('a' AS CHAR(1000000))":                                                                                                  text2sql.KindTooLarge,
		"SELECT UNCOMPRESS(x'0000')":                                                                                                                  text2sql.KindTooLarge,
		"SELECT EXPORT_SET(-1, REPEAT('y', 1000), 'n', ',', 64)":                                                                                      text2sql.KindTooLarge,
		"SELECT DATE_FORMAT(NOW(), '" + strings.Repeat("%W", 1000) + "')":                                                                             text2sql.KindTooLarge,
		"SELECT HEX(HEX(HEX(HEX(REPEAT('a', 1000)))))":                                                                                                text2sql.KindTooLarge,
		"SELECT SPACE((SELECT MAX(n) FROM t))":                                                                                                        text2sql.KindForbiddenFunction,
		"SELECT LPAD('a', 1e9, 'b')":                                                                                                                  text2sql.KindForbiddenFunction,
		"SELECT REPEAT('a', n), MEDIAN(n) OVER () FROM t":                                                                                             text2sql.KindForbiddenFunction,
		"SELECT REPEAT('a', 9000), MEDIAN(n) OVER () FROM t":                                                                                          text2sql.KindTooLarge,
		"SELECT x.s LIKE CONCAT('%', y.s) FROM (SELECT REPEAT('a', 8000) s) x, (SELECT REPEAT('a', 8000) s) y, (SELECT REPEAT('a', 8000) s) z WHERE LOCATE(z.s, x.s) > 0": text2sql.KindTooLarge,
		"SELECT name FROM t WHERE JSON_SEARCH((SELECT JSON_ARRAYAGG(name) FROM t), 'one', name) IS NOT NULL":                                                              text2sql.KindTooLarge,
		"WITH RECURSIVE r(s, n) AS (SELECT CAST('a' AS CHAR(9999999)), 1 UNION ALL SELECT CONCAT(s, s), n + 1 FROM r WHERE n < 23) SELECT INSTR(s, s) FROM r":             text2sql.KindTooLarge,
	} {
		se := g.CheckSQL(q)
		if assert.NotNil(t, se, "%.100s passed", q) {
			assert.Equal(t, kind, se.Kind, "%.100s: %s", q, se.Message)
		}
	}
	// With the schema: the values of long columns a row may hold.
	g.knowLongColumns(&schema.Database{Tables: []*schema.Table{
		{Name: "doc", Columns: []schema.Column{{Name: "id", Type: "int(11)"}, {Name: "body", Type: "longtext"}, {Name: "meta", Type: "json"}}},
		{Name: "t", Columns: []schema.Column{{Name: "name", Type: "varchar(40)"}, {Name: "note", Type: "text"}}},
	}})
	for q, want := range map[string]bool{
		"SELECT " + strings.Repeat("body, ", 16) + "id FROM doc":                     false,
		"SELECT " + strings.Repeat("LOWER(body), ", 17) + "id FROM doc":              true,
		"SELECT * FROM doc a JOIN doc b USING (id) JOIN doc c USING (id)":            false,
		"SELECT * FROM doc a" + strings.Repeat(" JOIN doc USING (id)", 8):            true,
		"SELECT * FROM (SELECT " + strings.Repeat("body b, ", 17) + "id FROM doc) d": true,
		"SELECT " + strings.Repeat("note, name, ", 40) + "name FROM t":               false,
		"SELECT " + strings.Repeat("body, ", 17) + "MEDIAN(id) OVER () FROM doc":     true,
		"SELECT *, MEDIAN(id) OVER () FROM doc":                                      false,
	} {
		se := g.CheckSQL(q)
		assert.Equal(t, want, se != nil && se.Kind == text2sql.KindTooLarge, "%.100s: %v", q, se)
	}
	for _, q := range []string{
		"SELECT LPAD(id, 8, '0'), RPAD(name, 20, '.'), REPEAT('*', 10), SPACE(4) FROM t",
		"SELECT name FROM t WHERE name LIKE '%ada%' OR name NOT LIKE 'g_ace' OR name REGEXP '^[a-z]+$'",
		"SELECT LOCATE('a', name), INSTR(name, 'da'), REPLACE(name, ' ', '_'), SUBSTRING_INDEX(email, '@', -1) FROM t",
		"SELECT a.name FROM t a JOIN t b ON LOCATE(a.name, b.name) > 0 WHERE a.name LIKE CONCAT('%', b.name, '%')",
		"SELECT dept, GROUP_CONCAT(name ORDER BY name SEPARATOR ', ') FROM t WHERE name LIKE '%son%' GROUP BY dept",
		"SELECT * FROM (SELECT dept, GROUP_CONCAT(name) g FROM t GROUP BY dept) d WHERE d.dept LIKE 'R%'",
		"WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 100) SELECT n FROM c WHERE n LIKE '%7%'",
		"WITH RECURSIVE tree AS (SELECT id, CAST(name AS CHAR(500)) path FROM t WHERE parent IS NULL UNION ALL SELECT t.id, CONCAT(tree.path, '/', t.name) FROM t JOIN tree ON t.parent = tree.id) SELECT path FROM tree WHERE path LIKE 'a/%'",
		"SELECT CONCAT(first, ' ', last), CONCAT_WS(', ', city, country) FROM t WHERE REGEXP_LIKE(email, '^[^@]+@example[.]com$')",
		"SELECT DATE_FORMAT(born, '%W %e %M %Y'), HEX(id), SFORMAT('{} is {:>8}', name, age), CAST(name AS BINARY(16)) FROM t",
		"SELECT CASE " + strings.Repeat("WHEN code = 'abcdefgh' THEN 'some label text' ", 200) + "END FROM t WHERE name LIKE '%abc%'",
		"SELECT name FROM t WHERE CONCAT(first, ' ', last) LIKE '%ada lovelace%' AND LOWER(city) IN ('london', 'paris')",
		"SELECT HEX(id), HEX(a), HEX(b), HEX(c), HEX(d), HEX(e), HEX(f), HEX(g), HEX(h), HEX(i), HEX(j), HEX(k), HEX(l), HEX(m), MEDIAN(n) OVER () FROM t WHERE name LIKE '%son%'",
	} {
		assert.Nil(t, g.CheckSQL(q), "%s", q)
	}
}

// On MySQL the hint reaches only a query that starts with SELECT, and a
// server that sends no rows yet does not notice that the client closed
// the connection: a parenthesised query ran on after its time ran out on
// the client. The executor then kills it from another connection. The
// MySQL path is taken here on MariaDB, which ignores the hint.
func TestKilledAfterClientTimeout(t *testing.T) {
	const limit = time.Second
	e, admin, _ := setup(t, Options{Timeout: limit})
	e.flavor = MySQL
	slow := "(SELECT COUNT(*) FROM seq_1_to_100000 a, seq_1_to_100000 b WHERE a.seq * b.seq = 7)"

	// Without the kill, the server runs on.
	exectest.RunKind(t, e, slow, text2sql.KindTimeout)
	time.Sleep(limit)
	left := running(t, admin)
	assert.NotEmpty(t, left, "the server stopped on its own")
	var id int64
	require.NoError(t, admin.QueryRow("SELECT ID FROM information_schema.PROCESSLIST WHERE DB = DATABASE() AND INFO LIKE '(SELECT COUNT(*)%'").Scan(&id))
	dbtest.Exec(t, admin, fmt.Sprintf("KILL QUERY %d", id))

	e.sessions.killer = e.db
	start := time.Now()
	exectest.RunKind(t, e, slow, text2sql.KindTimeout)
	assert.Less(t, time.Since(start), 10*limit, "an order of magnitude over the limit, for a loaded machine")
	time.Sleep(2 * time.Second)
	assert.Empty(t, running(t, admin), "statements still running 2 s after their limit")
}

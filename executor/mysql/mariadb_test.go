package mysql

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/dbtest"
	"github.com/text2sql-go/text2sql/internal/exectest"
)

var salesFixture = []string{
	"CREATE TABLE sales (id INT PRIMARY KEY, region VARCHAR(10), amount DECIMAL(10,2), sold DATE, doc JSON)",
	`INSERT INTO sales VALUES (1, 'north', 10.00, '2024-01-05', '[{"k":1},{"k":2}]'), (2, 'south', 20.00, '2024-02-10', '[]'),
		(3, 'north', 30.00, '2024-03-15', '[{"k":3}]'), (4, 'east', 40.00, '2024-04-20', NULL)`,
}

// Class 8 of issue 36: valid MariaDB queries run, whether or not the
// Guard's parser (MySQL's grammar) reads them; the eight of the issue
// first, then common analytic queries. Each returns its first value.
func TestMariaDBQueriesRun(t *testing.T) {
	e, _, _ := setupWith(t, Options{}, salesFixture...)
	for q, want := range map[string]any{
		"SELECT DISTINCT MEDIAN(amount) OVER () FROM sales":  float64(25),
		"SELECT CAST(amount AS INT) FROM sales WHERE id = 2": int64(20),
		"VALUES (1), (2)": int64(1),
		"SELECT jt.k FROM sales, JSON_TABLE(sales.doc, '$[*]' COLUMNS (k INT PATH '$.k')) AS jt ORDER BY jt.k LIMIT 1":  int64(1),
		"SELECT region FROM sales WHERE region SOUNDS LIKE 'nort' LIMIT 1":                                              "north",
		"SELECT DISTINCT PERCENTILE_CONT(0.5) WITHIN GROUP (ORDER BY amount) OVER () FROM sales":                        float64(25),
		"SELECT id FROM sales ORDER BY id OFFSET 1 ROWS FETCH NEXT 2 ROWS ONLY":                                         int64(2),
		"SELECT MAX(ROWNUM()) FROM sales":                                                                               int64(4),
		"SELECT id FROM sales ORDER BY id FETCH FIRST 1 ROWS ONLY":                                                      int64(1),
		"SELECT id FROM sales ORDER BY region FETCH FIRST 1 ROWS WITH TIES":                                             int64(4),
		"SELECT CAST('7' AS INTEGER) + CAST(amount AS UNSIGNED INT) FROM sales WHERE id = 1":                            int64(17),
		"SELECT PERCENTILE_DISC(0.5) WITHIN GROUP (ORDER BY amount) OVER (PARTITION BY region) FROM sales WHERE id = 4": "40.00",
		"SELECT COUNT(*) FROM JSON_TABLE('[1,2,3]', '$[*]' COLUMNS (n FOR ORDINALITY, v INT PATH '$')) AS t":            int64(3),
		"WITH v AS (VALUES (1), (2), (3)) SELECT COUNT(*) FROM v":                                                       int64(3),
		"SELECT COUNT(*) FROM seq_1_to_10":                                                                              int64(10),
		"SELECT region, SUM(amount) FROM sales GROUP BY region ORDER BY 2 DESC, 1 LIMIT 1":                              "east",
		"SELECT region FROM sales GROUP BY region HAVING COUNT(*) > 1":                                                  "north",
		"SELECT id, RANK() OVER (ORDER BY amount DESC) r FROM sales ORDER BY r LIMIT 1":                                 int64(4),
		"SELECT NTILE(2) OVER (ORDER BY id) FROM sales LIMIT 1":                                                         int64(1),
		"SELECT LAG(amount) OVER (ORDER BY id) FROM sales WHERE id = 1":                                                 nil,
		"SELECT SUM(amount) OVER (ORDER BY id ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM sales LIMIT 1":             "10.00",
		"WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 5) SELECT SUM(n) FROM c":              "15",
		"SELECT DATE_FORMAT(sold, '%Y-%m') FROM sales WHERE id = 1":                                                     "2024-01",
		"SELECT YEAR(sold), MONTHNAME(sold) FROM sales WHERE id = 3":                                                    int64(2024),
		"SELECT DATEDIFF('2024-03-01', sold) FROM sales WHERE id = 1":                                                   int64(56),
		"SELECT TIMESTAMPDIFF(MONTH, '2024-01-01', sold) FROM sales WHERE id = 4":                                       int64(3),
		"SELECT sold + INTERVAL 1 DAY FROM sales WHERE id = 1":                                                          "2024-01-06",
		"SELECT JSON_LENGTH(doc) FROM sales WHERE id = 1":                                                               int64(2),
		"SELECT JSON_VALUE(doc, '$[0].k') FROM sales WHERE id = 1":                                                      "1",
		"SELECT JSON_EXTRACT(doc, '$[1].k') FROM sales WHERE id = 1":                                                    "2",
		"SELECT GROUP_CONCAT(region ORDER BY id SEPARATOR '|') FROM sales":                                              "north|south|north|east",
		"SELECT REGEXP_REPLACE(region, '^n', 'N') FROM sales WHERE id = 1":                                              "North",
		"SELECT region FROM sales WHERE region REGEXP '^s'":                                                             "south",
		"SELECT IF(amount > 15, 'big', 'small') FROM sales WHERE id = 1":                                                "small",
		"SELECT CASE WHEN amount >= 30 THEN 'hi' ELSE 'lo' END FROM sales WHERE id = 3":                                 "hi",
		"SELECT COALESCE(doc, 'none') FROM sales WHERE id = 4":                                                          "none",
		"SELECT NVL(doc, 'none') FROM sales WHERE id = 4":                                                               "none",
		"SELECT CONVERT(amount, CHAR) FROM sales WHERE id = 2":                                                          "20.00",
		"SELECT CAST(amount AS DECIMAL(10,1)) FROM sales WHERE id = 2":                                                  "20.0",
		"SELECT CHR(65)":                                                                   "A",
		"SELECT SFORMAT('{} + {}', 1, 2)":                                                  "1 + 2",
		"SELECT NATURAL_SORT_KEY('a10') IS NOT NULL":                                       int64(1),
		"SELECT TO_CHAR(sold, 'YYYY') FROM sales WHERE id = 1":                             "2024",
		"SELECT ADD_MONTHS(sold, 1) FROM sales WHERE id = 1":                               "2024-02-05",
		"SELECT id FROM sales WHERE (region, amount) IN (('south', 20.00))":                int64(2),
		"SELECT s.id FROM sales s JOIN sales t ON t.id = s.id + 1 WHERE t.region = 'east'": int64(3),
		"SELECT id FROM sales EXCEPT SELECT id FROM sales WHERE id > 1":                    int64(1),
		"SELECT id FROM sales INTERSECT SELECT 2":                                          int64(2),
		"SELECT `region` FROM `sales` WHERE `id` = 1":                                      "north",
	} {
		res := exectest.Run(t, e, q)
		if assert.Nil(t, res.Error, "%s: %v", q, res.Error) && assert.NotEmpty(t, res.Rows, q) {
			assert.Equal(t, want, res.Rows[0][0], q)
		}
	}
}

// The text the parser does not read is decided on its tokens: every
// attack written in MariaDB-only syntax is still refused, before it
// reaches the server, with its kind; another database's table and
// system schemas too.
func TestMariaDBSyntaxAttacks(t *testing.T) {
	w := newWorld(t, Options{})
	other := w.dbName + "_x"
	dbtest.Exec(t, w.admin, "CREATE DATABASE IF NOT EXISTS `"+other+"`", "CREATE TABLE `"+other+"`.secret (s TEXT)", "INSERT INTO `"+other+"`.secret VALUES ('hunter2')")
	t.Cleanup(func() { w.admin.Exec("DROP DATABASE `" + other + "`") })
	before := w.state(t)
	mariadbOnly := "CAST(1 AS INT)" // a construct the parser does not read
	for q, kind := range map[string]text2sql.ErrorKind{
		"SELECT " + mariadbOnly + " INTO OUTFILE '/tmp/" + w.token + "_a'":                            text2sql.KindNotReadOnly,
		"VALUES (1) INTO OUTFILE '/tmp/" + w.token + "_b'":                                            text2sql.KindNotReadOnly,
		"SELECT " + mariadbOnly + ", LOAD_FILE('/etc/hostname')":                                      text2sql.KindForbiddenFunction,
		"SELECT " + mariadbOnly + ", `sleep`(2)":                                                      text2sql.KindForbiddenFunction,
		"SELECT " + mariadbOnly + ", SLEEP (2)":                                                       text2sql.KindForbiddenFunction,
		"SELECT " + mariadbOnly + ", f_write()":                                                       text2sql.KindForbiddenFunction,
		"SELECT " + mariadbOnly + ", x.f_write()":                                                     text2sql.KindForbiddenFunction,
		"SELECT " + mariadbOnly + ", NEXTVAL(seq1)":                                                   text2sql.KindForbiddenFunction,
		"SELECT " + mariadbOnly + ", NEXT VALUE FOR seq1":                                             text2sql.KindForbiddenFunction,
		"SELECT " + mariadbOnly + ", @v := 1":                                                         text2sql.KindNotReadOnly,
		"SELECT " + mariadbOnly + " FROM singer FOR UPDATE":                                           text2sql.KindNotReadOnly,
		"SELECT " + mariadbOnly + " FROM singer LOCK IN SHARE MODE":                                   text2sql.KindNotReadOnly,
		"SELECT " + mariadbOnly + " FROM singer FOR SHARE":                                            text2sql.KindNotReadOnly,
		"SELECT " + mariadbOnly + ", s FROM `" + other + "`.secret":                                   text2sql.KindForbiddenTable,
		"SELECT " + mariadbOnly + ", (SELECT s FROM " + other + ".secret)":                            text2sql.KindForbiddenTable,
		"SELECT " + mariadbOnly + ", user FROM mysql.user":                                            text2sql.KindForbiddenTable,
		"SELECT " + mariadbOnly + " FROM information_schema.processlist":                              text2sql.KindForbiddenTable,
		"SELECT Name FROM singer WHERE Name SOUNDS LIKE 'x' UNION SELECT s FROM " + other + ".secret": text2sql.KindForbiddenTable,
		"WITH c AS (VALUES (1)) SELECT * FROM c; DELETE FROM singer":                                  text2sql.KindMultipleStatements,
		"SELECT " + mariadbOnly + " FROM singer PROCEDURE ANALYSE()":                                  text2sql.KindForbiddenStatement,
		"SELECT jt.a FROM JSON_TABLE(LOAD_FILE('/etc/hostname'), '$' COLUMNS (a TEXT PATH '$')) jt":   text2sql.KindForbiddenFunction,
		"SELECT MEDIAN(LOAD_FILE('/etc/hostname')) OVER ()":                                           text2sql.KindForbiddenFunction,
		"SELECT DEFAULT(Age) FROM singer ORDER BY Age OFFSET 1 ROWS FETCH NEXT 1 ROWS ONLY":           text2sql.KindForbiddenFunction,
	} {
		res := exectest.Run(t, w.e, q)
		if assert.NotNil(t, res.Error, "%q ran: %v", q, res.Rows) {
			assert.Equal(t, kind, res.Error.Kind, "%q: %s", q, res.Error.Message)
			assert.NotContains(t, fmt.Sprint(res.Error), "hunter2")
		}
	}
	w.assertUnchanged(t, before)
	// An alias, not a database: it runs.
	res := exectest.Run(t, w.e, "SELECT s.Name, CAST(s.Age AS INT) FROM singer s ORDER BY s.Age FETCH FIRST 1 ROWS ONLY")
	require.Nil(t, res.Error)
	assert.Equal(t, [][]any{{"Justin Brown", int64(29)}}, res.Rows)
}

package mysql

import (
	"context"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	mysqldrv "github.com/go-sql-driver/mysql"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/dbtest"
	"github.com/text2sql-go/text2sql/internal/exectest"
)

// No ROLLBACK is sent after a statement: the reset that follows it ends
// its transaction. Once the reset's answer is read (the connection taken
// again, without a transaction), the session is in no transaction, and
// DDL on the table the statement read, which waits for the statement's
// metadata lock while its transaction lasts, runs. The control shows
// that the DDL waits for a transaction that is there.
func TestTransactionEndsWithStatement(t *testing.T) {
	for _, q := range []string{
		"SELECT CONNECTION_ID(), @@in_transaction, COUNT(*) FROM singer",
		// With the check off a statement may start a transaction of its
		// own, which can write, instead of the read-only one.
		"START TRANSACTION WITH CONSISTENT SNAPSHOT",
	} {
		t.Run(q, func(t *testing.T) {
			w := newWorld(t, Options{skipCheck: true, MaxOpenConns: 1, Timeout: 5 * time.Second})
			id := exectest.Run(t, w.e, "SELECT CONNECTION_ID(), @@in_transaction").Rows[0]
			require.Equal(t, int64(1), id[1], "the statement runs inside a transaction")
			res := exectest.Run(t, w.e, q)
			require.Nil(t, res.Error)
			ctx := context.Background()
			conn, release, err := w.e.sessions.conn(ctx, new(atomic.Bool), false)
			require.NoError(t, err)
			defer release()
			var now, inTransaction int64
			require.NoError(t, conn.QueryRowContext(ctx, "SELECT CONNECTION_ID(), @@in_transaction").Scan(&now, &inTransaction))
			require.Equal(t, id[0], now, "the connection was not reused")
			assert.Equal(t, int64(0), inTransaction, "a transaction outlived its statement")
			admin, err := w.admin.Conn(ctx)
			require.NoError(t, err)
			defer admin.Close()
			_, err = admin.ExecContext(ctx, "SET SESSION lock_wait_timeout = 1")
			require.NoError(t, err)
			_, err = admin.ExecContext(ctx, "ALTER TABLE singer COMMENT 'after the statement'")
			require.NoError(t, err, "the statement's metadata lock outlived it")

			_, err = conn.ExecContext(ctx, "START TRANSACTION READ ONLY")
			require.NoError(t, err)
			require.NoError(t, conn.QueryRowContext(ctx, "SELECT COUNT(*) FROM singer").Scan(new(int)))
			_, err = admin.ExecContext(ctx, "ALTER TABLE singer COMMENT 'in a transaction'")
			assert.ErrorContains(t, err, "Lock wait timeout", "control: DDL waits for a transaction that read the table")
		})
	}
}

// Statements go as text on Open's connections, with multiStatements off
// whatever the DSN says: the server itself refuses a second statement
// in the text (with the check off), as it refused one in a prepared
// statement, and nothing after the first ";" runs.
func TestOneStatementPerText(t *testing.T) {
	db, dsn := dbtest.MySQL(t)
	dbtest.Exec(t, db, securityFixture...)
	cfg, err := mysqldrv.ParseDSN(dsn)
	require.NoError(t, err)
	cfg.MultiStatements = true
	e, err := Open(context.Background(), cfg.FormatDSN(), Options{skipCheck: true, MaxOpenConns: 1})
	require.NoError(t, err)
	defer e.Close()
	require.False(t, e.prepare, "Open's statements go as text")
	w := &world{e: e, admin: db}
	before := w.state(t)
	for _, q := range []string{
		"SELECT 1; COMMIT; INSERT INTO singer VALUES (9, 'x', 1)",
		"SELECT 1; SELECT 2",
		"COMMIT; DELETE FROM secrets",
	} {
		res := exectest.RunKind(t, e, q, text2sql.KindSyntax)
		assert.Contains(t, res.Error.Message, "syntax", q)
	}
	assert.Equal(t, before.checksums, w.state(t).checksums, "a second statement ran")
}

// A text statement could ask the client for a file (LOAD DATA LOCAL),
// which the driver gives when the host registered it: with the check
// off, the read-only transaction refuses the statement before the
// server asks for the file, and Open forces allowAllFiles off.
func TestLoadDataLocalNotRead(t *testing.T) {
	db, dsn := dbtest.MySQL(t)
	dbtest.Exec(t, db, securityFixture...)
	var asked atomic.Bool
	name := dbtest.Name("t2s_file")
	mysqldrv.RegisterReaderHandler(name, func() io.Reader {
		asked.Store(true)
		return strings.NewReader("9\tinfile\t1\n")
	})
	defer mysqldrv.DeregisterReaderHandler(name)
	e, err := Open(context.Background(), dsn+"&allowAllFiles=true", Options{skipCheck: true})
	require.NoError(t, err)
	defer e.Close()
	for _, q := range []string{
		"LOAD DATA LOCAL INFILE 'Reader::" + name + "' INTO TABLE singer",
		"LOAD DATA LOCAL INFILE '/etc/hostname' INTO TABLE singer",
	} {
		exectest.RunKind(t, e, q, text2sql.KindNotReadOnly)
	}
	assert.False(t, asked.Load(), "the server was given the file")
	assert.Equal(t, 3, count(t, db, "singer"))
}

// protocolTypes is a table of each kind of column, and values at the
// edges of their ranges.
var protocolTypes = []string{
	`CREATE TABLE kinds (id INT PRIMARY KEY, ti TINYINT, tu TINYINT UNSIGNED, si SMALLINT, mi MEDIUMINT,
		iu INT UNSIGNED, bi BIGINT, bu BIGINT UNSIGNED, f FLOAT, d DOUBLE, dec10 DECIMAL(10,3),
		dt DATE, dtm DATETIME, dtm3 DATETIME(3), ts TIMESTAMP NULL, tm TIME, tm2 TIME(2), y YEAR,
		c CHAR(3), vc VARCHAR(20), tx TEXT, bl BLOB, vb VARBINARY(8), bt BIT(5), en ENUM('a','b'), st SET('x','y'),
		js JSON, ip INET6, u UUID)`,
	`INSERT INTO kinds VALUES
		(1, -128, 255, -32768, -8388608, 4294967295, -9223372036854775808, 18446744073709551615, 1.5, -2.25e300, -1234567.125,
		 '1000-01-01', '9999-12-31 23:59:59', '2024-02-29 12:00:00.125', '2038-01-19 03:14:07', '-838:59:59', '12:34:56.78', 2155,
		 'ab', 'héllo', 'long text', x'00ff', x'0102', b'10101', 'b', 'x,y', '{"a": [1, 2]}', '::1', '123e4567-e89b-12d3-a456-426655440000'),
		(2, 0, 0, 0, 0, 0, 0, 9223372036854775807, 0, 0, 0, '2000-01-01', '2000-01-01 00:00:00', '2000-01-01 00:00:00.000', NULL, '00:00:00', '00:00:00.00', 1901,
		 '', '', '', x'', x'', b'0', 'a', '', 'null', NULL, NULL),
		(3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
		 NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)`,
}

// Open's executor reads results by the text protocol, New's by the
// binary one (prepared): every kind of column, and computed values,
// come out the same by both (integers as int64, an unsigned one past
// the largest int64 as its decimal text, dates as the server prints
// them, binary columns as []byte).
func TestProtocolsAgree(t *testing.T) {
	db, dsn := dbtest.MySQL(t)
	dbtest.Exec(t, db, protocolTypes...)
	text, err := Open(context.Background(), dsn, Options{})
	require.NoError(t, err)
	defer text.Close()
	prepared, err := New(context.Background(), db, Options{})
	require.NoError(t, err)
	require.True(t, prepared.prepare)
	for _, q := range []string{
		"SELECT * FROM kinds ORDER BY id",
		"SELECT id + 1, bu - 1, f * 2, d / 3, dec10 * 2, SUM(id), AVG(ti), COUNT(*), MAX(dtm3), ADDTIME(tm2, '00:00:00.5'), CAST(dtm AS DATE), YEAR(dt), ROWNUM(), 7 DIV 2, 1e0, 2.50 FROM kinds GROUP BY id ORDER BY id",
	} {
		want := exectest.Run(t, prepared, q)
		require.Nil(t, want.Error, q)
		got := exectest.Run(t, text, q)
		require.Nil(t, got.Error, q)
		assert.Equal(t, want.Columns, got.Columns, q)
		assert.Equal(t, want.Rows, got.Rows, q)
	}
	res := exectest.Run(t, text, "SELECT bu, bi, vb, dtm3 FROM kinds WHERE id = 1")
	assert.Equal(t, []any{"18446744073709551615", int64(-9223372036854775808), []byte{1, 2}, "2024-02-29 12:00:00.125"}, res.Rows[0])
}

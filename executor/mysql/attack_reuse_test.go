package mysql

import (
	"context"
	"database/sql"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	mysqldrv "github.com/go-sql-driver/mysql"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/dbtest"
)

// Attacks on the reuse of the executor's connections (COM_RESET_CONNECTION
// between statements instead of a new connection per statement). Each test
// fails while the attack works.

// reuseLogin creates a login on admin's server, runs grants (with %u for
// the login and %d for the database), and returns its name and its DSN
// on dsn's database; the login is dropped when t ends.
func reuseLogin(t *testing.T, admin *sql.DB, dsn string, grants ...string) (user, loginDSN string) {
	t.Helper()
	user = dbtest.Name("t2s_u")
	cfg, err := mysqldrv.ParseDSN(dsn)
	require.NoError(t, err)
	dbtest.Exec(t, admin, "CREATE USER '"+user+"'@'%' IDENTIFIED BY 'pw-"+user+"'")
	t.Cleanup(func() { admin.Exec("DROP USER IF EXISTS '" + user + "'@'%'") }) //nolint:errcheck
	for _, g := range grants {
		dbtest.Exec(t, admin, replaceAll(g, map[string]string{"%u": "'" + user + "'@'%'", "%d": "`" + cfg.DBName + "`"}))
	}
	cfg.User, cfg.Passwd = user, "pw-"+user
	return user, cfg.FormatDSN()
}

// replaceAll replaces each key of m in s by its value.
func replaceAll(s string, m map[string]string) string {
	var pairs []string
	for k, v := range m {
		pairs = append(pairs, k, v)
	}
	return strings.NewReplacer(pairs...).Replace(s)
}

func reuseRun(t *testing.T, e *Executor, q string) (*text2sql.Result, error) {
	t.Helper()
	return e.Execute(context.Background(), text2sql.ExecuteRequest{SQL: q})
}

// Finding: a login that is dropped (or locked) keeps running statements on
// the executor's reset connections, indefinitely: COM_RESET_CONNECTION does
// not authenticate again. With a connection per statement the next
// statement failed to connect. The reset reads the login's account, which
// both change (the test gives connections an hour to live, so that only
// that can close them).
func TestAttackReuseDroppedLoginStillRuns(t *testing.T) {
	for _, revoke := range []string{"DROP USER %u", "ALTER USER %u ACCOUNT LOCK"} {
		t.Run(revoke, func(t *testing.T) {
			admin, dsn := dbtest.MySQL(t)
			dbtest.Exec(t, admin, securityFixture...)
			user, login := reuseLogin(t, admin, dsn, "GRANT SELECT ON %d.* TO %u")
			e, err := Open(context.Background(), login, Options{MaxOpenConns: 1, Timeout: 5 * time.Second, MaxConnLifetime: time.Hour})
			require.NoError(t, err)
			defer e.Close()
			// The control: a connection per statement (compression).
			perStatement, err := Open(context.Background(), login+"&compress=true", Options{Timeout: 5 * time.Second})
			require.NoError(t, err)
			defer perStatement.Close()
			require.Nil(t, perStatement.sessions.reset)
			res, err := reuseRun(t, e, "SELECT CONNECTION_ID(), note FROM secrets ORDER BY id")
			require.NoError(t, err)
			require.Nil(t, res.Error)
			id := res.Rows[0][0]
			res, err = reuseRun(t, e, "SELECT CONNECTION_ID()")
			require.NoError(t, err)
			require.Equal(t, id, res.Rows[0][0], "the connection is reused while the account stays")

			dbtest.Exec(t, admin, replaceAll(revoke, map[string]string{"%u": "'" + user + "'@'%'"}))
			_, cerr := reuseRun(t, perStatement, "SELECT note FROM secrets")
			require.Error(t, cerr, "control: a new connection of the login is refused")
			res, err = reuseRun(t, e, "SELECT CONNECTION_ID(), note FROM secrets ORDER BY id")
			if err == nil && res.Error == nil {
				assert.Fail(t, "the login was "+revoke+", yet its statement ran", "on connection %v (first %v), rows %v", res.Rows[0][0], id, res.Rows)
			}
		})
	}
}

// Finding: privileges on *.* and on the database (the GRANT SELECT ON db.*
// that `text2sql grant` prints) are cached in the session when it
// authenticates (COM_INIT_DB does not look again); a REVOKE does not reach
// a connection the executor keeps resetting and reusing, so the login goes
// on reading. A new connection of the login (the control) is refused.
// Table-level grants are checked per statement and do take effect. The
// reset reads the login's account and closes the connection.
func TestAttackReuseRevokedPrivilegeStillReads(t *testing.T) {
	for _, c := range []struct{ grant, revoke string }{
		{"GRANT SELECT ON *.* TO %u", "REVOKE SELECT ON *.* FROM %u"},
		{"GRANT SELECT ON %d.* TO %u", "REVOKE SELECT ON %d.* FROM %u"},
	} {
		t.Run(c.revoke, func(t *testing.T) {
			admin, dsn := dbtest.MySQL(t)
			dbtest.Exec(t, admin, securityFixture...)
			user, login := reuseLogin(t, admin, dsn, c.grant)
			e, err := Open(context.Background(), login, Options{MaxOpenConns: 1, Timeout: 5 * time.Second, MaxConnLifetime: time.Hour})
			require.NoError(t, err)
			defer e.Close()
			perStatement, err := Open(context.Background(), login+"&compress=true", Options{Timeout: 5 * time.Second})
			require.NoError(t, err)
			defer perStatement.Close()
			res, err := reuseRun(t, e, "SELECT CONNECTION_ID(), note FROM secrets ORDER BY id")
			require.NoError(t, err)
			require.Nil(t, res.Error)

			cfg, err := mysqldrv.ParseDSN(dsn)
			require.NoError(t, err)
			dbtest.Exec(t, admin, replaceAll(c.revoke, map[string]string{"%u": "'" + user + "'@'%'", "%d": "`" + cfg.DBName + "`"}))
			res, err = reuseRun(t, perStatement, "SELECT note FROM secrets")
			require.True(t, err != nil || res.Error != nil, "control: a new connection of the login may not read")
			res, err = reuseRun(t, e, "SELECT CONNECTION_ID(), note FROM secrets ORDER BY id")
			if err == nil && res.Error == nil {
				assert.Fail(t, "SELECT was revoked from the login, yet it read the table", "rows %v", res.Rows)
			}
		})
	}
}

// Finding: a role revoked from the login stays active on the reset
// connections (the reset keeps the role, and the identity check compares
// it with the role the connection was opened with, which is the same), so
// the executor goes on reading with the revoked role's privileges.
func TestAttackReuseRevokedRoleStillActive(t *testing.T) {
	admin, dsn := dbtest.MySQL(t)
	dbtest.Exec(t, admin, securityFixture...)
	role := dbtest.Name("t2s_r")
	dbtest.Exec(t, admin, "CREATE ROLE "+role)
	t.Cleanup(func() { admin.Exec("DROP ROLE IF EXISTS " + role) }) //nolint:errcheck
	user, login := reuseLogin(t, admin, dsn, "GRANT SELECT ON %d.* TO "+role, "GRANT "+role+" TO %u", "SET DEFAULT ROLE "+role+" FOR %u")
	e, err := Open(context.Background(), login, Options{MaxOpenConns: 1, Timeout: 5 * time.Second, MaxConnLifetime: time.Hour})
	require.NoError(t, err)
	defer e.Close()
	res, err := reuseRun(t, e, "SELECT CURRENT_ROLE(), note FROM secrets ORDER BY id")
	require.NoError(t, err)
	require.Nil(t, res.Error)
	require.Equal(t, role, res.Rows[0][0])

	dbtest.Exec(t, admin, "REVOKE "+role+" FROM '"+user+"'@'%'")
	res, err = reuseRun(t, e, "SELECT CURRENT_ROLE(), note FROM secrets ORDER BY id")
	if err == nil && res.Error == nil {
		assert.Fail(t, "the role was revoked from the login, yet the statement ran with it", "rows %v", res.Rows)
	}
}

// Finding (low): the reset puts session variables back to their global
// values, and the executor sets again only the DSN's and its pinned ones:
// what the server set for the login when it authenticated — MariaDB's
// per-account MAX_STATEMENT_TIME, the bound `text2sql grant` puts on the
// login (and, the same way, what init_connect sets) — is gone from the
// second statement on a connection. Everything the executor runs outside
// its SET STATEMENT wrapper (the confirm queries, START TRANSACTION,
// Check's prepare) then runs without the login's bound.
func TestAttackReuseDropsLoginMaxStatementTime(t *testing.T) {
	admin, dsn := dbtest.MySQL(t)
	dbtest.Exec(t, admin, securityFixture...)
	_, login := reuseLogin(t, admin, dsn, "GRANT SELECT ON %d.* TO %u", "ALTER USER %u WITH MAX_STATEMENT_TIME 7")
	e, err := Open(context.Background(), login, Options{MaxOpenConns: 1, Timeout: 5 * time.Second, MaxConnLifetime: time.Hour})
	require.NoError(t, err)
	defer e.Close()
	probe := func() (id int64, limit float64) {
		t.Helper()
		conn, release, err := e.sessions.conn(context.Background(), new(atomic.Bool), false)
		require.NoError(t, err)
		defer release()
		require.NoError(t, conn.QueryRowContext(context.Background(), "SELECT CONNECTION_ID(), @@SESSION.max_statement_time").Scan(&id, &limit))
		return id, limit
	}
	id, limit := probe()
	require.Equal(t, 7.0, limit, "a new connection has the login's bound")
	res, err := reuseRun(t, e, "SELECT note FROM secrets")
	require.NoError(t, err)
	require.Nil(t, res.Error)
	now, limit := probe()
	require.Equal(t, id, now, "the connection was reused")
	assert.Equal(t, 7.0, limit, "the login's MAX_STATEMENT_TIME is gone after the reset")
}

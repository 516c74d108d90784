package mysql

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pingcap/tidb/pkg/parser"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/text2sql-go/text2sql/internal/dbtest"
	"github.com/text2sql-go/text2sql/internal/shareddata"
)

// deniedCall matches a call of a function the allow-list must refuse, in
// the parser's normalized text (lower case, literals replaced by ?).
var deniedCall = regexp.MustCompile("`?\\b(load_file|sleep|benchmark|get_lock|release_lock|release_all_locks|is_free_lock|is_used_lock|master_pos_wait|source_pos_wait|master_gtid_wait|wait_for_executed_gtid_set|nextval|setval|lastval|f_write)`?\\s*\\(|\\bnext\\s+value\\s+for\\b|last_insert_id`?\\s*\\(\\s*[^) ]")

// normalized is the parser's digest text of q: lower case, literals
// replaced by ?.
func normalized(q string) string {
	n, _ := parser.NormalizeDigest(q)
	return n
}

// FuzzGuard checks the Guard against the engine. For every text the
// Guard accepts, the text it returns is run on MariaDB as root — the
// login with every power — on a fresh connection inside START TRANSACTION
// READ ONLY with a 1 s max_statement_time, and the oracle asserts:
//
//   - the parser's normalized text of the statement (literals replaced, so
//     a name inside a string does not count) calls none of the refused
//     functions (LOAD_FILE, SLEEP, BENCHMARK, the lock and replication-wait
//     functions, sequences, LAST_INSERT_ID(expr), the fixture's stored
//     function f_write);
//   - on that connection afterwards: no user variable exists
//     (information_schema.USER_VARIABLES), no named lock is held
//     (RELEASE_ALL_LOCKS() releases none), and of the session's Com_%
//     command counters only select, begin, rollback and show_status moved
//     (no SET, no write, no DDL, no temporary table, no HANDLER, DO, CALL,
//     LOAD, PREPARE …);
//   - the fixture tables' CHECKSUM TABLE values are unchanged and the
//     server wrote no file into /tmp or its data directory.
//
// Every input, accepted or not, must be decided without a panic. Without a
// server the engine oracle is skipped (under CI=true the test fails, as
// every server test does).
func FuzzGuard(f *testing.F) {
	// A token no other program's file names carry (gcc's temporary
	// cc*.o files once held "fz").
	token := dbtest.Name("fz")
	w := &world{token: token}
	for _, a := range w.attacks() {
		f.Add(a.sql)
	}
	for _, q := range []string{
		`SELECT 'don\'t drop it' AS s`, "SELECT 1 AS x # drop the cache later",
		"SELECT Name, Age FROM singer WHERE Age > 30 ORDER BY Name LIMIT 2",
		"WITH c AS (SELECT Age FROM singer) SELECT max(Age) FROM c",
		"SELECT s.Name FROM singer s JOIN secrets t ON t.id = s.Singer_ID",
		"SELECT CAST(Age AS CHAR), CONCAT(Name, '\\'') FROM singer",
	} {
		f.Add(q)
	}
	if d := shareddata.Dir(); d != "" {
		if b, err := os.ReadFile(d + "/bird/mini_dev/mini_dev_mysql.json"); err == nil {
			var qs []shareddata.BIRDQuestion
			if json.Unmarshal(b, &qs) == nil {
				for _, q := range qs[:50] {
					f.Add(q.SQL)
				}
			}
		}
	}
	c := NewGuard("", nil)
	admin, dsn := dbtest.MySQL(f)
	dbtest.Exec(f, admin, securityFixture...)
	dbtest.Exec(f, admin, "CREATE FUNCTION f_write() RETURNS INT MODIFIES SQL DATA BEGIN DELETE FROM secrets; RETURN 1; END")
	e, err := Open(context.Background(), dsn, Options{})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { e.Close() })
	var dbName, datadir string
	if err := admin.QueryRow("SELECT DATABASE(), @@datadir").Scan(&dbName, &datadir); err != nil {
		f.Fatal(err)
	}
	ow := &world{e: e, admin: admin, dbName: dbName, datadir: datadir, token: token}
	before := ow.state(f)

	f.Fuzz(func(t *testing.T, q string) {
		text, se := c.Prepare(q)
		if se != nil {
			require.NotEqual(t, "", se.Kind, "refusal without kind or message: %#v", se)
			require.NotEqual(t, "", se.Message, "refusal without kind or message: %#v", se)
			return
		}
		m := deniedCall.FindString(normalized(text))
		require.Equal(t, "", m, "accepted a call of %q: %q", m, q)
		finding := engineOracle(t, e, text)
		require.Equal(t, "", finding, finding)
		after := ow.state(t)
		require.Equal(t, before.checksums, after.checksums, "%q changed the database or wrote a file:\nbefore %v\nafter  %v", q, before, after)
		require.Equal(t, strings.Join(before.files, "\n"), strings.Join(after.files, "\n"), "%q changed the database or wrote a file:\nbefore %v\nafter  %v", q, before, after)
	})
}

// allowedCommands are the Com_% counters the oracle's own statements and
// a query move.
var allowedCommands = map[string]bool{"Com_select": true, "Com_begin": true, "Com_rollback": true, "Com_show_status": true}

// engineOracle runs text on a fresh root connection in a read-only
// transaction and checks the session afterwards (see FuzzGuard); it
// returns what it found, or "".
func engineOracle(t *testing.T, e *Executor, text string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, release, err := e.sessions.conn(ctx, new(atomic.Bool), false)
	require.NoError(t, err, "oracle connection")
	defer release()
	mustExec(t, conn, "SET SESSION max_statement_time = 1, sql_select_limit = 100")
	counters := func() map[string]string {
		rows, err := conn.QueryContext(ctx, `SHOW SESSION STATUS LIKE 'Com\_%'`)
		require.NoError(t, err, "status")
		defer rows.Close()
		m := map[string]string{}
		for rows.Next() {
			var k, v string
			require.NoError(t, rows.Scan(&k, &v))
			m[k] = v
		}
		return m
	}
	before := counters()
	mustExec(t, conn, "START TRANSACTION READ ONLY")
	if rows, err := conn.QueryContext(ctx, text); err == nil {
		for rows.Next() {
		}
		rows.Close()
	}
	conn.ExecContext(ctx, "ROLLBACK") //nolint:errcheck // the connection may be gone after a failed statement
	var vars, locks sql.NullInt64
	if err := conn.QueryRowContext(ctx, "SELECT (SELECT count(*) FROM information_schema.USER_VARIABLES), RELEASE_ALL_LOCKS()").Scan(&vars, &locks); err != nil {
		return "" // the statement broke the connection (its bound on the wire): nothing to inspect
	}
	if vars.Int64 != 0 || locks.Int64 != 0 {
		return fmt.Sprintf("%q left %d user variables and %d named locks", text, vars.Int64, locks.Int64)
	}
	var moved []string
	for k, v := range counters() {
		if before[k] != v && !allowedCommands[k] {
			moved = append(moved, k)
		}
	}
	sort.Strings(moved)
	if len(moved) > 0 {
		return fmt.Sprintf("%q ran commands %v", text, moved)
	}
	return ""
}

// The oracle sees what it is there to see.
func TestFuzzOracle(t *testing.T) {
	w := newWorld(t, Options{})
	for q, want := range map[string]string{
		"SELECT @v := 1":                          "1 user variables",
		"SELECT GET_LOCK('" + w.token + "', 0)":   "1 named locks",
		"SET @@SESSION.div_precision_increment=9": "Com_set_option",
		"DO 1":                    "Com_do",
		"SELECT Name FROM singer": "",
	} {
		assert.Contains(t, engineOracle(t, w.e, q), want, q)
		if want == "" {
			assert.Empty(t, engineOracle(t, w.e, q), q)
		}
	}
	assert.NotEmpty(t, deniedCall.FindString(normalized("SELECT `sleep` (1), 'load_file(x)'")))
	assert.Empty(t, deniedCall.FindString(normalized("SELECT 'load_file(x)', sleeper(1)")))
}

func mustExec(t *testing.T, conn *sql.Conn, q string) {
	t.Helper()
	_, err := conn.ExecContext(context.Background(), q)
	require.NoError(t, err, "%s", q)
}

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/dbtest"
)

// guardCLI runs every attack through `run --dsn` (a refusal or a bound,
// exit code exitSQL) and as the SQL of a knowledge-file example given to
// `ask` (the example is refused when the knowledge base is built, so
// nothing runs), and checks afterwards that none of the files named was
// created and that digest gives what it gave before.
func guardCLI(t *testing.T, dsn string, attacks []string, files []string, digest func() string) {
	t.Helper()
	before := digest()
	for _, q := range attacks {
		out, errOut, code := cli(t, "run", "--dsn", dsn, "--json", q)
		var res struct {
			Error *struct{ Kind text2sql.ErrorKind } `json:"error"`
		}
		require.NoError(t, json.Unmarshal([]byte(out), &res), "%q: %s %s", q, out, errOut)
		if assert.Equal(t, exitSQL, code, q) && assert.NotNil(t, res.Error, q) {
			assert.True(t, res.Error.Kind.Refusal() || res.Error.Kind == text2sql.KindTooLarge, "%q: kind %s", q, res.Error.Kind)
		}

		kb := filepath.Join(t.TempDir(), "knowledge.yaml")
		yaml := "examples:\n  - id: attack\n    question: How many rows are there?\n    sql: |\n      " + strings.ReplaceAll(q, "\n", "\n      ") + "\n"
		require.NoError(t, os.WriteFile(kb, []byte(yaml), 0o600))
		_, errOut, code = cli(t, "ask", "--dsn", dsn, "--knowledge", kb, "How many rows are there?")
		assert.NotEqual(t, 0, code, "%q: the knowledge file with it was accepted", q)
		if !strings.Contains(q, "repeat(") { // too large is a bound, found only when run
			assert.Contains(t, errOut, "does not pass the guard", q)
		}
	}
	for _, f := range files {
		_, err := os.Stat(f)
		assert.True(t, os.IsNotExist(err), "%s was created", f)
		os.Remove(f)
	}
	assert.Equal(t, before, digest(), "the server's state changed")
}

// Issue 9's PostgreSQL attacks and variants through the CLI and a
// knowledge-file example, as the superuser the tests log in as.
func TestGuardCLIPostgres(t *testing.T) {
	db, dsn := dbtest.Postgres(t)
	dbtest.Exec(t, db, "CREATE TABLE singer (id int PRIMARY KEY, name text)", "INSERT INTO singer VALUES (1, 'Ada'), (2, 'Joe')",
		"CREATE SEQUENCE s")
	digest := func() string {
		var s string
		require.NoError(t, db.QueryRow(`SELECT coalesce((SELECT stats_reset::text FROM pg_stat_bgwriter), '') || '/' ||
			(SELECT count(*) FROM pg_replication_slots) || '/' || (SELECT count(*) FROM pg_largeobject_metadata) || '/' ||
			(SELECT last_value FROM s) || '/' || (SELECT string_agg(name, ',' ORDER BY id) FROM singer)`).Scan(&s))
		return s
	}
	guardCLI(t, dsn, []string{
		`SELECT ('bgwriter'::text).pg_stat_reset_shared`,
		`SELECT x.k.pg_stat_reset_shared FROM (SELECT 'bgwriter'::text AS k) x`,
		`SELECT ('slot'::name).pg_create_physical_replication_slot`,
		`SELECT n.pg_create_physical_replication_slot FROM unnest(ARRAY['slot2'::name]) n`,
		`SELECT f.pg_terminate_backend FROM unnest(ARRAY[pg_backend_pid()]) f`,
		`SELECT (s.p).pg_cancel_backend FROM (SELECT pg_backend_pid()) AS s(p)`,
		`SELECT f.pg_read_file FROM unnest(ARRAY['/etc/passwd']) f`,
		`SELECT u.f.pg_read_binary_file FROM (VALUES ('/etc/hostname')) u(f)`,
		`SELECT (3.0).pg_sleep`,
		`SELECT x.pg_sleep FROM generate_series(3, 3) x`,
		`SELECT ('s'::regclass).nextval`,
		`SELECT ('/etc/passwd'::text).lo_import`,
		`SELECT repeat('x', 10000000) FROM generate_series(1, 50)`,
	}, nil, digest)
}

// Issue 36's PostgreSQL owner code through the CLI and a knowledge-file
// example: the database's own functions, hung on operators, a domain, a
// cast, write a file (as the superuser the tests log in as) when they run;
// none runs, and the extension's view in another schema is not read.
func TestGuardCLIOwnerCode(t *testing.T) {
	db, dsn := dbtest.Postgres(t)
	marker := filepath.Join(os.TempDir(), dbtest.Name("text2sql_owner"))
	ran := `$$BEGIN COPY (SELECT 1) TO '` + marker + `'; RETURN NULL; END$$`
	dbtest.Exec(t, db, "CREATE TABLE singer (id int PRIMARY KEY, name text)", "INSERT INTO singer VALUES (1, 'Ada'), (2, 'Joe')",
		`CREATE FUNCTION m_it(int, text) RETURNS bool LANGUAGE plpgsql AS `+ran,
		`CREATE OPERATOR public.= (LEFTARG = int, RIGHTARG = text, FUNCTION = m_it)`,
		`CREATE OPERATOR public.<= (LEFTARG = int, RIGHTARG = text, FUNCTION = m_it)`,
		`CREATE FUNCTION m_i(int) RETURNS bool LANGUAGE plpgsql AS `+ran,
		`CREATE DOMAIN dom AS int CHECK (m_i(VALUE))`, `CREATE TYPE comp AS (a dom)`,
		`CREATE TYPE mood AS ENUM ('a')`, `CREATE FUNCTION m_cast(text) RETURNS mood LANGUAGE plpgsql AS `+ran,
		`CREATE CAST (text AS mood) WITH FUNCTION m_cast(text)`,
		`CREATE SCHEMA extensions`, `CREATE EXTENSION pg_stat_statements SCHEMA extensions`)
	digest := func() string {
		var s string
		require.NoError(t, db.QueryRow(`SELECT string_agg(name, ',' ORDER BY id) FROM singer`).Scan(&s))
		return s
	}
	guardCLI(t, dsn, []string{
		`SELECT 80 IN (SELECT 'x'::text)`, `SELECT CASE 31 WHEN 'x'::text THEN 1 END`, `SELECT 32 BETWEEN 'a'::text AND 'b'::text`,
		`SELECT id FROM singer s JOIN (SELECT 'x'::text AS id) t USING (id)`,
		`SELECT '{11}'::_dom`, `SELECT '(13)'::comp`, `SELECT * FROM jsonb_to_record('{"a":16}') AS x(a dom)`,
		`SELECT 'x1'::text::mood`, `SELECT query FROM extensions.pg_stat_statements`,
	}, []string{marker}, digest)
}

// Issue 9's MariaDB attacks and variants through the CLI and a
// knowledge-file example, as root: no file is written, nothing changes.
func TestGuardCLIMariaDB(t *testing.T) {
	db, dsn := dbtest.MySQL(t)
	dbtest.Exec(t, db, "CREATE TABLE singer (id INT PRIMARY KEY, Name TEXT)", "INSERT INTO singer VALUES (1, 'Ada'), (2, 'Joe')")
	out := func(name string) string { return filepath.Join(os.TempDir(), dbtest.Name("text2sql_pwn_"+name)) }
	x, y, z, w, v := out("x"), out("y"), out("z"), out("w"), out("v")
	digest := func() string {
		var table string
		var sum int64
		require.NoError(t, db.QueryRow(`CHECKSUM TABLE singer`).Scan(&table, &sum))
		var locks int
		require.NoError(t, db.QueryRow(`SELECT IS_USED_LOCK('x') IS NOT NULL`).Scan(&locks))
		return table + "/" + strings.Repeat("l", locks) + "/" + string(rune('0'+sum%10))
	}
	guardCLI(t, dsn, []string{
		`SELECT 1 /*! INTO OUTFILE '` + x + `' */ FROM DUAL`,
		`SELECT Name /*!50000 INTO OUTFILE '` + y + `' */ FROM singer`,
		`SELECT Name FROM singer /*M! INTO OUTFILE '` + y + `' */`,
		`SELECT 'a\' , ' INTO OUTFILE "` + z + `" -- '`,
		`SELECT "a\" , " INTO OUTFILE '` + z + `' -- "`,
		"SELECT Name FROM singer # '\nINTO OUTFILE '" + w + "' -- '",
		"SELECT 1 --1 INTO OUTFILE '" + v + "'\nFROM DUAL",
		`SELECT * FROM (SELECT Name FROM singer) s INTO DUMPFILE '` + v + `'`,
		`SELECT LOAD_FILE('/etc/hostname')`,
		"SELECT `load_file` ('/etc/hostname')",
		`SELECT @secret := 'alice'`,
		`SELECT GET_LOCK('x', 0)`,
		`SELECT SLEEP(3)`,
		`SELECT BENCHMARK(100000000, MD5('x'))`,
		`SELECT Name FROM singer FOR UPDATE`,
		`SELECT Name FROM singer LOCK IN SHARE MODE`,
	}, []string{x, y, z, w, v}, digest)
}

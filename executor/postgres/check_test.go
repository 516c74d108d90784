package postgres

import (
	"context"
	"flag"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/jmoiron/sqlx"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
)

// The statement check without a server: what it accepts and what it
// refuses, with which kind.
func TestGuard(t *testing.T) {
	c := NewGuard(nil, []string{"util.safe_fn", "my_fn"})
	accept := []string{
		`SELECT 1`,
		`select 1;`,
		`SELECT 1; -- trailing comment`,
		`(SELECT 1) UNION (SELECT 2) ORDER BY 1`,
		`VALUES (1, 'a'), (2, 'b')`,
		`TABLE users`,
		`WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t WHERE n < 5) SELECT n FROM t`,
		`WITH a AS MATERIALIZED (SELECT 1 AS x), b AS NOT MATERIALIZED (SELECT x FROM a) SELECT * FROM b`,
		`SELECT name, count(*) FILTER (WHERE x > 1), string_agg(s, ',' ORDER BY s), percentile_cont(0.5) WITHIN GROUP (ORDER BY price) FROM t GROUP BY ROLLUP (name)`,
		`SELECT row_number() OVER w, lag(x, 1) OVER (PARTITION BY y ORDER BY z) FROM t WINDOW w AS (ORDER BY x)`,
		`SELECT EXTRACT(YEAR FROM d), date_trunc('month', d), d AT TIME ZONE 'UTC', to_char(d, 'YYYY'), now() - interval '1 day', CURRENT_DATE, age(d) FROM t`,
		`SELECT substring(s FROM 2 FOR 3), position('a' IN s), overlay(s PLACING 'x' FROM 1), trim(BOTH ' ' FROM s), s SIMILAR TO 'a%', s ILIKE '%ann%', s ~* 'x' FROM t`,
		`SELECT coalesce(a, b), nullif(a, 0), greatest(a, b), least(a, b), CASE WHEN a THEN 1 END, a IS DISTINCT FROM b, x::text, CAST(x AS numeric(10,2)), int4(x) FROM t`,
		`SELECT j->>'a', j #> '{a,b}', jsonb_build_object('k', 1), jsonb_path_query(j, '$.a'), ARRAY[1,2] && ARRAY[2], unnest(ARRAY[1,2]) FROM t`,
		`SELECT * FROM t, LATERAL (SELECT * FROM generate_series(1, t.n)) g, unnest(ARRAY[1,2]) WITH ORDINALITY u(v, i)`,
		`SELECT * FROM json_to_recordset('[{"a":1}]') AS x(a int)`,
		`SELECT pg_catalog.lower(s), util.safe_fn(1), my_fn(2), pg_catalog.my_fn(3) FROM t`,
		`SELECT * FROM t TABLESAMPLE SYSTEM (10)`,
		`SELECT x FROM t WHERE x IN (SELECT y FROM u WHERE EXISTS (SELECT 1 FROM v))`,
		`SELECT 'SELECT 1; DROP TABLE t' AS s, $$ ; DELETE FROM t; $$ AS d, E'it\'s; x' AS e`,
		`SELECT "DELETE", "into" FROM "FOR UPDATE"`,
		`SELECT * FROM t ORDER BY x FETCH FIRST 5 ROWS WITH TIES`,
		`SELECT 1 /* nested /* comment */ still */`,
	}
	for _, q := range accept {
		se := c.CheckSQL(q)
		assert.Nil(t, se, "refused %q: %v", q, se)
	}
	refuse := map[string]text2sql.ErrorKind{
		``:                         text2sql.KindEmpty,
		`;;`:                       text2sql.KindEmpty,
		`/* nothing */`:            text2sql.KindEmpty,
		`SELECT 1; SELECT 2`:       text2sql.KindMultipleStatements,
		`SELECT 1;;DELETE FROM t`:  text2sql.KindMultipleStatements,
		`INSERT INTO t VALUES (1)`: text2sql.KindNotReadOnly,
		`UPDATE t SET x = 1`:       text2sql.KindNotReadOnly,
		`DELETE FROM t`:            text2sql.KindNotReadOnly,
		`MERGE INTO t USING u ON true WHEN MATCHED THEN DELETE`: text2sql.KindNotReadOnly,
		`TRUNCATE t`:                     text2sql.KindNotReadOnly,
		`CREATE TABLE x (a int)`:         text2sql.KindNotReadOnly,
		`CREATE TABLE x AS SELECT 1`:     text2sql.KindNotReadOnly,
		`CREATE VIEW v AS SELECT 1`:      text2sql.KindNotReadOnly,
		`DROP TABLE t`:                   text2sql.KindNotReadOnly,
		`ALTER TABLE t ADD COLUMN y int`: text2sql.KindNotReadOnly,
		`GRANT ALL ON t TO public`:       text2sql.KindNotReadOnly,
		`COMMENT ON TABLE t IS 'x'`:      text2sql.KindNotReadOnly,
		`LOCK TABLE t`:                   text2sql.KindNotReadOnly,
		`REFRESH MATERIALIZED VIEW mv`:   text2sql.KindNotReadOnly,
		`ANALYZE t`:                      text2sql.KindNotReadOnly,
		`SELECT * INTO x FROM t`:         text2sql.KindNotReadOnly,
		`SELECT * FROM t FOR UPDATE`:     text2sql.KindNotReadOnly,
		`WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d`:      text2sql.KindNotReadOnly,
		`WITH x AS (SELECT 1) DELETE FROM t`:                         text2sql.KindNotReadOnly,
		`COPY t TO STDOUT`:                                           text2sql.KindForbiddenStatement,
		`DO $$ BEGIN PERFORM 1; END $$`:                              text2sql.KindForbiddenStatement,
		`SET search_path TO x`:                                       text2sql.KindForbiddenStatement,
		`SET LOCAL ROLE postgres`:                                    text2sql.KindForbiddenStatement,
		`RESET ALL`:                                                  text2sql.KindForbiddenStatement,
		"SELECT a FROM t \x00; SELECT set_config('role', 'x', true)": text2sql.KindSyntax,
		`SHOW ALL`:                      text2sql.KindForbiddenStatement,
		`CALL p()`:                      text2sql.KindForbiddenStatement,
		`BEGIN`:                         text2sql.KindForbiddenStatement,
		`COMMIT`:                        text2sql.KindForbiddenStatement,
		`ROLLBACK`:                      text2sql.KindForbiddenStatement,
		`SAVEPOINT s`:                   text2sql.KindForbiddenStatement,
		`START TRANSACTION READ WRITE`:  text2sql.KindForbiddenStatement,
		`LISTEN c`:                      text2sql.KindForbiddenStatement,
		`NOTIFY c, 'x'`:                 text2sql.KindForbiddenStatement,
		`UNLISTEN *`:                    text2sql.KindForbiddenStatement,
		`EXPLAIN SELECT 1`:              text2sql.KindForbiddenStatement,
		`EXPLAIN ANALYZE DELETE FROM t`: text2sql.KindForbiddenStatement,
		`PREPARE p AS SELECT 1`:         text2sql.KindForbiddenStatement,
		`EXECUTE p`:                     text2sql.KindForbiddenStatement,
		`DECLARE c CURSOR FOR SELECT 1`: text2sql.KindForbiddenStatement,
		`FETCH ALL FROM c`:              text2sql.KindForbiddenStatement,
		`VACUUM`:                        text2sql.KindForbiddenStatement,
		`DISCARD ALL`:                   text2sql.KindForbiddenStatement,
		`LOAD 'x'`:                      text2sql.KindForbiddenStatement,
		`CHECKPOINT`:                    text2sql.KindForbiddenStatement,
		`SELECT pg_sleep(1)`:            text2sql.KindForbiddenFunction,
		`SELECT util.other_fn(1)`:       text2sql.KindForbiddenFunction,
		`SELECT other.my_fn(1)`:         text2sql.KindForbiddenFunction,
		`SELECT a.b.c(1)`:               text2sql.KindForbiddenFunction,
		`SELEC 1`:                       text2sql.KindSyntax,
		`SELECT (1`:                     text2sql.KindSyntax,
		`SELECT 'unterminated`:          text2sql.KindSyntax,
		`SELECT TOP 5 * FROM t`:         text2sql.KindDialect,
		"SELECT `a` FROM t":             text2sql.KindDialect,
		`SELECT * FROM t LIMIT 5, 10`:   text2sql.KindDialect,
		`SELECT iif(a, 1, 2) FROM t`:    text2sql.KindDialect,
	}
	for q, kind := range refuse {
		se := c.CheckSQL(q)
		assert.False(t, se == nil || se.Kind != kind, "CheckSQL(%q) = %v, want %s", q, se, kind)
		assert.Error(t, c.Check(context.Background(), q), "Check(%q) = nil", q)
	}
	assert.NoError(t, c.Check(context.Background(), "SELECT 1"), "Check(SELECT 1)")
}

var updateCatalog = flag.Bool("update-catalog", false, "rewrite catalog.tsv from the test server's pg_catalog")

// The allow-list derived from the server's catalog: the built-in snapshot
// is the test server's pg_catalog (PostgreSQL 15); the functions the
// issue found refused are allowed by the rule; every function the rule
// allows is immutable or stable, or a reviewed volatile one; none of the
// dangerous ones is allowed, by either catalog.
func TestCatalogRule(t *testing.T) {
	db, _ := testDB(t)
	ctx := context.Background()
	var rows []CatalogRow
	require.NoError(t, sqlx.SelectContext(ctx, sqlx.NewDb(db, "pgx"), &rows, CatalogQuery))
	procs := procsOf(rows)
	var major int
	require.NoError(t, db.QueryRow(`SELECT current_setting('server_version_num')::int / 10000`).Scan(&major))
	if *updateCatalog {
		require.Equal(t, 15, major, "the snapshot is of PostgreSQL 15")
		require.NoError(t, os.WriteFile("catalog.tsv", []byte(formatTSV(procs)), 0o644))
	}
	if major == 15 {
		assert.Equal(t, builtinTSV, formatTSV(procs), "catalog.tsv is stale: go test ./executor/postgres -run TestCatalogRule -update-catalog")
	}
	live := newCatalog(procs)
	volatile := map[string]bool{}
	for _, p := range procs {
		if p.core && p.callable && p.volatility == 'v' {
			volatile[p.name] = true
		}
	}
	reviewed := map[string]bool{}
	for _, n := range volatileAllowed {
		reviewed[n] = true
	}
	n := 0
	for name, ok := range live.allowed {
		if ok {
			n++
			assert.False(t, volatile[name] && !reviewed[name], "volatile %s allowed", name)
		}
	}
	t.Logf("%d pg_catalog function names allowed of %d", n, len(live.allowed))
	for _, cat := range []*Catalog{live, BuiltinCatalog()} {
		for _, f := range strings.Fields(`host format_type xpath lower count sum string_agg row_number date_trunc to_char
			jsonb_path_query generate_series unnest random now age int4 numeric text regexp_replace array_agg`) {
			assert.True(t, cat.allowed[f], "%s refused", f)
		}
		for _, f := range strings.Fields(`pg_sleep pg_sleep_for pg_sleep_until pg_terminate_backend pg_cancel_backend
			lo_import lo_export lo_get lo_put lo_create lo_unlink lo_open loread nextval setval currval lastval
			set_config current_setting pg_advisory_lock pg_advisory_xact_lock pg_try_advisory_lock pg_read_file
			pg_read_binary_file pg_ls_dir pg_stat_file pg_reload_conf pg_rotate_logfile pg_switch_wal pg_notify
			query_to_xml table_to_xml cursor_to_xml database_to_xml schema_to_xml ts_stat ts_rewrite txid_current
			pg_current_xact_id pg_logical_emit_message pg_promote setseed pg_stat_reset_shared pg_stat_reset
			pg_create_physical_replication_slot pg_create_logical_replication_slot pg_drop_replication_slot
			pg_stat_get_activity pg_show_all_settings pg_config pg_export_snapshot pg_get_replication_slots
			pg_log_backend_memory_contexts pg_listening_channels pg_cursor pg_current_logfile`) {
			assert.False(t, cat.allowed[f], "%s allowed", f)
			assert.True(t, cat.known[f], "%s unknown", f)
		}
	}
	for name := range otherDialect {
		assert.False(t, live.known[name] && name != "char", "%s is a PostgreSQL function but listed as another dialect's", name)
	}
}

// The check never panics; an accepted text stays accepted with a trailing
// semicolon.
func FuzzGuard(f *testing.F) {
	for _, s := range []string{`SELECT 1`, `WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d`, `SELECT pg_sleep(1)`,
		`SELECT 1; DROP TABLE t`, `COPY t TO STDOUT`, `SELECT * FROM t FOR UPDATE`, "SELECT 'a''b' /* c */ -- d\n", `$$`} {
		f.Add(s)
	}
	c := NewGuard(nil, nil)
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			assert.NotNil(t, c.CheckSQL(s), "invalid UTF-8 accepted: %q", s)
			return
		}
		se := c.CheckSQL(s)
		if se != nil {
			return
		}
		se2 := c.CheckSQL(s + "\n;")
		assert.False(t, se2 != nil && !strings.Contains(s, "--"), "%q accepted but %q refused: %v", s, s+"\n;", se2)
	})
}

// guardSamples are statements of every kind the check decides, seeds of
// the fuzz tests.
var guardSamples = []string{
	`SELECT 1`, `VALUES (1)`, `TABLE t`, `SELECT * FROM t FOR UPDATE`, `SELECT * INTO x FROM t`,
	`WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d`, `WITH a AS (SELECT 1) SELECT * FROM a`,
	`SELECT pg_sleep(1)`, `SELECT pg_catalog.pg_sleep(1)`, `SELECT pg_catalog.lower('x')`, `SELECT public.lower('x')`,
	`SELECT util.safe_fn(1)`, `SELECT my_fn(1)`, `SELECT a.b.c(1)`, `SELECT 1 OPERATOR(pg_catalog.+) 2`,
	`SELECT 1 OPERATOR(public.+) 2`, `SELECT * FROM t TABLESAMPLE SYSTEM (1)`, `SELECT * FROM t TABLESAMPLE x (1)`,
	`SELECT 1; SELECT 2`, `DROP TABLE t`, `COPY t TO STDOUT`, `SELECT count(*) FILTER (WHERE pg_sleep(1) IS NULL) FROM t`,
	`SELECT * FROM t, LATERAL (SELECT lo_import('x')) x`, `SELECT * FROM ROWS FROM (generate_series(1,2), pg_sleep(1))`,
	`SELECT ""()`, `SELECT x FROM t WHERE a = ANY (SELECT b FROM u FOR SHARE)`, `SELECT (SELECT 1 FOR UPDATE)`,
	`SELECT EXTRACT(year FROM now()), substring('x' FROM 1), 'a' SIMILAR TO 'b', now() AT TIME ZONE 'UTC'`,
}

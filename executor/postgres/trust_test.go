package postgres

import (
	"context"
	"database/sql"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/dbtest"
	"github.com/text2sql-go/text2sql/internal/exectest"
)

// ran is the message every owner function of ownerDB raises: a result
// that carries it means owner code ran.
const ran = "OWNER CODE RAN"

// extensionsDB installs the extensions a database commonly has, in their
// default schema (public), and a table using their types.
var extensionsDB = []string{
	`CREATE EXTENSION citext`, `CREATE EXTENSION pgcrypto`, `CREATE EXTENSION pg_trgm`, `CREATE EXTENSION hstore`,
	`CREATE TABLE singer (id int PRIMARY KEY, name citext NOT NULL, age int, country text, joined date, tags hstore)`,
	`INSERT INTO singer VALUES (1, 'Joe', 31, 'France', '2014-01-05', 'genre=>rock'), (2, 'Ann', 25, 'Spain', '2016-03-01', 'genre=>pop'),
		(3, 'Li', 44, 'France', '2010-07-30', 'genre=>rock, label=>x')`,
	`CREATE TABLE concert (id int PRIMARY KEY, singer_id int REFERENCES singer, venue text, year int, fee numeric(10,2))`,
	`INSERT INTO concert VALUES (1, 1, 'Olympia', 2014, 1200.50), (2, 1, 'Bercy', 2015, 900), (3, 2, 'Liceu', 2015, 700), (4, 3, 'Olympia', 2016, 300)`,
}

// ownerDB adds, to extensionsDB, code of the database's own (functions,
// operators, domains, casts, an operator class, a range type, all raising
// ran) hung where the server runs it without the statement naming it.
var ownerDB = append(append([]string{}, extensionsDB...),
	`CREATE FUNCTION m_it(int, text) RETURNS bool LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'OWNER CODE RAN'; END$$`,
	`CREATE FUNCTION m_ti(text, int) RETURNS bool LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'OWNER CODE RAN'; END$$`,
	`DO $$DECLARE op text; BEGIN FOREACH op IN ARRAY ARRAY['=', '<>', '<', '>', '<=', '>=', '~~'] LOOP
		EXECUTE format('CREATE OPERATOR public.%s (LEFTARG = int, RIGHTARG = text, FUNCTION = m_it)', op);
		EXECUTE format('CREATE OPERATOR public.%s (LEFTARG = text, RIGHTARG = int, FUNCTION = m_ti)', op); END LOOP; END$$`,
	`CREATE FUNCTION m_i(int) RETURNS bool LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'OWNER CODE RAN'; END$$`,
	`CREATE DOMAIN dom AS int`,
	`CREATE TABLE drow (id int, a dom)`, `INSERT INTO drow VALUES (1, 1)`,
	`ALTER DOMAIN dom ADD CONSTRAINT owner CHECK (m_i(VALUE)) NOT VALID`,
	`CREATE TYPE comp AS (a dom)`,
	`CREATE TYPE mood AS ENUM ('happy', 'sad')`,
	`CREATE FUNCTION m_cast(text) RETURNS mood LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'OWNER CODE RAN'; END$$`,
	`CREATE CAST (text AS mood) WITH FUNCTION m_cast(text)`,
	`CREATE FUNCTION lower(int) RETURNS int LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'OWNER CODE RAN'; END$$`,
	// A base type with the built-in int4 I/O and an operator class whose
	// comparisons are the owner's.
	`CREATE TYPE myint`,
	`CREATE FUNCTION myint_in(cstring) RETURNS myint LANGUAGE internal IMMUTABLE STRICT AS 'int4in'`,
	`CREATE FUNCTION myint_out(myint) RETURNS cstring LANGUAGE internal IMMUTABLE STRICT AS 'int4out'`,
	`CREATE TYPE myint (INPUT = myint_in, OUTPUT = myint_out, LIKE = int4)`,
	`CREATE FUNCTION m_cmp(myint, myint) RETURNS int LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'OWNER CODE RAN'; END$$`,
	`CREATE FUNCTION m_lt(myint, myint) RETURNS bool LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'OWNER CODE RAN'; END$$`,
	`DO $$DECLARE op text; BEGIN FOREACH op IN ARRAY ARRAY['<', '<=', '=', '>=', '>'] LOOP
		EXECUTE format('CREATE OPERATOR public.%s (LEFTARG = myint, RIGHTARG = myint, FUNCTION = m_lt)', op); END LOOP; END$$`,
	`CREATE OPERATOR CLASS myint_ops DEFAULT FOR TYPE myint USING btree AS OPERATOR 1 <, OPERATOR 2 <=, OPERATOR 3 =,
		OPERATOR 4 >=, OPERATOR 5 >, FUNCTION 1 m_cmp(myint, myint)`,
	`CREATE TABLE tagged (id int, v myint)`, `INSERT INTO tagged VALUES (1, '1'), (2, '2')`,
	`CREATE FUNCTION m_diff(float8, float8) RETURNS float8 LANGUAGE plpgsql IMMUTABLE AS $$BEGIN RAISE EXCEPTION 'OWNER CODE RAN'; END$$`,
	`CREATE TYPE frange AS RANGE (subtype = float8, subtype_diff = m_diff)`,
)

// ownerAttacks reach ownerDB's code through what the server resolves, not
// what the statement names: operators applied implicitly, a domain's
// CHECK through its array, composite and row types and column definition
// lists, a user cast, an operator class, a function's namesake. Each
// must be refused, by Execute and by Check, before any of it runs.
var ownerAttacks = []string{
	// operators applied without being written
	`SELECT 80 IN (SELECT 'x'::text)`,
	`SELECT 80 NOT IN (SELECT 'x'::text)`,
	`SELECT CASE 31 WHEN 'x'::text THEN 1 END`,
	`SELECT 32 BETWEEN 'a'::text AND 'b'::text`,
	`SELECT 33 NOT BETWEEN SYMMETRIC 'a'::text AND 'b'::text`,
	`SELECT 1 WHERE 5 = ANY (ARRAY['x'::text])`,
	`SELECT NULLIF(1, 'x'::text)`,
	`SELECT 1 IS DISTINCT FROM 'x'::text`,
	`SELECT 1 IN (2, 'x'::text)`,
	`SELECT * FROM (SELECT 1 AS k) a JOIN (SELECT 'x'::text AS k) b USING (k)`,
	`SELECT * FROM (SELECT 1 AS k) a NATURAL JOIN (SELECT 'x'::text AS k) b`,
	`SELECT 2 LIKE 'x'::text`,
	`SELECT (1, 2) = (3, 'x'::text)`,
	`SELECT age FROM singer WHERE age >= 'x'::text`,
	`SELECT 1 WHERE 'x'::text = ALL (SELECT 3)`,
	// a domain's CHECK reached without a cast to the domain
	`SELECT '{11}'::_dom`, `SELECT '{12}'::dom[]`, `SELECT '(13)'::comp`, `SELECT ROW(14)::comp`,
	`SELECT CAST(NULL AS public.dom)`, `SELECT 15::DOM`,
	`SELECT * FROM jsonb_to_record('{"a":16}') AS x(a dom)`,
	`SELECT json_populate_record(NULL::comp, '{"a":17}')`,
	`SELECT * FROM xmltable('/r' PASSING xmlparse(document '<r><a>18</a></r>') COLUMNS a dom)`,
	`SELECT domain_in('19', 'dom'::regtype, -1)`, `SELECT record_in('(20)', 'comp'::regtype, -1)`,
	`SELECT array_in('{21}', to_regtype('public.dom'), -1)`,
	`SELECT coalesce(a, '22') FROM drow`, `SELECT * FROM drow`, `SELECT d FROM drow d`,
	// a user cast
	`SELECT 'happy'::text::mood`, `SELECT CAST('sad'::text AS public.mood)`, `SELECT mood('happy'::text)`,
	// an operator class, a range type's support function
	`SELECT DISTINCT v FROM tagged`, `SELECT id FROM tagged ORDER BY v`, `SELECT count(*) FROM tagged GROUP BY v`,
	`SELECT v FROM tagged UNION SELECT v FROM tagged`, `SELECT * FROM tagged a JOIN tagged b USING (v)`,
	`SELECT '[1,2]'::frange`,
	// a namesake of a built-in function, also in attribute notation
	`SELECT lower(5)`, `SELECT (5).lower`, `SELECT t.lower FROM (SELECT 6) t(x)`,
}

func TestOwnerCodeRefused(t *testing.T) {
	db, _ := testDB(t, ownerDB...)
	e := newExec(t, db, Options{})
	exectest.RefusedUntripped(t, e, ran, ownerAttacks...)
	for _, q := range ownerAttacks {
		err := e.Check(context.Background(), q)
		if assert.Error(t, err, q) {
			assert.NotContains(t, err.Error(), ran, q)
		}
	}
	// What is harmless still runs: the tables' other columns, the
	// extensions' operators whose symbols the database did not redefine.
	for _, q := range []string{`SELECT id FROM tagged`, `SELECT id + 1 FROM drow`,
		`SELECT name FROM singer WHERE tags ? 'label' OR name % 'Jo' ORDER BY name`} {
		assert.Nil(t, exectest.Run(t, e, q).Error, q)
	}
	// A symbol the database defines on built-in types is refused
	// everywhere: the server may pick the database's operator for any
	// pair of values.
	res := exectest.RunKind(t, e, `SELECT id FROM drow WHERE id = 1`, text2sql.KindForbiddenFunction)
	assert.Contains(t, res.Error.Message, "public.=")
}

// The owner's code attached after Open is caught in the statement's own
// transaction: an operator moved onto the search path by the probe's
// look-up of the statement's symbols, a new operator or a domain's new
// CHECK by the catalog's watermark, after which the executor reads the
// catalog again and checks anew.
func TestOwnerCodeAfterOpen(t *testing.T) {
	db, _ := testDB(t, append([]string{`CREATE SCHEMA elsewhere`,
		`CREATE FUNCTION elsewhere.m_it(int, text) RETURNS bool LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'OWNER CODE RAN'; END$$`,
		`CREATE OPERATOR elsewhere.= (LEFTARG = int, RIGHTARG = text, FUNCTION = elsewhere.m_it)`}, extensionsDB...)...)
	e := newExec(t, db, Options{})
	q := `SELECT 80 IN (SELECT 'x'::text)`
	assert.Equal(t, "42883", exectest.Run(t, e, q).Error.SQLState, "no int = text operator on the search path yet")
	dbtest.Exec(t, db, `ALTER OPERATOR elsewhere.= (int, text) SET SCHEMA public`, `CREATE DOMAIN later AS int`)
	res := exectest.RunKind(t, e, q, text2sql.KindForbiddenFunction)
	assert.Contains(t, res.Error.Message, "the server's catalog has operator public.=")
	dbtest.Exec(t, db, `CREATE OPERATOR public.< (LEFTARG = int, RIGHTARG = text, FUNCTION = elsewhere.m_it)`)
	res = exectest.RunKind(t, e, `SELECT 1 < 'x'::text`, text2sql.KindForbiddenFunction)
	assert.Contains(t, res.Error.Message, "may resolve to public.<")
	assert.Nil(t, exectest.Run(t, e, `SELECT 1::later`).Error)
	dbtest.Exec(t, db,
		`CREATE FUNCTION m_i(int) RETURNS bool LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'OWNER CODE RAN'; END$$`,
		`ALTER DOMAIN later ADD CONSTRAINT owner CHECK (m_i(VALUE))`)
	exectest.RefusedUntripped(t, e, ran, `SELECT 1::later`, `SELECT '{1}'::later[]`)
}

// Untrusted code on a built-in type reaches every value of it: every
// statement is refused.
func TestOwnerCodeOnBuiltinType(t *testing.T) {
	db, _ := testDB(t, `CREATE TABLE t (b bool)`, `INSERT INTO t VALUES (true)`,
		`CREATE FUNCTION m_bd(bool) RETURNS date LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'OWNER CODE RAN'; END$$`,
		`CREATE CAST (bool AS date) WITH FUNCTION m_bd(bool) AS IMPLICIT`)
	e := newExec(t, db, Options{})
	res := exectest.RunKind(t, e, `SELECT b FROM t`, text2sql.KindForbiddenFunction)
	assert.Contains(t, res.Error.Message, "pg_catalog.date")
	exectest.RefusedUntripped(t, e, ran, `SELECT b::date FROM t`, `SELECT 1`)
}

// Only the relations the host exposed are read: not an extension's view
// in another schema (Supabase's layout), not a relation of a schema left
// out of Options.Schemas, not one hidden behind a WITH query's name that
// the relation's own WITH query cannot see. Relations are sent qualified.
func TestExposedRelationsOnly(t *testing.T) {
	db, _ := testDB(t, append([]string{`CREATE SCHEMA extensions`, `CREATE EXTENSION pg_stat_statements SCHEMA extensions`,
		`CREATE SCHEMA hidden`, `CREATE TABLE hidden.secret (pw text)`, `INSERT INTO hidden.secret VALUES ('hunter2')`,
		`CREATE TABLE public.secret (pw text)`},
		extensionsDB...)...)
	e := newExec(t, db, Options{Schemas: []string{"public"}, SearchPath: []string{"hidden", "public"}})
	for q, kind := range map[string]text2sql.ErrorKind{
		`SELECT query FROM extensions.pg_stat_statements`:                         text2sql.KindForbiddenTable,
		`SELECT pw FROM hidden.secret`:                                            text2sql.KindForbiddenTable,
		`SELECT pw FROM pg_temp.secret`:                                           text2sql.KindForbiddenTable,
		`WITH x AS (SELECT 1) SELECT pw FROM x, hidden.secret`:                    text2sql.KindForbiddenTable,
		`WITH s AS (SELECT * FROM secret_x) SELECT * FROM s`:                      text2sql.KindUnknownTable,
		`WITH secret_x AS (SELECT * FROM secret_x) SELECT * FROM secret_x`:        text2sql.KindUnknownTable,
		`WITH a AS (SELECT * FROM b), b AS (SELECT 1) SELECT * FROM a`:            text2sql.KindUnknownTable,
		`SELECT * FROM pg_stat_statements`:                                        text2sql.KindForbiddenTable,
		`SELECT * FROM db.public.singer`:                                          text2sql.KindUnknownTable,
		`SELECT (SELECT count(*) FROM spatial_ref_sys) FROM singer`:               text2sql.KindUnknownTable,
		`SELECT * FROM singer WHERE id IN (SELECT length(pw) FROM hidden.secret)`: text2sql.KindForbiddenTable,
	} {
		res := exectest.RunKind(t, e, q, kind)
		assert.NotContains(t, res.Error.Message, "hunter2", q)
	}
	// hidden comes first on the search path, but only public.secret is
	// exposed: the unqualified name means it, and the server reads it.
	res := exectest.Run(t, e, `SELECT count(*) FROM secret`)
	require.Nil(t, res.Error)
	assert.Equal(t, int64(0), res.Rows[0][0])
	for q, want := range map[string]any{
		`WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 3) SELECT max(n) FROM r`: int64(3),
		`WITH singer AS (SELECT 7 AS id) SELECT id FROM singer`:                                            int64(7),
		`SELECT (WITH c AS (SELECT count(*) AS n FROM concert) SELECT n FROM c)`:                           int64(4),
		`TABLE public.singer ORDER BY 1 LIMIT 1`:                                                           int64(1),
		`SELECT s.id FROM ONLY singer AS s WHERE s.id = 1`:                                                 int64(1),
	} {
		res := exectest.Run(t, e, q)
		if assert.Nil(t, res.Error, q) {
			assert.Equal(t, want, res.Rows[0][0], q)
		}
	}
	prepared, se := e.Guard().Prepare(`SELECT s.name FROM singer s JOIN "concert" c ON c.singer_id = s.id; -- done`)
	require.Nil(t, se)
	assert.Equal(t, `SELECT s.name FROM "public".singer s JOIN "public"."concert" c ON c.singer_id = s.id`, prepared)
}

// Ordinary analytic SQL on a database with common extensions installed in
// public, whose operators (=, <, >, LIKE, ~~, %, ->) are the
// extensions': none is refused, and the extensions' operators apply (a
// citext column compares case-blind).
func TestExtensionsNoFalseRefusal(t *testing.T) {
	db, _ := testDB(t, extensionsDB...)
	queries := analyticQueries
	// PostGIS (installed by .ci/run) defines =, <, >, && and more on its
	// types, in public.
	if _, err := db.Exec(`CREATE EXTENSION postgis`); err != nil {
		require.NotEqual(t, "true", os.Getenv("CI"), "PostGIS is not installed: %v", err)
		t.Logf("without PostGIS: %v", err)
	} else {
		dbtest.Exec(t, db, `CREATE TABLE place (id int PRIMARY KEY, venue text, geom geometry(Point, 4326))`,
			`INSERT INTO place VALUES (1, 'Olympia', 'SRID=4326;POINT(2.33 48.87)'), (2, 'Liceu', 'SRID=4326;POINT(2.17 41.38)')`)
		queries = append(slices.Clone(queries), `SELECT p.venue, count(c.id) FROM place p JOIN concert c ON c.venue = p.venue GROUP BY p.venue`,
			`SELECT venue FROM place WHERE id > 1 ORDER BY venue`, `SELECT a.venue FROM place a JOIN place b ON a.geom = b.geom`,
			`SELECT venue, ST_AsText(geom), ST_X(geom) FROM place`,
			`SELECT a.venue, b.venue, ST_Distance(a.geom::geography, b.geom::geography) FROM place a CROSS JOIN place b WHERE a.id < b.id`,
			`SELECT venue FROM place WHERE ST_DWithin(geom::geography, ST_MakePoint(2.3, 48.8)::geography, 100000)`)
	}
	// A view over the extensions' operators reads as its definition does.
	dbtest.Exec(t, db, `CREATE VIEW french AS SELECT name, age FROM singer WHERE name = 'JOE' OR country = 'France'`)
	queries = append(slices.Clone(queries), `SELECT name FROM french ORDER BY age`, `SELECT similarity(name, 'jo') FROM singer ORDER BY 1 DESC`,
		`SELECT public.similarity(name, 'jo') > 0.1 FROM singer`)
	e := newExec(t, db, Options{})
	res := exectest.Run(t, e, `SELECT count(*) FROM singer WHERE name = 'JOE'`)
	require.Nil(t, res.Error)
	assert.Equal(t, int64(1), res.Rows[0][0], "citext's = compares case-blind")
	for _, q := range queries {
		assert.Nil(t, exectest.Run(t, e, q).Error, q)
	}
	assert.GreaterOrEqual(t, len(analyticQueries), 40)
}

// analyticQueries are ordinary questions' SQL over extensionsDB.
var analyticQueries = []string{
	`SELECT count(*) FROM singer`,
	`SELECT name FROM singer WHERE age > 30`,
	`SELECT name FROM singer WHERE "age" > 30 ORDER BY age DESC`,
	`SELECT name FROM singer WHERE country = 'France'`,
	`SELECT name FROM singer WHERE name LIKE 'J%'`,
	`SELECT name FROM singer WHERE name ILIKE 'j%'`,
	`SELECT name FROM singer WHERE country <> 'Spain'`,
	`SELECT country, count(*) FROM singer GROUP BY country ORDER BY count(*) DESC`,
	`SELECT country, avg(age) FROM singer GROUP BY country HAVING avg(age) > 20`,
	`SELECT DISTINCT country FROM singer ORDER BY country`,
	`SELECT name FROM singer WHERE age BETWEEN 20 AND 40`,
	`SELECT name FROM singer WHERE country IN ('France', 'Spain')`,
	`SELECT name FROM singer WHERE id NOT IN (SELECT singer_id FROM concert)`,
	`SELECT name FROM singer WHERE id IN (SELECT singer_id FROM concert WHERE year = 2015)`,
	`SELECT s.name, c.venue FROM singer s JOIN concert c ON c.singer_id = s.id`,
	`SELECT s.name, count(c.id) FROM singer s LEFT JOIN concert c ON c.singer_id = s.id GROUP BY s.name`,
	`SELECT venue, sum(fee) FROM concert GROUP BY venue ORDER BY 2 DESC LIMIT 1`,
	`SELECT max(fee), min(fee), avg(fee)::numeric(10,2) FROM concert`,
	`SELECT name, CASE WHEN age > 40 THEN 'senior' WHEN age > 30 THEN 'mid' ELSE 'young' END FROM singer`,
	`SELECT name, CASE country WHEN 'France' THEN 'FR' ELSE 'other' END FROM singer`,
	`SELECT year, count(*) FROM concert GROUP BY year ORDER BY year`,
	`SELECT name FROM singer WHERE joined >= DATE '2014-01-01'`,
	`SELECT name FROM singer WHERE joined < '2015-01-01'::date`,
	`SELECT extract(year FROM joined), count(*) FROM singer GROUP BY 1`,
	`SELECT date_trunc('month', joined), count(*) FROM singer GROUP BY 1 ORDER BY 1`,
	`SELECT now() AT TIME ZONE 'UTC', '2014-01-01'::date`,
	`SELECT name, rank() OVER (ORDER BY age DESC) FROM singer`,
	`SELECT venue, fee, sum(fee) OVER (PARTITION BY venue ORDER BY year) FROM concert`,
	`SELECT s.name FROM singer s WHERE EXISTS (SELECT 1 FROM concert c WHERE c.singer_id = s.id AND c.fee > 1000)`,
	`WITH t AS (SELECT singer_id, sum(fee) AS total FROM concert GROUP BY singer_id) SELECT s.name, t.total FROM t JOIN singer s ON s.id = t.singer_id`,
	`SELECT name FROM singer UNION SELECT venue FROM concert`,
	`SELECT name FROM singer INTERSECT SELECT name FROM singer WHERE age > 30`,
	`SELECT name FROM singer EXCEPT SELECT name FROM singer WHERE age > 30`,
	`SELECT coalesce(tags -> 'label', 'none') FROM singer`,
	`SELECT name FROM singer WHERE tags ? 'label'`,
	`SELECT name FROM singer WHERE tags @> 'genre=>rock'`,
	`SELECT name FROM singer WHERE name % 'Jo'`,
	`SELECT upper(name), length(country), substring(country FROM 1 FOR 2) FROM singer`,
	`SELECT name || ' (' || country || ')' FROM singer`,
	`SELECT * FROM ROWS FROM (generate_series(1,3), unnest(ARRAY['a','b'])) AS t(n, s)`,
	`SELECT '{"a":1}'::jsonb ? 'a', '{"a":{"b":2}}'::jsonb #>> '{a,b}', '{"a":1}'::jsonb -> 'a'`,
	`SELECT name FROM singer WHERE lower(country) = 'france' AND age IS NOT NULL`,
	`SELECT country, string_agg(name::text, ', ' ORDER BY name) FROM singer GROUP BY country`,
	`SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY fee) FROM concert`,
	`SELECT count(*) FILTER (WHERE fee > 500) FROM concert`,
	`SELECT name FROM singer ORDER BY age NULLS LAST OFFSET 1 ROWS FETCH FIRST 1 ROWS ONLY`,
	`SELECT s.name FROM singer s JOIN concert c USING (id)`,
	`SELECT md5(name::text) FROM singer`,
	`SELECT round(avg(age), 1) FROM singer WHERE country = ANY (ARRAY['France', 'Spain'])`,
	`SELECT name FROM singer WHERE name = 'joe' OR name IS DISTINCT FROM 'ann'`,
}

// One row or one call cannot build values beyond the statement's bound:
// PostgreSQL bounds no expression's memory, so amplifying calls, literals
// copied by many references and recursive growth are refused before the
// statement runs (KindTooLarge), and what runs is bounded by the time
// limit on the server.
func TestBuiltValuesBounded(t *testing.T) {
	db, _ := testDB(t, extensionsDB...)
	e := newExec(t, db, Options{Timeout: 2 * time.Second})
	many := "SELECT " + strings.Repeat("a, ", 399) + "a FROM (SELECT repeat('x', 100000) AS a) d"
	for _, q := range []string{
		`SELECT md5(repeat('a', 200000000)), md5(repeat('b', 200000000)), md5(repeat('c', 200000000))`,
		`SELECT length(repeat(repeat('a', 10000), 10000))`,
		`SELECT repeat('a', (SELECT 200000000))`, `SELECT repeat('a', age * 100000000) FROM singer`,
		`SELECT lpad('x', 100000000)`, `SELECT rpad('', 2000000000, 'ab')`,
		`SELECT array_fill(1, ARRAY[100000, 100000])`, `SELECT array_fill(1, ARRAY[(SELECT 5)])`,
		`SELECT length(replace(repeat('a', 100000), 'a', repeat('b', 1000)))`,
		`SELECT regexp_replace(repeat('a', 100000), 'a', repeat('bb', 500), 'g')`,
		`SELECT format('%2000000000s', 'x')`, `SELECT format('%*s', 2000000000, 'x')`,
		`WITH RECURSIVE r(s, n) AS (SELECT 'a', 1 UNION ALL SELECT s || s, n + 1 FROM r WHERE n < 31) SELECT length(s) FROM r`,
		`WITH RECURSIVE r(s, n) AS (SELECT 'a', 1 UNION ALL SELECT repeat(s, 2), n + 1 FROM r WHERE n < 31) SELECT max(n) FROM r`,
		`WITH RECURSIVE r(s, n) AS (SELECT 'a'::text, 1 UNION ALL SELECT concat(s, s), n + 1 FROM r WHERE n < 31) SELECT max(n) FROM r`,
		many,
	} {
		exectest.RunKind(t, e, q, text2sql.KindTooLarge)
	}
	for _, q := range []string{`SELECT lpad(id::text, 5, '0'), repeat('*', 20) FROM singer`, `SELECT format('%-10s|', name) FROM singer`,
		`SELECT country, string_agg(name::text, ', ' ORDER BY name), array_agg(id), json_agg(age) FROM singer GROUP BY country`,
		`SELECT d::date, count(*) FROM generate_series(DATE '2014-01-01', DATE '2016-12-31', INTERVAL '1 day') d GROUP BY 1 LIMIT 3`,
		`SELECT array_agg(g) FROM generate_series(1, 1000) g`, `SELECT CAST(name AS varchar(10485760)) FROM singer`,
		`WITH RECURSIVE r(p, n) AS (SELECT name::text, 1 FROM singer UNION ALL SELECT p || '>' || n, n + 1 FROM r WHERE n < 3) SELECT count(*) FROM r`,
		`SELECT replace(country, 'a', 'A') FROM singer`} {
		assert.Nil(t, exectest.Run(t, e, q).Error, q)
	}
	// What runs without building values is bounded in time on the server.
	start := time.Now()
	exectest.RunKind(t, e, `SELECT count(*) FROM generate_series(1, 100000) a, generate_series(1, 100000) b`, text2sql.KindTimeout)
	// An order of magnitude over the 2 s limit, for a loaded machine; the
	// 10^10-row count runs for minutes otherwise.
	assert.Less(t, time.Since(start), 10*2*time.Second, "the time limit held")
	assert.Eventually(t, func() bool {
		var n int
		require.NoError(t, db.QueryRow(`SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND query LIKE '%generate_series(1, 100000) b%' AND pid <> pg_backend_pid()`).Scan(&n))
		return n == 0
	}, 2*time.Second, 50*time.Millisecond, "the statement still runs on the server")
}

// nest wraps seed in call n times, call holding X where the inner value
// goes.
func nest(call, seed string, n int) string {
	for range n {
		seed = strings.ReplaceAll(call, "X", seed)
	}
	return seed
}

// Findings of the attack on the rebuilt guard: code hung on a table's
// row type reached through its whole row, a tainted column renamed by an
// alias, index and statistics expressions the planner evaluates, objects
// added to an extension or to pg_catalog by their non-built-in owners,
// and catalog definitions of relations that are not exposed.
func TestOwnerCodeAttackFindings(t *testing.T) {
	db, _ := testDB(t, append(slices.Clone(ownerDB),
		`CREATE TABLE t1 (id int, x int)`, `INSERT INTO t1 VALUES (1, 1)`,
		`CREATE FUNCTION m_t1(t1, t1) RETURNS bool LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'OWNER CODE RAN'; END$$`,
		`CREATE OPERATOR public.=== (LEFTARG = t1, RIGHTARG = t1, FUNCTION = m_t1)`,
		`CREATE TABLE t3 (id int)`, `INSERT INTO t3 VALUES (1)`,
		`CREATE FUNCTION m_c3(t3) RETURNS text LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'OWNER CODE RAN'; END$$`,
		`CREATE CAST (t3 AS text) WITH FUNCTION m_c3(t3)`,
		`CREATE TABLE flag (on_ bool)`,
		`CREATE FUNCTION m_late() RETURNS int LANGUAGE plpgsql IMMUTABLE AS $$BEGIN IF EXISTS (SELECT 1 FROM flag) THEN RAISE EXCEPTION 'OWNER CODE RAN'; END IF; RETURN 0; END$$`,
		`CREATE TABLE t4 (id int, x int)`, `CREATE INDEX ON t4 ((x + m_late()))`,
		`CREATE TABLE t5 (id int, x int)`, `CREATE STATISTICS st5 ON (x + m_late()) FROM t5`,
		`CREATE TABLE t6 (id int, x int)`, `CREATE INDEX ON t6 (x) WHERE x > m_late()`,
		`INSERT INTO flag VALUES (true)`,
		`CREATE FUNCTION public.length(int) RETURNS int LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'OWNER CODE RAN'; END$$`,
		`CREATE FUNCTION pg_catalog.evil_in_catalog() RETURNS int LANGUAGE plpgsql IMMUTABLE AS $$BEGIN RAISE EXCEPTION 'OWNER CODE RAN'; END$$`,
		`CREATE FUNCTION pg_catalog.octet_length(int) RETURNS int LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'OWNER CODE RAN'; END$$`,
		`CREATE SCHEMA hidden`, `CREATE VIEW hidden.v AS SELECT 'hunter2'::text AS pw`)...)
	// A role that is no superuser installs citext (a trusted extension)
	// and adds its own function to it.
	owner := dbtest.Name("t2s_extowner")
	dbtest.Exec(t, db, `CREATE ROLE `+owner+` NOSUPERUSER`, `GRANT CREATE ON SCHEMA public TO `+owner, `GRANT CREATE ON DATABASE `+currentDB(t, db)+` TO `+owner,
		`SET ROLE `+owner, `CREATE SCHEMA mine`, `CREATE EXTENSION ltree SCHEMA mine`,
		`CREATE FUNCTION mine.upper(int) RETURNS int LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'OWNER CODE RAN'; END$$`,
		`ALTER EXTENSION ltree ADD FUNCTION mine.upper(int)`, `RESET ROLE`)
	t.Cleanup(func() { _, _ = db.Exec(`DROP OWNED BY ` + owner + ` CASCADE; DROP ROLE ` + owner) })
	e := newExec(t, db, Options{SearchPath: []string{"public", "mine"}})
	exectest.RefusedUntripped(t, e, ran,
		`SELECT count(*) FROM t1 a, t1 b WHERE a === b`, `SELECT a === a FROM t1 a`, `SELECT a::text FROM t3 a`,
		`SELECT DISTINCT w FROM tagged AS s(i, w)`, `SELECT i FROM tagged AS s(i, w) ORDER BY w`,
		`SELECT id FROM t4`, `SELECT id FROM t5 WHERE x + 1 > 0`, `SELECT id FROM t6 WHERE x > 0`,
		`SELECT length(42)`, `SELECT evil_in_catalog()`, `SELECT octet_length(42)`, `SELECT upper(42)`,
		`SELECT pg_get_viewdef('hidden.v'::regclass)`, `SELECT obj_description('hidden.v'::regclass, 'pg_class')`)
	assert.Nil(t, exectest.Run(t, e, `SELECT id, x + 1 FROM t1`).Error, "t1's columns are harmless")
}

func currentDB(t *testing.T, db interface{ QueryRow(string, ...any) *sql.Row }) string {
	var name string
	require.NoError(t, db.QueryRow(`SELECT current_database()`).Scan(&name))
	return name
}

// The size bound holds for calls that grow their arguments without a
// count (positional format specifiers, hex encoding, separators, padding
// typmods) and for recursion that grows a value by any call.
func TestBuiltValuesGrowth(t *testing.T) {
	db, _ := testDB(t, `CREATE TABLE s (id int, t text)`, `INSERT INTO s VALUES (1, 'x')`)
	e := newExec(t, db, Options{})
	chars := make([]string, 40)
	for i := range chars {
		chars[i] = "octet_length(''::char(10485760))"
	}
	for _, q := range []string{
		"SELECT octet_length(" + nest("format('%1$s%1$s%1$s%1$s%1$s%1$s%1$s%1$s', X)", "'abcdefghijklmnop'", 8) + ")",
		"SELECT octet_length(" + nest("encode(convert_to(X, 'UTF8'), 'hex')", "'abcdefghijklmnopabcdefghijklmnop'", 22) + ")",
		"SELECT octet_length(" + nest("concat_ws(X, 'a','a','a','a','a','a','a','a','a')", "'abcdefghijklmnop'", 8) + ")",
		"SELECT " + strings.Join(chars, ", "),
		`SELECT octet_length(1::bit(83886080)), octet_length(1::bit(83886080)), octet_length(1::bit(83886080))`,
		`WITH RECURSIVE r(n, s) AS (SELECT 1, 'ab' UNION ALL SELECT n + 1, encode(convert_to(s, 'UTF8'), 'hex') FROM r WHERE n < 27) SELECT max(octet_length(s)) FROM r`,
		`WITH RECURSIVE r(n, s) AS (SELECT 1, 'ab' UNION ALL SELECT n + 1, overlay(s placing s from 1 for 0) FROM r WHERE n < 27) SELECT max(octet_length(s)) FROM r`,
		`SELECT format('%s', 'x', 'y') || format(t, 1) FROM s`,
	} {
		exectest.RunKind(t, e, q, text2sql.KindTooLarge)
	}
}

// Findings of the second attack round, by a role that is no superuser:
// an index hung on a partition or inheritance child in another schema
// (the planner opens every child), columns, attributes and view rules
// changed after Open, views that run the owner's code or denied
// functions as the caller, and values grown by quoting or separators.
func TestOwnerCodeSecondRound(t *testing.T) {
	db, _ := testDB(t, `CREATE TABLE t (id int)`, `INSERT INTO t VALUES (1)`)
	h := dbtest.Name("t2s_hostile")
	dbtest.Exec(t, db, `CREATE ROLE `+h+` NOSUPERUSER`, `GRANT CREATE ON SCHEMA public TO `+h, `GRANT CREATE ON DATABASE `+currentDB(t, db)+` TO `+h,
		`GRANT SELECT ON t TO `+h, `SET ROLE `+h,
		`CREATE TABLE flag (on_ bool)`,
		`CREATE FUNCTION m_late() RETURNS int LANGUAGE plpgsql IMMUTABLE AS $$BEGIN IF EXISTS (SELECT 1 FROM public.flag) THEN RAISE EXCEPTION 'OWNER CODE RAN'; END IF; RETURN 0; END$$`,
		`CREATE FUNCTION m_i(int) RETURNS bool LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'OWNER CODE RAN'; END$$`,
		`CREATE FUNCTION m_f(int) RETURNS int LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'OWNER CODE RAN'; END$$`,
		`CREATE TABLE pt (id int, x int) PARTITION BY RANGE (id)`, `CREATE TABLE pt1 PARTITION OF pt FOR VALUES FROM (0) TO (100)`,
		`CREATE SCHEMA hsch`, `CREATE TABLE hsch.pt2 PARTITION OF public.pt FOR VALUES FROM (100) TO (200)`,
		`CREATE INDEX ON hsch.pt2 ((x + public.m_late()))`,
		`CREATE TABLE parent (id int, x int)`, `CREATE TABLE hsch.kid (y int) INHERITS (public.parent)`, `CREATE INDEX ON hsch.kid ((x + public.m_late()))`,
		`CREATE DOMAIN dom AS int CHECK (m_i(VALUE))`, `CREATE TYPE comp AS (a int)`,
		`CREATE TYPE mood AS ENUM ('happy', 'sad')`,
		`CREATE FUNCTION m_eq(mood, mood) RETURNS bool LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'OWNER CODE RAN'; END$$`,
		`CREATE OPERATOR public.= (LEFTARG = mood, RIGHTARG = mood, FUNCTION = m_eq)`,
		`CREATE TABLE t5 (id int, x int)`, `INSERT INTO t5 VALUES (1, 1)`,
		`CREATE VIEW v AS SELECT id FROM t`, `CREATE TABLE conv (id int, x int)`,
		`CREATE VIEW vown AS SELECT id, m_f(id) AS z FROM t`,
		`CREATE VIEW vfile WITH (security_invoker = true) AS SELECT pg_catalog.pg_read_file('/etc/hostname') AS f`,
		`CREATE VIEW vcat WITH (security_invoker = true) AS SELECT rolname::text AS name FROM pg_catalog.pg_roles`,
		`INSERT INTO flag VALUES (true)`, `RESET ROLE`)
	t.Cleanup(func() { _, _ = db.Exec(`DROP OWNED BY ` + h + ` CASCADE; DROP ROLE ` + h) })
	e := newExec(t, db, Options{Schemas: []string{"public"}})
	exectest.RefusedUntripped(t, e, ran, `SELECT id FROM pt`, `SELECT id FROM pt WHERE x = 1`, `SELECT id FROM parent`,
		`SELECT id FROM vown`, `SELECT f FROM vfile`, `SELECT name FROM vcat`)
	for _, q := range []string{`SELECT '(1)'::comp`, `SELECT id FROM t5 WHERE x = 1`, `SELECT id FROM v`, `SELECT id FROM conv`} {
		assert.Nil(t, exectest.Run(t, e, q).Error, q)
	}
	dbtest.Exec(t, db, `SET ROLE `+h, `ALTER TYPE comp ADD ATTRIBUTE b dom`, `ALTER TABLE t5 ADD COLUMN m mood`, `UPDATE t5 SET m = 'happy'`,
		`CREATE OR REPLACE VIEW v AS SELECT id, m_f(id) AS z FROM t`,
		`CREATE RULE "_RETURN" AS ON SELECT TO conv DO INSTEAD SELECT id, m_f(id) AS x FROM t`, `RESET ROLE`)
	exectest.RefusedUntripped(t, e, ran, `SELECT '(1,2)'::comp`, `SELECT ROW(1,2)::comp`, `SELECT id FROM t5 WHERE m = 'happy'`,
		`SELECT count(*) FROM t5 a JOIN t5 b ON a.m = b.m`, `SELECT id FROM v`, `SELECT id FROM conv`)
	for _, q := range []string{`SELECT '(1,2)'::comp`, `SELECT id FROM t5 WHERE m = 'happy'`} {
		err := e.Check(context.Background(), q)
		if assert.Error(t, err, q) {
			assert.NotContains(t, err.Error(), ran, q)
		}
	}
	for _, q := range []string{
		"SELECT octet_length(" + nest("format('%I', X)", "repeat('\"', 400000)", 9) + ")",
		"SELECT octet_length(" + nest("format('%L', X)", "repeat('''', 400000)", 9) + ")",
		`SELECT octet_length(jsonb_pretty('` + strings.Repeat("[", 12000) + strings.Repeat("]", 12000) + `'))`,
		`SELECT octet_length(array_to_string(ARRAY(SELECT generate_series(1, 4000)), repeat('x', 100000)))`,
		`SELECT length(string_agg(g::text, repeat('x', 100000))) FROM generate_series(1, 4000) g`,
		"SELECT octet_length(s) FROM " + nest("(SELECT s || s AS s FROM X q)", "(SELECT repeat('x', 100000) AS s)", 12) + " z",
		`SELECT length(json_agg(repeat('x', 10000))::text) FROM generate_series(1, 60000)`,
		`SELECT length(string_agg(repeat('x', 10000), '')) FROM generate_series(1, 60000)`,
		`SELECT cardinality(array_agg(g)) FROM generate_series(1, 1000000000) g`,
		`SELECT cardinality(ARRAY(SELECT g FROM generate_series(1, 1000000000) g))`,
	} {
		exectest.RunKind(t, e, q, text2sql.KindTooLarge)
	}
}

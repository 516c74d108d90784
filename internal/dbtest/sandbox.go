package dbtest

import (
	"database/sql"
	"strconv"
	"strings"
	"testing"
)

// Sandbox is a PostgreSQL database laid out as a Supabase project that
// runs callers' SQL through a sandbox function: a notes table whose
// row-level-security policy shows each caller only their own notes (two
// for "alice", one for "bob", keyed on the sub claim of
// request.jwt.claims, as PostgREST sets it), the roles Anon (no rights)
// and Authenticated (SELECT on notes, EXECUTE on the function), and the
// function run_sql (see CreateRunSQL).
type Sandbox struct {
	DB                  *sql.DB // the owner's handle (a superuser)
	DSN                 string
	Anon, Authenticated string // role names, unique to the test
}

// SandboxRows is the row cap of run_sql.
const SandboxRows = 200

// NewSandbox creates a Sandbox (see Postgres) and registers the removal
// of its roles.
func NewSandbox(tb testing.TB) *Sandbox {
	tb.Helper()
	db, dsn := Postgres(tb)
	s := &Sandbox{DB: db, DSN: dsn, Anon: Name("t2s_anon"), Authenticated: Name("t2s_authenticated")}
	Exec(tb, db,
		`CREATE TABLE notes (id int PRIMARY KEY, owner text NOT NULL, body text)`,
		`INSERT INTO notes VALUES (1, 'alice', 'a1'), (2, 'alice', 'a2'), (3, 'bob', 'b1')`,
		`ALTER TABLE notes ENABLE ROW LEVEL SECURITY`,
		`CREATE POLICY own_notes ON notes FOR SELECT USING (owner = current_setting('request.jwt.claims', true)::jsonb ->> 'sub')`)
	CreateRunSQL(tb, db)
	Exec(tb, db,
		`CREATE ROLE `+s.Anon+` NOLOGIN`, `CREATE ROLE `+s.Authenticated+` NOLOGIN`,
		`GRANT SELECT ON notes TO `+s.Authenticated, `GRANT INSERT ON sandbox_audit TO `+s.Authenticated,
		`GRANT EXECUTE ON FUNCTION run_sql(text) TO `+s.Authenticated)
	tb.Cleanup(func() {
		if _, err := db.Exec(`DROP OWNED BY ` + s.Anon + `, ` + s.Authenticated + `; DROP ROLE ` + s.Anon + `; DROP ROLE ` + s.Authenticated); err != nil {
			tb.Errorf("drop sandbox roles: %v", err)
		}
	})
	return s
}

// CreateRunSQL creates, in db, the sandbox function run_sql(sql text)
// returning json {ok, rows (objects, columns in the statement's order),
// row_count, truncated} or {ok: false, error: {message, code}}, capping
// the rows at SandboxRows, and its audit table sandbox_audit (sub, sql);
// EXECUTE is revoked from PUBLIC.
func CreateRunSQL(tb testing.TB, db *sql.DB) {
	tb.Helper()
	fn := strings.NewReplacer("{cap+1}", strconv.Itoa(SandboxRows+1), "{cap}", strconv.Itoa(SandboxRows)).Replace(`CREATE FUNCTION run_sql(sql text) RETURNS json LANGUAGE plpgsql AS $f$
DECLARE
	result json;
	n bigint;
BEGIN
	EXECUTE format('SELECT coalesce(json_agg(r) FILTER (WHERE i <= {cap}), ''[]''::json), count(*)
		FROM (SELECT to_json(s) AS r, row_number() OVER () AS i FROM (SELECT * FROM (%s) s LIMIT {cap+1}) s) q', sql) INTO result, n;
	INSERT INTO sandbox_audit (sub, sql) VALUES (current_setting('request.jwt.claims', true)::jsonb ->> 'sub', sql);
	RETURN json_build_object('ok', true, 'rows', result, 'row_count', least(n, {cap}), 'truncated', n > {cap});
EXCEPTION WHEN others THEN
	RETURN json_build_object('ok', false, 'error', json_build_object('message', SQLERRM, 'code', SQLSTATE));
END $f$`)
	Exec(tb, db, `CREATE TABLE sandbox_audit (id bigint GENERATED ALWAYS AS IDENTITY, sub text, sql text)`, fn,
		`REVOKE EXECUTE ON FUNCTION run_sql(text) FROM PUBLIC`)
}

package postgres

import (
	"context"
	"database/sql"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/identity"
	"github.com/text2sql-go/text2sql/internal/dbtest"
	"github.com/text2sql-go/text2sql/internal/exectest"
)

// Two callers, as Supabase writes them: UUID subjects, auth.uid() as
// Supabase defines it.
const (
	alice = "7f1c1a9e-3b1d-4d5a-9b8e-0a4c2f6e1a01"
	bob   = "2b6d9c4e-8f3a-4e7b-a1c5-93d0e4f2b702"
)

// rlsDB creates a database with a notes table whose row-level-security
// policy lets each caller read only their own notes (two for alice, one
// for bob), Supabase's auth.uid(), a view whoami of the role and claims
// set, and a NOLOGIN role that may read them; it returns the handle and
// the role.
func rlsDB(t *testing.T) (*sql.DB, string) {
	t.Helper()
	db, _ := testDB(t,
		`CREATE SCHEMA auth`,
		`CREATE FUNCTION auth.uid() RETURNS uuid LANGUAGE sql STABLE AS $$
		   SELECT coalesce(nullif(current_setting('request.jwt.claim.sub', true), ''),
		                   (nullif(current_setting('request.jwt.claims', true), '')::jsonb ->> 'sub'))::uuid $$`,
		`CREATE TABLE notes (id int PRIMARY KEY, owner uuid NOT NULL, body text)`,
		`INSERT INTO notes VALUES (1, '`+alice+`', 'a1'), (2, '`+alice+`', 'a2'), (3, '`+bob+`', 'b1')`,
		`ALTER TABLE notes ENABLE ROW LEVEL SECURITY`,
		`CREATE POLICY own_notes ON notes FOR SELECT USING (owner = auth.uid())`,
		// Statements may not read settings; a view shows what was set.
		`CREATE VIEW whoami AS SELECT current_user AS role, current_setting('request.jwt.claims', true) AS claims,
		   current_setting('request.jwt.claim.sub', true) AS sub`,
	)
	role := readOnlyRole(t, db)
	dbtest.Exec(t, db, `GRANT USAGE ON SCHEMA auth TO `+role)
	return db, role
}

func as(id string, claims map[string]any) context.Context {
	return identity.WithPrincipal(context.Background(), &identity.Principal{ID: id, Method: "test", Claims: claims})
}

// count runs SELECT count(*) FROM notes in ctx and returns the count.
func count(t *testing.T, e *Executor, ctx context.Context) any {
	t.Helper()
	res, err := e.Execute(ctx, text2sql.ExecuteRequest{SQL: "SELECT count(*) FROM notes"})
	require.NoError(t, err)
	require.Nil(t, res.Error)
	return res.Rows[0][0]
}

// Each caller reads their own rows: the role mapped to the principal and
// the claims the policy reads are set in the transaction; a call without
// a principal runs as Options.Role with no claims and sees nothing; an
// unmapped principal is refused before anything runs.
func TestRowLevelSecurityPerCaller(t *testing.T) {
	db, role := rlsDB(t)
	e := newExec(t, db, Options{Role: role, RoleFor: RoleMap(map[string]string{alice: role, bob: role}), Claims: true})
	assert.EqualValues(t, 2, count(t, e, as(alice, nil)))
	assert.EqualValues(t, 1, count(t, e, as(bob, nil)))
	assert.EqualValues(t, 0, count(t, e, context.Background()), "no principal: no claims, no rows")

	res, err := e.Execute(as(alice, map[string]any{"aal": "aal1"}), text2sql.ExecuteRequest{SQL: `SELECT role, claims, sub FROM whoami`})
	require.NoError(t, err)
	require.Nil(t, res.Error)
	assert.Equal(t, role, res.Rows[0][0])
	var claims map[string]any
	require.NoError(t, json.Unmarshal([]byte(res.Rows[0][1].(string)), &claims))
	assert.Equal(t, map[string]any{"sub": alice, "role": role, "aal": "aal1"}, claims)
	assert.Equal(t, alice, res.Rows[0][2])

	_, err = e.Execute(as("mallory", nil), text2sql.ExecuteRequest{SQL: "SELECT count(*) FROM notes"})
	require.ErrorIs(t, err, text2sql.ErrForbidden)
	assert.Contains(t, err.Error(), `"mallory"`)
	assert.ErrorIs(t, e.Check(as("mallory", nil), "SELECT 1"), text2sql.ErrForbidden)

	// Without Claims the role applies but no caller is known to the policy.
	plain := newExec(t, db, Options{RoleFor: RoleMap(map[string]string{alice: role})})
	assert.EqualValues(t, 0, count(t, plain, as(alice, nil)))
}

// The role can come from a verified JWT's claim, as PostgREST reads it,
// restricted to the roles the host allows.
func TestRoleFromClaim(t *testing.T) {
	db, role := rlsDB(t)
	e := newExec(t, db, Options{RoleFor: RoleFromClaim("role", role), Claims: true})
	assert.EqualValues(t, 1, count(t, e, as(bob, map[string]any{"role": role})))
	for _, claims := range []map[string]any{nil, {"role": "postgres"}, {"role": 7}} {
		_, err := e.Execute(as(bob, claims), text2sql.ExecuteRequest{SQL: "SELECT count(*) FROM notes"})
		assert.ErrorIs(t, err, text2sql.ErrForbidden, "claims %v", claims)
	}
}

// A role the login may not assume fails the call with an error naming the
// role and the principal; the login is not a superuser here, as in
// production.
func TestRoleTheLoginMayNotAssume(t *testing.T) {
	db, role := rlsDB(t)
	other := readOnlyRole(t, db)
	login := loginRole(t, db, role)
	appDB, err := sql.Open("pgx", withUser(t, dsnOf(t, db), login))
	require.NoError(t, err)
	defer appDB.Close()
	e := newExec(t, appDB, Options{RoleFor: RoleMap(map[string]string{alice: role, bob: other}), Claims: true})
	assert.EqualValues(t, 2, count(t, e, as(alice, nil)))
	_, err = e.Execute(as(bob, nil), text2sql.ExecuteRequest{SQL: "SELECT count(*) FROM notes"})
	require.ErrorIs(t, err, text2sql.ErrForbidden)
	assert.Contains(t, err.Error(), `principal "`+bob+`" may not run as role "`+other+`"`)
	assert.Contains(t, err.Error(), "42501")
}

// A statement cannot change the role or the claims it runs under: SET,
// RESET and set_config are refused, however written.
func TestCallerCannotChangeRoleOrClaims(t *testing.T) {
	db, role := rlsDB(t)
	e := newExec(t, db, Options{RoleFor: RoleMap(map[string]string{bob: role}), Claims: true})
	ctx := as(bob, nil)
	for _, q := range []string{
		`SET ROLE postgres`,
		`RESET ROLE`,
		`SET request.jwt.claim.sub = '` + alice + `'`,
		`SELECT set_config('request.jwt.claims', '{"sub": "` + alice + `"}', true)`,
		`SELECT pg_catalog.set_config('request.jwt.claim.sub', '` + alice + `', true), count(*) FROM notes`,
		`SELECT count(*) FROM notes WHERE set_config('role', 'postgres', true) IS NOT NULL`,
		`WITH x AS (SELECT set_config('request.jwt.claim.sub', '` + alice + `', true)) SELECT count(*) FROM notes, x`,
	} {
		exectest.RunRefused(t, e, q)
	}
	assert.EqualValues(t, 1, count(t, e, ctx))
	exectest.RunKind(t, e, "RESET ALL", text2sql.KindForbiddenStatement)
}

// From the attack review: "none" is not a role (set_config('role',
// 'none') would be RESET ROLE); claims cannot name another subject than
// the principal; a principal id that is not text is refused; a claim too
// large to carry is refused.
func TestCallerInputsHold(t *testing.T) {
	db, role := rlsDB(t)
	e := newExec(t, db, Options{RoleFor: RoleMap(map[string]string{bob: role, "eve": "none"}), Claims: true})
	assert.EqualValues(t, 1, count(t, e, as(bob, map[string]any{"sub": alice, "role": "postgres"})), "claims' sub is the id")
	for _, ctx := range []context.Context{as("eve", nil), as("b\x00b", nil), as(bob, map[string]any{"blob": strings.Repeat("x", maxClaimsBytes)})} {
		_, err := e.Execute(ctx, text2sql.ExecuteRequest{SQL: "SELECT count(*) FROM notes"})
		assert.ErrorIs(t, err, text2sql.ErrForbidden)
	}
	for _, r := range []string{"none", "NONE"} {
		_, err := newExec(t, db, Options{Role: r}).Execute(context.Background(), text2sql.ExecuteRequest{SQL: "SELECT 1"})
		assert.ErrorIs(t, err, text2sql.ErrInvalidConfig, r)
	}
}

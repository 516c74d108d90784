package postgrest_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/executor/executortest"
	"github.com/text2sql-go/text2sql/executor/postgres"
	"github.com/text2sql-go/text2sql/executor/postgrest"
	"github.com/text2sql-go/text2sql/identity"
	"github.com/text2sql-go/text2sql/internal/dbtest"
)

const (
	anonKey   = "anon-key-public-0123456789"
	jwtSecret = "test-jwt-secret-0123456789abcdef"
)

// standIn is a local server speaking PostgREST's RPC wire format over the
// real PostgreSQL: POST /rpc/run_sql with {"sql": …}, the apikey header,
// and a bearer JWT (HS256) whose role and claims it sets in the
// transaction, as PostgREST does (role, request.jwt.claims), before it
// calls the function and returns its JSON; a bad token is 401 PGRST301, an
// error the database raises is 400 with its SQLSTATE. calls counts the
// requests that reached it.
type standIn struct {
	srv   *httptest.Server
	calls atomic.Int32
}

func newStandIn(t *testing.T, s *dbtest.Sandbox) *standIn {
	st := &standIn{}
	fail := func(w http.ResponseWriter, status int, code, msg string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(map[string]any{"code": code, "message": msg, "details": nil, "hint": nil})
	}
	st.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		st.calls.Add(1)
		if r.Method != http.MethodPost || r.URL.Path != "/rpc/run_sql" || r.Header.Get("apikey") != anonKey {
			fail(w, http.StatusNotFound, "PGRST202", "Could not find the function")
			return
		}
		claims := jwt.MapClaims{"role": s.Anon}
		if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && tok != anonKey {
			claims = jwt.MapClaims{}
			if _, err := jwt.ParseWithClaims(tok, claims, func(*jwt.Token) (any, error) { return []byte(jwtSecret), nil },
				jwt.WithValidMethods([]string{"HS256"})); err != nil {
				fail(w, http.StatusUnauthorized, "PGRST301", "JWSError JWSInvalidSignature")
				return
			}
		}
		var args struct{ SQL string }
		if err := json.NewDecoder(r.Body).Decode(&args); err != nil {
			fail(w, http.StatusBadRequest, "PGRST102", "Empty or invalid json")
			return
		}
		cj, _ := json.Marshal(claims)
		tx, err := s.DB.BeginTx(r.Context(), nil)
		if err != nil {
			fail(w, http.StatusServiceUnavailable, "PGRST000", "no connection")
			return
		}
		defer tx.Rollback()
		var answer string
		_, err = tx.ExecContext(r.Context(), `SELECT set_config('role', $1, true), set_config('request.jwt.claims', $2, true)`, claims["role"], string(cj))
		if err == nil {
			err = tx.QueryRowContext(r.Context(), `SELECT run_sql($1)::text`, args.SQL).Scan(&answer)
		}
		var pe *pgconn.PgError
		switch {
		case r.Context().Err() != nil:
			return // the client gave up; the query was cancelled
		case errors.As(err, &pe) && pe.Code == "42501":
			fail(w, http.StatusForbidden, pe.Code, pe.Message)
			return
		case errors.As(err, &pe):
			fail(w, http.StatusBadRequest, pe.Code, pe.Message)
			return
		}
		require.NoError(t, err)
		require.NoError(t, tx.Commit())
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		_, _ = w.Write([]byte(answer))
	}))
	t.Cleanup(st.srv.Close)
	return st
}

func token(t *testing.T, sub, role string) string {
	tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": sub, "role": role, "aud": "authenticated",
		"exp": time.Now().Add(time.Hour).Unix()}).SignedString([]byte(jwtSecret))
	require.NoError(t, err)
	return tok
}

func newExecutor(t *testing.T, s *dbtest.Sandbox, baseURL string) *postgrest.Executor {
	g, err := postgres.LoadGuard(context.Background(), s.DB, nil)
	require.NoError(t, err)
	e, err := postgrest.New(postgrest.Options{BaseURL: baseURL, Function: "run_sql", AnonKey: anonKey, Guard: g})
	require.NoError(t, err)
	return e
}

func run(t *testing.T, e text2sql.Executor, ctx context.Context, q string) *text2sql.Result {
	t.Helper()
	res, err := e.Execute(ctx, text2sql.ExecuteRequest{SQL: q})
	require.NoError(t, err, q)
	return res
}

// The caller's own token reaches the function: each caller reads their
// own rows, the same rows the PostgreSQL executor gives the same caller
// directly; without a token the call runs as anon (refused by the
// database: ErrForbidden); a refused statement
// never reaches the endpoint; a forged token is ErrForbidden.
func TestRPCExecutesAsTheCaller(t *testing.T) {
	s := dbtest.NewSandbox(t)
	st := newStandIn(t, s)
	e := newExecutor(t, s, st.srv.URL)
	direct, err := postgres.New(context.Background(), s.DB, postgres.Options{RoleFor: postgres.RoleFromClaim("role"), Claims: true})
	require.NoError(t, err)
	defer direct.Close()

	const q = "SELECT id, body FROM notes ORDER BY id"
	for who, want := range map[string][][]any{"alice": {{int64(1), "a1"}, {int64(2), "a2"}}, "bob": {{int64(3), "b1"}}} {
		ctx := identity.WithBearerToken(context.Background(), token(t, who, s.Authenticated))
		res := run(t, e, ctx, q)
		require.Nil(t, res.Error, "%s: %v", who, res.Error)
		assert.Equal(t, []string{"id", "body"}, res.Columns)
		assert.Equal(t, want, res.Rows, who)
		assert.Equal(t, len(want), res.RowCount)

		pctx := identity.WithPrincipal(context.Background(), &identity.Principal{ID: who, Claims: map[string]any{"role": s.Authenticated}})
		d := run(t, direct, pctx, q)
		assert.Equal(t, d.Rows, res.Rows, "%s: the same rows as direct execution", who)
	}
	var audited int
	require.NoError(t, s.DB.QueryRow(`SELECT count(*) FROM sandbox_audit WHERE sub IN ('alice', 'bob')`).Scan(&audited))
	assert.Equal(t, 2, audited, "the function's audit log holds the callers")

	// Without a caller token the call is anon's, which may not run the
	// function: the database's refusal is the caller's (ErrForbidden).
	_, err = e.Execute(context.Background(), text2sql.ExecuteRequest{SQL: "SELECT count(*) FROM notes"})
	require.ErrorIs(t, err, text2sql.ErrForbidden)
	assert.Contains(t, err.Error(), "permission denied for function run_sql")

	before := st.calls.Load()
	for _, q := range []string{"DELETE FROM notes", "SELECT 1; SELECT 2", "SELECT pg_read_file('/etc/passwd')", "SET ROLE postgres"} {
		res := run(t, e, context.Background(), q)
		require.NotNil(t, res.Error, q)
		assert.True(t, res.Error.Kind.Refusal(), "%s: %v", q, res.Error)
	}
	assert.Equal(t, before, st.calls.Load(), "a refused statement reached the endpoint")

	forged, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": "alice", "role": s.Authenticated}).SignedString([]byte("wrong-secret"))
	require.NoError(t, err)
	_, err = e.Execute(identity.WithBearerToken(context.Background(), forged), text2sql.ExecuteRequest{SQL: q})
	require.ErrorIs(t, err, text2sql.ErrForbidden)
	assert.NotContains(t, err.Error(), forged)
}

// The function's cap and failures come back as data: more rows than it
// returns are marked truncated, an unknown column is KindUnknownColumn.
func TestRPCResultShapes(t *testing.T) {
	s := dbtest.NewSandbox(t)
	st := newStandIn(t, s)
	e := newExecutor(t, s, st.srv.URL)
	ctx := identity.WithBearerToken(context.Background(), token(t, "alice", s.Authenticated))
	res := run(t, e, ctx, "SELECT g AS n FROM generate_series(1, 500) AS g")
	require.Nil(t, res.Error)
	assert.True(t, res.Truncated)
	assert.Equal(t, dbtest.SandboxRows, res.RowCount)
	assert.Equal(t, int64(1), res.Rows[0][0])

	res = run(t, e, ctx, "SELECT nope FROM notes")
	require.NotNil(t, res.Error)
	assert.Equal(t, text2sql.KindUnknownColumn, res.Error.Kind)
	assert.Equal(t, "42703", res.Error.SQLState)

	res, err := e.Execute(ctx, text2sql.ExecuteRequest{SQL: "SELECT id FROM notes", MaxRows: 1})
	require.NoError(t, err)
	assert.True(t, res.Truncated)
	assert.Len(t, res.Rows, 1)
}

// The same function through PostgreSQL directly (postgres.Function): the
// caller's role and claims come from the principal.
func TestFunctionExecutor(t *testing.T) {
	s := dbtest.NewSandbox(t)
	f, err := postgres.NewFunction(context.Background(), s.DB, postgres.FunctionOptions{Name: "public.run_sql",
		RoleFor: postgres.RoleMap(map[string]string{"alice": s.Authenticated, "bob": s.Authenticated}), Claims: true})
	require.NoError(t, err)
	defer f.Close()
	for who, want := range map[string]int64{"alice": 2, "bob": 1} {
		res := run(t, f, identity.WithPrincipal(context.Background(), &identity.Principal{ID: who}), "SELECT count(*) AS n FROM notes")
		require.Nil(t, res.Error, who)
		assert.Equal(t, [][]any{{want}}, res.Rows, who)
	}
	res := run(t, f, context.Background(), "DROP TABLE notes")
	require.NotNil(t, res.Error)
	assert.Equal(t, text2sql.KindNotReadOnly, res.Error.Kind)
	_, err = f.Execute(identity.WithPrincipal(context.Background(), &identity.Principal{ID: "mallory"}), text2sql.ExecuteRequest{SQL: "SELECT 1"})
	assert.ErrorIs(t, err, text2sql.ErrForbidden)

	_, err = postgres.NewFunction(context.Background(), s.DB, postgres.FunctionOptions{Name: "a.b.c"})
	assert.ErrorIs(t, err, text2sql.ErrInvalidConfig)
	var db *sql.DB
	_, err = postgres.NewFunction(context.Background(), db, postgres.FunctionOptions{Name: "run_sql"})
	assert.ErrorIs(t, err, text2sql.ErrInvalidConfig)
}

// Both sandbox-function executors pass the Executor kit, the function
// running each statement (it caps rows at SandboxRows; the kit's limits
// are the executors').
func TestConformance(t *testing.T) {
	db, dsn, fx := dbtest.PostgresKit(t)
	dbtest.CreateRunSQL(t, db)
	fx.ForbiddenFunction = "SELECT pg_read_file('/etc/passwd')"
	f, err := postgres.NewFunction(context.Background(), db, postgres.FunctionOptions{Name: "run_sql"})
	require.NoError(t, err)
	defer f.Close()
	assert.NoError(t, executortest.TestExecutor(f, fx), "postgres.Function")

	s := &dbtest.Sandbox{DB: db, DSN: dsn, Anon: "postgres"}
	st := newStandIn(t, s)
	e := newExecutor(t, s, st.srv.URL)
	assert.NoError(t, executortest.TestExecutor(e, fx), "postgrest")
}

// What the attack review found, held: a database reading backslashes as
// escapes cannot turn a string the check read into code (the Function
// path pins standard_conforming_strings; the PostgREST path, which cannot,
// refuses backslashes in '…' strings); an owner's volatile function named
// like an allowed one is refused on the Function path (the resolution
// probe runs in its transaction); a principal's claims cannot name another
// subject; "none" is not a role.
func TestSandboxPathsHold(t *testing.T) {
	s := dbtest.NewSandbox(t)
	var dbname string
	require.NoError(t, s.DB.QueryRow(`SELECT current_database()`).Scan(&dbname))
	dbtest.Exec(t, s.DB, `ALTER DATABASE `+dbname+` SET standard_conforming_strings = off`,
		`CREATE FUNCTION public.lower(int) RETURNS text VOLATILE LANGUAGE sql AS $$ SELECT 'owner''s' $$`,
		`GRANT EXECUTE ON FUNCTION public.lower(int) TO `+s.Authenticated)
	fresh, err := sql.Open("pgx", s.DSN) // connections that read the database's setting
	require.NoError(t, err)
	defer fresh.Close()
	f, err := postgres.NewFunction(context.Background(), fresh, postgres.FunctionOptions{Name: "run_sql",
		RoleFor: postgres.RoleMap(map[string]string{"bob": s.Authenticated, "eve": "none"}), Claims: true})
	require.NoError(t, err)
	defer f.Close()
	bob := identity.WithPrincipal(context.Background(), &identity.Principal{ID: "bob"})

	const smuggle = `SELECT 'x\' AS a, ' AS b, (SELECT pg_catalog.set_config($$request.jwt.claims$$, $${"sub":"alice"}$$, true)) AS c, (SELECT pg_catalog.string_agg(body, $$,$$) FROM notes) AS d, ' AS e --'`
	res := run(t, f, bob, smuggle)
	require.Nil(t, res.Error, "%+v", res.Error)
	assert.NotContains(t, fmt.Sprint(res.Rows), "a1", "the string was read as code: %v", res.Rows)

	res = run(t, f, bob, "SELECT lower(1) AS x")
	require.NotNil(t, res.Error, "%v", res.Rows)
	assert.True(t, res.Error.Kind.Refusal(), "%+v", res.Error)

	spoof := identity.WithPrincipal(context.Background(), &identity.Principal{ID: "bob", Claims: map[string]any{"sub": "alice"}})
	res = run(t, f, spoof, "SELECT count(*) AS n FROM notes")
	require.Nil(t, res.Error)
	assert.Equal(t, [][]any{{int64(1)}}, res.Rows, "claims' sub is the principal's id")

	_, err = f.Execute(identity.WithPrincipal(context.Background(), &identity.Principal{ID: "eve"}), text2sql.ExecuteRequest{SQL: "SELECT 1"})
	assert.ErrorIs(t, err, text2sql.ErrForbidden)
	_, err = f.Execute(identity.WithPrincipal(context.Background(), &identity.Principal{ID: "bo\x00b"}), text2sql.ExecuteRequest{SQL: "SELECT 1"})
	assert.ErrorIs(t, err, text2sql.ErrForbidden)

	st := newStandIn(t, s)
	e := newExecutor(t, s, st.srv.URL)
	before := st.calls.Load()
	for _, q := range []string{smuggle, `SELECT N'x\' AS a, ' AS b'`, "SELECT 'a'\n'b\\' AS c, ' AS d'", `SELECT U&'d\0061t' AS u`} {
		res = run(t, e, identity.WithBearerToken(context.Background(), token(t, "bob", s.Authenticated)), q)
		require.NotNil(t, res.Error, q)
		assert.Equal(t, text2sql.KindForbiddenStatement, res.Error.Kind, q)
		assert.Contains(t, res.Error.Message, "backslash", q)
	}
	assert.Equal(t, before, st.calls.Load())
	res = run(t, e, identity.WithBearerToken(context.Background(), token(t, "bob", s.Authenticated)), `SELECT E'a\\b' AS x, $$c\d$$ AS y`)
	require.Nil(t, res.Error, "%+v", res.Error)
	assert.Equal(t, [][]any{{`a\b`, `c\d`}}, res.Rows)
}

// Owner code the statement never names is refused on both sandbox paths
// (the function commits, so code that ran would leave its row): a
// function in attribute notation, an operator applied by IN, a domain
// CHECK reached through its array type.
func TestSandboxOwnerCode(t *testing.T) {
	s := dbtest.NewSandbox(t)
	dbtest.Exec(t, s.DB, `CREATE TABLE ran (n int)`, `GRANT INSERT ON ran TO `+s.Authenticated,
		`CREATE FUNCTION any_user_function(text) RETURNS int LANGUAGE sql AS $$ INSERT INTO ran VALUES (1) RETURNING 1 $$`,
		`CREATE FUNCTION m_it(int, text) RETURNS bool LANGUAGE sql AS $$ INSERT INTO ran VALUES (2) RETURNING true $$`,
		`CREATE OPERATOR public.= (LEFTARG = int, RIGHTARG = text, FUNCTION = m_it)`,
		`CREATE FUNCTION m_i(int) RETURNS bool LANGUAGE sql AS $$ INSERT INTO ran VALUES (3) RETURNING true $$`,
		`CREATE DOMAIN dom AS int CHECK (m_i(VALUE))`)
	f, err := postgres.NewFunction(context.Background(), s.DB, postgres.FunctionOptions{Name: "run_sql",
		RoleFor: postgres.RoleMap(map[string]string{"bob": s.Authenticated}), Claims: true})
	require.NoError(t, err)
	defer f.Close()
	st := newStandIn(t, s)
	e := newExecutor(t, s, st.srv.URL)
	bob := identity.WithPrincipal(identity.WithBearerToken(context.Background(), token(t, "bob", s.Authenticated)), &identity.Principal{ID: "bob"})
	for _, q := range []string{`SELECT ('x'::text).any_user_function`, `SELECT 80 IN (SELECT 'x'::text)`, `SELECT '{11}'::_dom`} {
		for _, ex := range []text2sql.Executor{f, e} {
			res := run(t, ex, bob, q)
			require.NotNil(t, res.Error, q)
			assert.True(t, res.Error.Kind.Refusal(), "%s: %+v", q, res.Error)
		}
	}
	var n int
	require.NoError(t, s.DB.QueryRow(`SELECT count(*) FROM ran`).Scan(&n))
	assert.Zero(t, n, "owner code ran")
}

package mcpexec_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/executor/executortest"
	"github.com/text2sql-go/text2sql/executor/mcpexec"
	"github.com/text2sql-go/text2sql/executor/sqlite"
	"github.com/text2sql-go/text2sql/internal/dbtest"
	"github.com/text2sql-go/text2sql/internal/exectest"
	"github.com/text2sql-go/text2sql/server"
)

// The reference PostgreSQL MCP server on stdio, against the local
// PostgreSQL: the schema comes from information_schema through its query
// tool, every statement passes PostgreSQL's parser first, and the
// executor kit's rules hold.
func TestReferencePostgresServer(t *testing.T) {
	bin := dbtest.MCPServerPostgres(t)
	db, dsn, fx := dbtest.PostgresKit(t)
	serverTimeout(t, db, "10s")
	dbtest.Exec(t, db, "CREATE TABLE kit_note (id int PRIMARY KEY, kit_id int REFERENCES kit (id), note text)")
	ctx := context.Background()
	ex, err := mcpexec.Open(ctx, mcpexec.Options{Command: []string{bin, dsn}})
	require.NoError(t, err)
	defer ex.Close()

	sch := ex.Schema()
	assert.Equal(t, text2sql.DialectPostgres, sch.Dialect)
	kit := sch.Lookup("kit")
	require.NotNil(t, kit, "tables: %v", sch.Tables)
	assert.Equal(t, []string{"id"}, kit.PrimaryKey)
	note := sch.Lookup("kit_note")
	require.NotNil(t, note)
	require.Len(t, note.ForeignKeys, 1)
	assert.Equal(t, "kit", note.ForeignKeys[0].RefTable)
	assert.Equal(t, []string{"kit_id"}, note.ForeignKeys[0].Columns)

	res, err := ex.Execute(ctx, text2sql.ExecuteRequest{SQL: "SELECT id, name FROM kit ORDER BY id LIMIT 2"})
	require.NoError(t, err)
	require.Nil(t, res.Error)
	assert.Equal(t, []string{"id", "name"}, res.Columns)
	assert.Equal(t, []any{int64(1), "row 1"}, res.Rows[0])

	// Refused before it leaves: the server never sees these.
	for sql, kind := range map[string]text2sql.ErrorKind{
		"SELECT * FROM pg_catalog.pg_authid":                               text2sql.KindForbiddenTable,
		"COPY kit TO PROGRAM 'id'":                                         text2sql.KindForbiddenStatement,
		"SELECT 1; COMMIT; DELETE FROM kit":                                text2sql.KindMultipleStatements,
		"SELECT set_config('default_transaction_read_only', 'off', false)": text2sql.KindForbiddenFunction,
	} {
		exectest.RunKind(t, ex, sql, kind)
	}
	// The server's message, classified.
	exectest.RunKind(t, ex, "SELECT nme FROM kit", text2sql.KindUnknownColumn)

	fx.ForbiddenFunction = "SELECT pg_read_file('/etc/passwd')"
	assert.NoError(t, executortest.TestExecutor(ex, fx))
}

// text2sql's own MCP server over streamable HTTP, in front of a SQLite
// database: the schema comes from describe_schema, statements pass
// SQLite's authorizer on a private copy of the schema before they leave,
// and the executor kit's rules hold.
func TestOwnServer(t *testing.T) {
	path, fx := dbtest.SQLiteKit(t)
	backend, err := sqlite.Open(path, sqlite.Options{})
	require.NoError(t, err)
	defer backend.Close()
	p, err := text2sql.New(text2sql.Config{
		Retriever: text2sql.RetrieverFunc(func(context.Context, text2sql.RetrieveRequest) (*text2sql.Retrieval, error) {
			return &text2sql.Retrieval{}, nil
		}),
		Generator: text2sql.GeneratorFunc(func(context.Context, text2sql.GenerateRequest) (*text2sql.Candidate, error) {
			return nil, errors.New("not used")
		}),
		Executor: backend,
	})
	require.NoError(t, err)
	h, err := server.New(server.Config{Pipeline: p, Auth: server.NoAuth(), Schema: backend.Schema(),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), RateLimit: server.RateLimit{Unlimited: true}})
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	defer srv.Close()

	ctx := context.Background()
	ex, err := mcpexec.Open(ctx, mcpexec.Options{URL: srv.URL + "/mcp", HTTPClient: http.DefaultClient})
	require.NoError(t, err)
	defer ex.Close()
	assert.Equal(t, text2sql.DialectSQLite, ex.Schema().Dialect)
	require.NotNil(t, ex.Schema().Lookup("kit"))
	exectest.RunRefused(t, ex, "ATTACH DATABASE '/tmp/x.db' AS x")
	assert.NoError(t, executortest.TestExecutor(ex, fx))
}

// Open refuses a configuration without a server, and one with both.
func TestOpenConfig(t *testing.T) {
	_, err := mcpexec.Open(context.Background(), mcpexec.Options{})
	assert.ErrorIs(t, err, text2sql.ErrInvalidConfig)
	_, err = mcpexec.Open(context.Background(), mcpexec.Options{URL: "http://x", Command: []string{"x"}})
	assert.ErrorIs(t, err, text2sql.ErrInvalidConfig)
}

// serverTimeout sets the statement_timeout of db's database for new
// sessions, as a login made by text2sql grant carries it: Open refuses a
// server without one.
func serverTimeout(t *testing.T, db *sql.DB, limit string) {
	t.Helper()
	var name string
	require.NoError(t, db.QueryRow("SELECT current_database()").Scan(&name))
	dbtest.Exec(t, db, fmt.Sprintf("ALTER DATABASE %q SET statement_timeout = '%s'", name, limit))
}

// The time limit holds on the server (issue 36): with --timeout 3s a
// statement was still active 41 s later, after the CLI and the MCP server
// had exited, holding one of the server's pooled connections. The
// executor cannot set a limit per statement through the reference server,
// so Open reads the limit the server's sessions have and refuses one
// without a limit or with a longer one than its own; with a limit, the
// server itself stops the statement.
func TestReferenceServerTimeLimit(t *testing.T) {
	bin := dbtest.MCPServerPostgres(t)
	db, dsn, _ := dbtest.PostgresKit(t)
	ctx := context.Background()
	open := func(timeout time.Duration, allow bool, dsn string) (*mcpexec.Executor, error) {
		ex, err := mcpexec.Open(ctx, mcpexec.Options{Command: []string{bin, dsn}, Timeout: timeout, AllowUnboundedServer: allow})
		if err == nil {
			t.Cleanup(func() { ex.Close() })
		}
		return ex, err
	}
	// running counts the statements of this database still running the
	// unbounded query.
	running := func() int {
		var n int
		require.NoError(t, db.QueryRow(`SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND state = 'active' AND pid <> pg_backend_pid()
			AND query LIKE '%WITH RECURSIVE c(n)%'`).Scan(&n))
		return n
	}

	// No limit on the server: refused, saying how to set one.
	_, err := open(3*time.Second, false, dsn)
	require.ErrorIs(t, err, mcpexec.ErrUnboundedServer)
	assert.Contains(t, err.Error(), "no statement_timeout")
	assert.Contains(t, err.Error(), "text2sql grant --statement-timeout 3s")

	// Allowed anyway, the limit holds only for the caller: the statement
	// runs on on the server after Execute returned, as the option says.
	ex, err := open(time.Second, true, dsn)
	require.NoError(t, err)
	assert.Zero(t, ex.ServerTimeout())
	exectest.RunKind(t, ex, dbtest.Unbounded, text2sql.KindTimeout)
	time.Sleep(2 * time.Second)
	assert.Equal(t, 1, running(), "the statement is still running on the server")
	dbtest.Exec(t, db, `SELECT pg_cancel_backend(pid) FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid() AND query LIKE '%WITH RECURSIVE c(n)%'`)

	// A limit in the DSN the MCP server connects with counts (the hint's
	// other way), and one longer than the executor's is refused.
	_, err = open(3*time.Second, false, dbtest.PostgresDSNWith(t, dsn, "options", "-c statement_timeout=20000"))
	require.ErrorIs(t, err, mcpexec.ErrUnboundedServer)
	assert.Contains(t, err.Error(), "statement_timeout 20s, the time limit is 3s")

	// The login's (here the database's) limit within the executor's: the
	// server stops the statement at its own limit, whether or not the
	// caller is still waiting. (Open's catalog queries run under it too,
	// so it is not tight on a loaded machine.)
	const server = 5 * time.Second
	serverTimeout(t, db, server.String())
	ex, err = open(server+time.Second, false, dsn)
	require.NoError(t, err)
	assert.Equal(t, server, ex.ServerTimeout())
	start := time.Now()
	exectest.RunKind(t, ex, dbtest.Unbounded, text2sql.KindTimeout)
	assert.Less(t, time.Since(start), 10*server, "ended at a limit (generous: a loaded machine)")
	// Nothing runs on 2 s after the limit (the criterion of issue 36).
	assert.Eventually(t, func() bool { return running() == 0 }, 2*time.Second, 50*time.Millisecond, "still running after the limit")
	// A caller who stops waiting sooner leaves the statement to the
	// server's limit, which ends it.
	res, err := ex.Execute(ctx, text2sql.ExecuteRequest{SQL: dbtest.Unbounded, Timeout: 500 * time.Millisecond})
	require.NoError(t, err)
	exectest.WantKind(t, dbtest.Unbounded, res, text2sql.KindTimeout)
	time.Sleep(server - 500*time.Millisecond)
	assert.Eventually(t, func() bool { return running() == 0 }, 2*time.Second, 50*time.Millisecond, "the server's limit did not end it")
	ok, err := ex.Execute(ctx, text2sql.ExecuteRequest{SQL: "SELECT count(*) AS n FROM kit"})
	require.NoError(t, err)
	require.Nil(t, ok.Error, "the MCP server still answers")
}

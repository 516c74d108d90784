package mcpexec_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

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

package mcpexec

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"

	sqlite3 "github.com/mattn/go-sqlite3"

	"github.com/text2sql-go/text2sql/internal/sqltext"
)

// schemaDriver is a SQLite driver whose connections may only create
// tables, indexes and views in the main database (SQLite's authorizer,
// the engine's own reading of each statement): the DDL comes from the
// MCP server, which is not trusted to write anything else — no ATTACH
// (a file elsewhere), no PRAGMA, no trigger, no rows.
const schemaDriver = "sqlite3_mcpexec_schema"

var registerSchemaDriver sync.Once

// sqliteRecursive is SQLITE_RECURSIVE (a recursive CTE), which go-sqlite3
// does not export.
const sqliteRecursive = 33

func schemaAuthorizer(action int, arg1, _, db string) int {
	if db != "" && db != "main" {
		return sqlite3.SQLITE_DENY
	}
	switch action {
	case sqlite3.SQLITE_CREATE_TABLE, sqlite3.SQLITE_CREATE_INDEX, sqlite3.SQLITE_CREATE_VIEW,
		sqlite3.SQLITE_READ, sqlite3.SQLITE_SELECT, sqlite3.SQLITE_FUNCTION, sqlite3.SQLITE_TRANSACTION,
		sqlite3.SQLITE_REINDEX, sqliteRecursive: // CREATE INDEX reindexes; a view may recurse
		return sqlite3.SQLITE_OK
	case sqlite3.SQLITE_INSERT, sqlite3.SQLITE_UPDATE, sqlite3.SQLITE_DELETE:
		// Creating a table writes its row of the schema table, and
		// AUTOINCREMENT its sequence table; nothing else.
		switch strings.ToLower(arg1) {
		case "sqlite_master", "sqlite_schema", "sqlite_sequence":
			return sqlite3.SQLITE_OK
		}
	}
	return sqlite3.SQLITE_DENY
}

// createSchema runs the server's DDL in the empty database file at path:
// each statement must be CREATE TABLE, CREATE [UNIQUE] INDEX or CREATE
// VIEW, and the authorizer has the engine refuse anything else it does.
func createSchema(ctx context.Context, path, ddl string) error {
	for _, stmt := range sqltext.Statements(ddl) {
		if !createStatement(stmt) {
			return fmt.Errorf("describe_schema sent a statement that is not CREATE TABLE, INDEX or VIEW: %.80q", strings.TrimSpace(stmt))
		}
	}
	registerSchemaDriver.Do(func() {
		sql.Register(schemaDriver, &sqlite3.SQLiteDriver{ConnectHook: func(c *sqlite3.SQLiteConn) error {
			c.RegisterAuthorizer(schemaAuthorizer)
			return nil
		}})
	})
	db, err := sql.Open(schemaDriver, "file:"+path+"?_trusted_schema=0")
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = db.ExecContext(ctx, ddl)
	return err
}

// createStatement reports whether stmt's first words are CREATE TABLE,
// CREATE [UNIQUE] INDEX or CREATE VIEW (comments aside); an empty
// statement (a lone terminator) passes.
func createStatement(stmt string) bool {
	var words []sqltext.Token
	for _, t := range sqltext.Lex(stmt) {
		if !t.Trivia() && t.Text != ";" {
			words = append(words, t)
		}
		if len(words) == 3 {
			break
		}
	}
	switch {
	case len(words) == 0:
		return true
	case len(words) < 2 || !words[0].Is("CREATE"):
		return false
	case words[1].Is("TABLE"), words[1].Is("VIEW"), words[1].Is("INDEX"):
		return true
	}
	return len(words) == 3 && words[1].Is("UNIQUE") && words[2].Is("INDEX")
}

// Package guard holds the engine-independent parts of the statement guard
// that every executor of generated SQL shares, and that executors written
// outside this module can use too:
//
//   - the lexical statement check (CheckText, made of CheckShape and a
//     scan of every word): exactly one statement under every lexical
//     convention of sqltext, and that statement a query (SELECT, WITH …
//     SELECT, VALUES), with no data-modifying keyword or locking clause at
//     any depth; and DeepScan, which words the refusal of a statement an
//     engine could not parse from its syntax tree (internal/sqlparse);
//   - the size bounds of a statement's parse tree (MaxDepth, MaxTokens,
//     BoundsError), checked before any parser sees the text;
//   - the classification of an engine's error message into a
//     text2sql.ErrorKind (Classify, UnknownName, EngineError) and the hints
//     for unknown tables and columns computed from a schema model (Suggest).
//
// Each check returns nil or a *text2sql.SQLError whose Kind says why the
// statement was refused; none of them panics, and none reaches a database.
//
// The check is lexical, not a parse: it decides whether a text may be
// offered to an engine, not what the engine will do with it. The engines'
// own parsers remain the authority on what a statement reads and writes:
// executor/sqlite runs CheckShape (as Shape, which also gives the text to
// prepare from the same lexing) and then SQLite's authorizer and
// sqlite3_stmt_readonly on the prepared statement, executor/postgres
// decides on PostgreSQL's own parse tree (libpg_query), and
// executor/mysql on the MySQL parser's tree; read-only transactions and
// engine limits back them. Those executors live in package executor and
// its sub-packages; this package imports no driver.
package guard

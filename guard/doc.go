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
//   - for PostgreSQL behind an executor that cannot pin the session's
//     standard_conforming_strings, the refusal of backslashes in plain
//     string literals (BackslashInString).
//
// The guard decides whether a statement may run. Whether it answers the
// question — unknown names, another dialect's syntax, the hints a repair
// loop sends back, and the kind of an error the engine raised — is
// package lint's.
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

// Package text2sql is a retrieval-augmented text-to-SQL pipeline: a question
// in plain English goes in; the answer, the SQL that produced it and how it
// was checked come out.
//
// The pipeline is composed of small stage interfaces — Retriever, Planner,
// Generator, Executor, Judge, Selector, Narrator — plus Model and
// Embedder, each with default implementations in sub-packages:
//
//	retriever/       hybrid BM25 + vector retrieval fused by Reciprocal Rank Fusion
//	generator/       LLM SQL generation with structured JSON output
//	selector/        pairwise choice among tied candidates (Config.Candidates)
//	summary/         answers in words (Config.Narrator)
//	executor/sqlite  guarded read-only SQLite execution
//	executor/        guarded execution on any database/sql driver
//	executor/postgres, executor/mysql, executor/mcpexec  PostgreSQL, MySQL/MariaDB, a database behind an MCP server
//	llm/gemini, llm/openai, llm/llmtest   models (llmtest is a scripted fake for tests)
//	embed/hashing, embed/gemini, embed/openai  embedders (hashing is the offline default)
//	schema/, knowledge/  the schema model and the knowledge base
//
// Around the pipeline: conversation/ (follow-ups, routing, memory),
// feedback/ (verdicts into verified examples), chart/ (Vega-Lite charts of
// results), wire/ (the one JSON form of answers), identity/ (who a call
// acts for), server/ (HTTP, the page, MCP) and cmd/text2sql (the CLI).
//
// The types here are plain data; their JSON tags name fields for a host
// that encodes them as they are (durations in nanoseconds, errors left
// out). What the service and the command line write is package wire's
// form.
//
// This package imports only the standard library; a heavy dependency lives in
// the sub-package that needs it.
//
// Generated SQL is untrusted input: executors refuse anything but one
// read-only statement and run it on a read-only connection with a row cap
// and a time limit. Refusals and SQL errors are data (Result.Error, an
// *SQLError with a stable ErrorKind) that the repair loop feeds back to the
// generator.
package text2sql

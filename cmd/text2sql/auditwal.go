package main

import (
	"context"
	"database/sql"
	"log/slog"

	"github.com/text2sql-go/text2sql/server"
)

// warnSharedWAL logs a warning when the PostgreSQL audit database audit
// is on the same server as the data while the answer cache is on: every
// audit record moves the write-ahead log position that the data version
// of the cache reads (executor/postgres DataVersion), so no answer is
// ever reused. Servers are told apart by their system identifier; an
// executor that is not PostgreSQL fails that query and is left alone.
func warnSharedWAL(ctx context.Context, audit *sql.DB, ex any, cfg *server.Config, logger *slog.Logger) {
	x, ok := ex.(interface{ DB() *sql.DB })
	if !ok || cfg.Cache.Store == nil || cfg.Cache.DataVersion == nil {
		return
	}
	const q = `SELECT system_identifier::text FROM pg_control_system()`
	var a, d string
	if audit.QueryRowContext(ctx, q).Scan(&a) != nil || x.DB().QueryRowContext(ctx, q).Scan(&d) != nil || a != d {
		return
	}
	logger.Warn("--audit-dsn is on the data's own PostgreSQL server: each audit record moves the server's write-ahead log position, " +
		"which is the answer cache's data version, so cached answers are never reused; keep the audit log on another server")
}

package postgres

import (
	"context"
	"fmt"
	"slices"
)

// dataVersionSQL sums the cumulative statistics PostgreSQL keeps per table
// (rows inserted, updated and deleted; live rows, which TRUNCATE resets)
// over the schemas the executor inspected. Any committed write to those
// tables moves one of the sums.
const dataVersionSQL = `SELECT count(*), coalesce(sum(n_tup_ins + n_tup_upd + n_tup_del), 0), coalesce(sum(n_live_tup), 0)
FROM pg_stat_user_tables WHERE schemaname = ANY($1)`

// DataVersion returns a token that changes when the data of the inspected
// schemas changes: the count of their tables and the sums of
// pg_stat_user_tables' row counters over them. Used as the data version
// of the service's answer cache (server.Cache.DataVersion).
//
// PostgreSQL publishes a backend's counters when its transaction ends,
// batched at most once a second (PostgreSQL 15's cumulative statistics):
// an answer can be reused for about that long after a write. Writes to
// tables outside the inspected schemas do not change the token. An error
// means the server cannot be reached.
func (e *Executor) DataVersion(ctx context.Context) (string, error) {
	var schemas []string
	for _, t := range e.schema.Tables {
		if !slices.Contains(schemas, t.Schema) {
			schemas = append(schemas, t.Schema)
		}
	}
	var tables, writes, live int64
	if err := e.db.QueryRowContext(ctx, dataVersionSQL, schemas).Scan(&tables, &writes, &live); err != nil {
		return "", fmt.Errorf("postgres: data version: %w", err)
	}
	return fmt.Sprintf("%d/%d/%d", tables, writes, live), nil
}

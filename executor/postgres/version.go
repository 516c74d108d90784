package postgres

import (
	"context"
	"fmt"
)

// dataVersionSQL reads the server's write-ahead log position: every
// committed write moves it, and a standby reports how far it has replayed.
const dataVersionSQL = `SELECT CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn() ELSE pg_current_wal_lsn() END::text`

// DataVersion returns a token that changes whenever a write is committed
// on the server: the write-ahead log position (on a standby, the replayed
// position). Used as the data version of the service's answer cache
// (server.Cache.DataVersion).
//
// It is coarse on purpose: writes to other tables and databases of the
// server, and maintenance that logs (autovacuum, checkpoints), move it
// too, so the cache misses more often than the data changes, but an
// answer is never reused after a write. (The table statistics counters
// would be finer, but a backend publishes them only when it goes idle,
// so a busy writer's commits could stay invisible for seconds.) An error
// means the server cannot be reached.
func (e *Executor) DataVersion(ctx context.Context) (string, error) {
	var lsn string
	if err := e.db.QueryRowContext(ctx, dataVersionSQL).Scan(&lsn); err != nil {
		return "", fmt.Errorf("postgres: data version: %w", err)
	}
	return lsn, nil
}

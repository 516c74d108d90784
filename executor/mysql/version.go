package mysql

import (
	"context"
	"errors"
	"fmt"

	mysqldrv "github.com/go-sql-driver/mysql"
)

// DataVersion returns a token that changes when the data of the inspected
// database (Schema().Name) changes: the latest UPDATE_TIME, the sum of TABLE_ROWS and the
// count of their tables in information_schema.TABLES. Used as the data
// version of the service's answer cache (server.Cache.DataVersion).
//
// UPDATE_TIME has a resolution of one second, and TABLE_ROWS is InnoDB's
// estimate: two writes within one second that leave the estimate
// unchanged share a token, so an answer can be reused for up to a second
// after a write. On MySQL 8 the session's information_schema_stats_expiry
// is set to 0 first, so the figures are read fresh rather than from the
// day-long statistics cache; MariaDB has no such cache. An error means
// the server cannot be reached.
func (e *Executor) DataVersion(ctx context.Context) (string, error) {
	conn, err := e.db.Conn(ctx)
	if err != nil {
		return "", fmt.Errorf("mysql: data version: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "SET SESSION information_schema_stats_expiry = 0"); err != nil && !unknownVariable(err) {
		return "", fmt.Errorf("mysql: data version: %w", err)
	}
	const q = "SELECT COUNT(*), COALESCE(CAST(MAX(UPDATE_TIME) AS CHAR), ''), COALESCE(SUM(TABLE_ROWS), 0) FROM information_schema.TABLES WHERE TABLE_SCHEMA = ?"
	var tables int64
	var updated string
	var rows int64
	if err := conn.QueryRowContext(ctx, q, e.schema.Name).Scan(&tables, &updated, &rows); err != nil {
		return "", fmt.Errorf("mysql: data version: %w", err)
	}
	return fmt.Sprintf("%d/%s/%d", tables, updated, rows), nil
}

// unknownVariable reports MariaDB's refusal of a MySQL-only variable
// (ER_UNKNOWN_SYSTEM_VARIABLE).
func unknownVariable(err error) bool {
	var me *mysqldrv.MySQLError
	return errors.As(err, &me) && me.Number == 1193
}

package mysql

import (
	"context"
	"errors"
	"fmt"
	"strings"

	mysqldrv "github.com/go-sql-driver/mysql"
)

// DataVersion returns a token that changes whenever a write is committed
// to the inspected database (Schema().Name): InnoDB's current log
// sequence number (Innodb_lsn_current on MariaDB,
// Innodb_redo_log_current_lsn on MySQL 8.0.30 and later), which every
// InnoDB commit moves, with the latest UPDATE_TIME, the sum of
// TABLE_ROWS and the count of the database's tables in
// information_schema.TABLES for the other engines. Used as the data
// version of the service's answer cache (server.Cache.DataVersion).
//
// The log sequence number is server-wide: writes to other databases, and
// InnoDB's own background work, move it too, so the cache misses more
// often than the data changes, but an InnoDB write is never missed. For
// other engines (MyISAM, Aria) only UPDATE_TIME moves, to the second: two
// writes within one second can share a token. On MySQL 8 the session's
// information_schema_stats_expiry is set to 0 first, so the figures are
// read fresh rather than from the day-long statistics cache. An error
// means the server cannot be reached.
func (e *Executor) DataVersion(ctx context.Context) (string, error) {
	conn, err := e.db.Conn(ctx)
	if err != nil {
		return "", fmt.Errorf("mysql: data version: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "SET SESSION information_schema_stats_expiry = 0"); err != nil && !unknownVariable(err) {
		return "", fmt.Errorf("mysql: data version: %w", err)
	}
	var lsn []string
	rows, err := conn.QueryContext(ctx, "SHOW GLOBAL STATUS WHERE Variable_name IN ('Innodb_lsn_current', 'Innodb_redo_log_current_lsn')")
	if err != nil {
		return "", fmt.Errorf("mysql: data version: %w", err)
	}
	for rows.Next() {
		var name, value string
		if err := rows.Scan(&name, &value); err != nil {
			rows.Close()
			return "", fmt.Errorf("mysql: data version: %w", err)
		}
		lsn = append(lsn, name+"="+value)
	}
	if err := rows.Close(); err != nil {
		return "", fmt.Errorf("mysql: data version: %w", err)
	}
	const q = "SELECT COUNT(*), COALESCE(CAST(MAX(UPDATE_TIME) AS CHAR), ''), COALESCE(SUM(TABLE_ROWS), 0) FROM information_schema.TABLES WHERE TABLE_SCHEMA = ?"
	var tables, rowCount int64
	var updated string
	if err := conn.QueryRowContext(ctx, q, e.schema.Name).Scan(&tables, &updated, &rowCount); err != nil {
		return "", fmt.Errorf("mysql: data version: %w", err)
	}
	return fmt.Sprintf("%s/%d/%s/%d", strings.Join(lsn, ","), tables, updated, rowCount), nil
}

// unknownVariable reports MariaDB's refusal of a MySQL-only variable
// (ER_UNKNOWN_SYSTEM_VARIABLE).
func unknownVariable(err error) bool {
	var me *mysqldrv.MySQLError
	return errors.As(err, &me) && me.Number == 1193
}

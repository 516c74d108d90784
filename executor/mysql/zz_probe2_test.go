package mysql

import (
	"context"
	"fmt"
	"testing"
	"time"

	text2sql "github.com/text2sql-go/text2sql"
)

func zzRun(e *Executor, q string) {
	res, err := e.Execute(context.Background(), text2sql.ExecuteRequest{SQL: q})
	if err != nil {
		fmt.Printf("%-60s ERR %v\n", q, err)
		return
	}
	if res.Error != nil {
		fmt.Printf("%-60s SQLERR %s %s\n", q, res.Error.Kind, res.Error.Message)
		return
	}
	fmt.Printf("%-60s %v\n", q, res.Rows)
}

func TestZZRuntimeProbe(t *testing.T) {
	e, _, _ := setupWith(t, Options{MaxOpenConns: 1, Timeout: 5 * time.Second}, securityFixture...)
	for _, q := range []string{
		"SELECT CONNECTION_ID(), RAND(), RAND()",
		"SELECT CONNECTION_ID(), RAND()",
		"SELECT CONNECTION_ID(), @@warning_count, @@error_count, ROW_COUNT(), FOUND_ROWS()",
		"SELECT CAST('x' AS INT), CAST('y' AS INT)",
		"SELECT CONNECTION_ID(), @@warning_count, @@error_count, ROW_COUNT(), FOUND_ROWS()",
		"SELECT nosuchcol FROM singer",
		"SELECT CONNECTION_ID(), @@warning_count, @@error_count, ROW_COUNT(), FOUND_ROWS()",
		"SELECT @@rand_seed1, @@rand_seed2, @@last_gtid, @@timestamp, @@pseudo_thread_id, @@max_statement_time, @@sql_select_limit, @@in_transaction, @@tx_read_only",
		"SELECT @@identity, @@insert_id, @@last_insert_id",
		"SELECT @@session.max_statement_time, @@session.sql_select_limit",
	} {
		zzRun(e, q)
	}
}

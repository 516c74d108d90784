package mysql

import (
	"fmt"
	"testing"
)

func TestZZGuardProbe(t *testing.T) {
	g := NewGuard("STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_AUTO_CREATE_USER,NO_ENGINE_SUBSTITUTION", nil).Confine("test", false)
	for _, q := range []string{
		"SELECT RAND()", "SELECT @@warning_count", "SELECT @@error_count", "SELECT @@last_insert_id", "SELECT @@identity",
		"SELECT @@insert_id", "SELECT @@timestamp", "SELECT @@rand_seed1", "SELECT @x", "SELECT @@session.sql_select_limit",
		"SELECT ROW_COUNT(), FOUND_ROWS(), LAST_INSERT_ID()", "SELECT UUID_SHORT()", "SELECT CONNECTION_ID()",
		"SHOW WARNINGS", "SELECT @@last_gtid", "SELECT @@max_statement_time", "SELECT @@in_transaction",
		"SELECT @@session.last_query_cost", "SELECT @@pseudo_thread_id", "SELECT SQL_CALC_FOUND_ROWS 1",
		"SELECT @@group_concat_max_len", "SELECT @@character_set_results", "SELECT CURRENT_ROLE()", "SELECT RANDOM_BYTES(4)",
		"SELECT @@sql_mode", "SELECT LASTVAL(seq1)", "SELECT PREVIOUS VALUE FOR seq1", "SELECT @@session.tx_read_only",
		"SELECT RAND(1)", "SELECT * FROM seq_1_to_3", "SELECT @@warning_count, @@error_count",
		"SELECT 1 FROM DUAL WHERE 1/0", "SELECT CAST('x' AS INT)", "SELECT @@hostname", "SELECT @@proxy_protocol_networks",
		"SELECT @@session.optimizer_trace", "SELECT @@thread_id", "SELECT @@statement_id", "SELECT 1 LIMIT ROWS EXAMINED 10",
	} {
		_, se := g.Plan(q)
		if se != nil {
			fmt.Printf("REFUSED %-50s %s: %s\n", q, se.Kind, se.Message)
		} else {
			fmt.Printf("OK      %s\n", q)
		}
	}
}

package lint

import (
	"strings"

	text2sql "github.com/text2sql-go/text2sql"
)

// ClassifySQLState maps a PostgreSQL SQLSTATE (five characters, as
// PostgreSQL, PostgREST and a sandbox function relay it) to an error
// kind: undefined_table and invalid_schema_name give KindUnknownTable,
// undefined_column KindUnknownColumn, syntax_error KindSyntax,
// query_canceled and the lock and idle timeouts KindTimeout,
// read_only_sql_transaction KindNotReadOnly, insufficient_privilege
// KindForbiddenStatement, the program, complexity, memory and string
// length limits KindTooLarge, and any other code of the data, syntax
// and transaction classes (2x, 42) KindRuntime. For a code of another
// class (a connection or server failure) or no code it is Classify(msg).
func ClassifySQLState(code, msg string) text2sql.ErrorKind {
	switch code {
	case "42P01", "3F000": // undefined_table, invalid_schema_name
		return text2sql.KindUnknownTable
	case "42703": // undefined_column
		return text2sql.KindUnknownColumn
	case "42601": // syntax_error
		return text2sql.KindSyntax
	case "57014", "55P03", "25P03": // query_canceled, lock_not_available, idle_in_transaction_session_timeout
		return text2sql.KindTimeout
	case "25006": // read_only_sql_transaction
		return text2sql.KindNotReadOnly
	case "42501": // insufficient_privilege
		return text2sql.KindForbiddenStatement
	case "54000", "54001", "53200", "22001": // program_limit_exceeded, statement_too_complex, out_of_memory, string_data_right_truncation
		return text2sql.KindTooLarge
	}
	if strings.HasPrefix(code, "42") || strings.HasPrefix(code, "2") {
		return text2sql.KindRuntime
	}
	return Classify(msg)
}

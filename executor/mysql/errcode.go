package mysql

import (
	"errors"

	mysqldrv "github.com/go-sql-driver/mysql"

	text2sql "github.com/text2sql-go/text2sql"
)

// errorKinds maps the server error numbers of MySQL and MariaDB that a
// query can meet to an error kind. Numbers are shared by both servers
// unless marked; those of the kinds' other errors (DDL, replication)
// cannot arise from a read-only query.
var errorKinds = map[uint16]text2sql.ErrorKind{
	1146: text2sql.KindUnknownTable,  // ER_NO_SUCH_TABLE
	1932: text2sql.KindUnknownTable,  // ER_NO_SUCH_TABLE_IN_ENGINE (MariaDB)
	1054: text2sql.KindUnknownColumn, // ER_BAD_FIELD_ERROR
	1064: text2sql.KindSyntax,        // ER_PARSE_ERROR
	1149: text2sql.KindSyntax,        // ER_SYNTAX_ERROR

	1317: text2sql.KindTimeout, // ER_QUERY_INTERRUPTED (KILL QUERY)
	1969: text2sql.KindTimeout, // ER_STATEMENT_TIMEOUT (MariaDB max_statement_time)
	1931: text2sql.KindTimeout, // ER_QUERY_RESULT_INCOMPLETE (MariaDB LIMIT ROWS EXAMINED)
	3024: text2sql.KindTimeout, // ER_QUERY_TIMEOUT (MySQL max_execution_time; unused in MariaDB)

	1792: text2sql.KindNotReadOnly, // ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION
	1836: text2sql.KindNotReadOnly, // ER_READ_ONLY_MODE
	1874: text2sql.KindNotReadOnly, // ER_INNODB_READ_ONLY

	1044: text2sql.KindForbiddenStatement, // ER_DBACCESS_DENIED_ERROR
	1045: text2sql.KindForbiddenStatement, // ER_ACCESS_DENIED_ERROR
	1142: text2sql.KindForbiddenStatement, // ER_TABLEACCESS_DENIED_ERROR
	1143: text2sql.KindForbiddenStatement, // ER_COLUMNACCESS_DENIED_ERROR
	1227: text2sql.KindForbiddenStatement, // ER_SPECIFIC_ACCESS_DENIED_ERROR
	1370: text2sql.KindForbiddenStatement, // ER_PROCACCESS_DENIED_ERROR
	1698: text2sql.KindForbiddenStatement, // ER_ACCESS_DENIED_NO_PASSWORD_ERROR

	1037: text2sql.KindTooLarge, // ER_OUTOFMEMORY
	1041: text2sql.KindTooLarge, // ER_OUT_OF_RESOURCES
	3015: text2sql.KindTooLarge, // ER_ENGINE_OUT_OF_MEMORY
	1406: text2sql.KindTooLarge, // ER_DATA_TOO_LONG
	1059: text2sql.KindTooLarge, // ER_TOO_LONG_IDENT
	1074: text2sql.KindTooLarge, // ER_TOO_BIG_FIELDLENGTH
	1118: text2sql.KindTooLarge, // ER_TOO_BIG_ROWSIZE
	1256: text2sql.KindTooLarge, // ER_TOO_BIG_FOR_UNCOMPRESS
	1425: text2sql.KindTooLarge, // ER_TOO_BIG_SCALE
	1426: text2sql.KindTooLarge, // ER_TOO_BIG_PRECISION
	1470: text2sql.KindTooLarge, // ER_WRONG_STRING_LENGTH
	1742: text2sql.KindTooLarge, // ER_VALUE_TOO_LONG
	4026: text2sql.KindTooLarge, // ER_EXPRESSION_IS_TOO_BIG (MariaDB)
	4075: text2sql.KindTooLarge, // ER_NET_OK_PACKET_TOO_LARGE (MariaDB)

	// Errors whose number says only that a storage engine or plugin
	// failed: their message says how (out of memory, interrupted).
	1028: "", // ER_FILSORT_ABORT: Sort aborted: %s
	1030: "", // ER_GET_ERRNO: Got error %M from storage engine
	1105: "", // ER_UNKNOWN_ERROR
	1296: "", // ER_GET_ERRMSG: Got error %d '%s' from %s
}

// errorKind is the kind of err by its server error number (errorKinds;
// KindRuntime for a number not listed), or "" for an error that carries
// no number — the driver's own, a lost connection — or one whose number
// leaves the kind to the message; the generic executor then classifies
// the message (lint.Classify).
func errorKind(err error) text2sql.ErrorKind {
	var me *mysqldrv.MySQLError
	if !errors.As(err, &me) {
		return ""
	}
	if k, ok := errorKinds[me.Number]; ok {
		return k
	}
	return text2sql.KindRuntime
}

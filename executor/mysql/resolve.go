package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	mysqldrv "github.com/go-sql-driver/mysql"

	text2sql "github.com/text2sql-go/text2sql"
)

// How the server resolves an unqualified call name(…): to a native
// function of its own when the name is one (the parser's own functions,
// COUNT(, SUBSTRING(, NOW(, only when written that way: unquoted, the
// parenthesis right after the name unless IGNORE_SPACE), else to a
// loadable function (CREATE FUNCTION … SONAME) of that name, else to a
// stored function of the current database. So a name that is not a
// built-in of this server, or a built-in written as `count`(x) or
// count (x), runs whatever function of that name exists when the
// statement runs, created after Open or not.

// The server's answers to PREPARE of SELECT name() that say it read
// name as a stored function: it does not exist (ER_SP_DOES_NOT_EXIST),
// it does not exist and a native function has that name in another form
// (ER_FUNC_INEXISTENT_NAME_COLLISION), or it exists with other
// parameters (ER_SP_WRONG_NO_OF_ARGS).
const (
	erSPDoesNotExist        = 1305
	erFuncInexistentName    = 1630
	erSPWrongNumberOfArgs   = 1318
	erTableAccessDenied     = 1142
	erNoSuchTable           = 1146
	probeStatementName      = "text2sql_probe"
	storedFunctionsOfThisDB = `SELECT LOWER(ROUTINE_NAME) FROM information_schema.ROUTINES
		WHERE ROUTINE_SCHEMA = DATABASE() AND ROUTINE_TYPE = 'FUNCTION'`
)

// builtinsOnly takes off the allow-list every name this server does not
// resolve to a built-in of its own (such as TRANSLATE, REGEXP_LIKE or
// MONTHS_BETWEEN on MariaDB 10.11, which MySQL or Oracle have): it asks
// the server to prepare SELECT name() for each and drops the names it
// reads as a stored function, and those of the current database's
// stored functions. Preparing runs nothing: a stored function's body is
// parsed, not run. Names in extra (the host's own) stay. It runs once,
// when the executor is made.
func (c *Guard) builtinsOnly(ctx context.Context, db *sql.DB, extra []string) error {
	keep := map[string]bool{}
	for _, f := range extra {
		keep[strings.ToLower(strings.TrimSpace(f))] = true
	}
	stored, err := queryNames(ctx, db, storedFunctionsOfThisDB)
	if err != nil {
		return fmt.Errorf("mysql: stored functions: %w", err)
	}
	for _, name := range stored {
		if !keep[name] {
			delete(c.allow, name)
		}
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("mysql: built-in functions: %w", err)
	}
	defer conn.Close()
	for name := range c.allow {
		if keep[name] || !sqlName(name) {
			continue
		}
		_, err := conn.ExecContext(ctx, "PREPARE "+probeStatementName+" FROM 'SELECT "+name+"()'")
		if code := serverError(err); code == erSPDoesNotExist || code == erFuncInexistentName || code == erSPWrongNumberOfArgs {
			delete(c.allow, name)
		} else if err != nil && code == 0 {
			return fmt.Errorf("mysql: built-in functions: %w", err)
		}
	}
	conn.ExecContext(ctx, "DEALLOCATE PREPARE "+probeStatementName) //nolint:errcheck // absent when every probe failed
	return nil
}

// serverError is the server's error number of err, or 0.
func serverError(err error) uint16 {
	var me *mysqldrv.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	return 0
}

func queryNames(ctx context.Context, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, query string, args ...any) ([]string, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, err
		}
		names = append(names, name)
	}
	return names, rows.Err()
}

// canReadUDFs reports whether the login may read mysql.func, the
// server's list of loadable functions.
func canReadUDFs(ctx context.Context, db *sql.DB) (bool, error) {
	_, err := queryNames(ctx, db, "SELECT name FROM mysql.func LIMIT 0")
	switch code := serverError(err); {
	case err == nil:
		return true, nil
	case code == erTableAccessDenied || code == erNoSuchTable:
		return false, nil
	default:
		return false, fmt.Errorf("mysql: loadable functions: %w", err)
	}
}

// shadowError is a refusal decided on the server before the statement
// ran: a call a stored or loadable function of the same name would
// answer, or another database named.
type shadowError struct{ se *text2sql.SQLError }

func (e *shadowError) Error() string { return e.se.Message }

// confirm checks on the server what the Guard could not decide alone:
// the names st calls (confirmCalls) and, for a text the parser did not
// read, that no qualifier names another database.
func (e *Executor) confirm(ctx context.Context, conn *sql.Conn, st Statement) error {
	if err := e.confirmCalls(ctx, conn, st.Calls); err != nil || !st.Unparsed || len(st.Qualifiers) == 0 {
		return err
	}
	args := make([]any, len(st.Qualifiers))
	for i, q := range st.Qualifiers {
		args[i] = q
	}
	other := "BINARY SCHEMA_NAME <> BINARY DATABASE()"
	if e.checker.foldCase {
		other = "SCHEMA_NAME <> DATABASE()"
	}
	found, err := queryNames(ctx, conn, "SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE "+other+
		" AND SCHEMA_NAME IN (?"+strings.Repeat(", ?", len(args)-1)+")", args...)
	if err != nil {
		return fmt.Errorf("mysql: databases: %w", err)
	}
	if len(found) == 0 {
		return nil
	}
	return &shadowError{&text2sql.SQLError{Kind: text2sql.KindForbiddenTable,
		Message: strings.Join(found, ", ") + " is another database of the server; only the tables of " + e.checker.database + " may be read",
		Hint:    "name tables without a database, as the schema shows them"}}
}

// confirmCalls makes sure, on the statement's own connection right
// before it runs, that no stored function of the current database and
// no loadable function has the name of one of calls (minus the host's
// own, allowed): the server would run it instead of its built-in when
// the name is written quoted or with a space before the parenthesis,
// or when it has no built-in of that name. Loadable functions are
// checked where the login may read mysql.func.
func (e *Executor) confirmCalls(ctx context.Context, conn *sql.Conn, calls []string) error {
	var args []any
	for _, name := range calls {
		if !e.hostFunctions[name] {
			args = append(args, name)
		}
	}
	if len(args) == 0 {
		return nil
	}
	in := "(?" + strings.Repeat(", ?", len(args)-1) + ")"
	query := storedFunctionsOfThisDB + " AND ROUTINE_NAME IN " + in
	if e.udfsVisible {
		query += " UNION SELECT LOWER(name) FROM mysql.func WHERE name IN " + in
		args = append(args, args...)
	}
	found, err := queryNames(ctx, conn, query, args...)
	if err != nil {
		return fmt.Errorf("mysql: stored functions: %w", err)
	}
	if len(found) == 0 {
		return nil
	}
	return &shadowError{&text2sql.SQLError{Kind: text2sql.KindForbiddenFunction,
		Message: "the database has a stored or loadable function named " + strings.Join(found, ", ") +
			", which the server may call instead of the built-in; it is not on the allow-list of read-only functions",
		Hint: "compute the value another way, or ask the host to allow the function"}}
}

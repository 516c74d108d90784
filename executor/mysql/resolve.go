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
	erUnknownTable          = 1109
	probeStatementName      = "text2sql_probe"
	storedFunctionsOfThisDB = `SELECT LOWER(ROUTINE_NAME) FROM information_schema.ROUTINES
		WHERE ROUTINE_SCHEMA = DATABASE() AND ROUTINE_TYPE = 'FUNCTION'`
)

// builtinsOnly takes off the allow-list every name this server does not
// resolve to a built-in of its own (such as TRANSLATE, REGEXP_LIKE or
// MONTHS_BETWEEN on MariaDB 10.11, which MySQL or Oracle have), and
// those of the current database's stored functions and of the server's
// loadable functions (mysql.func, where the login may read it). Names in
// extra (the host's own) stay. It runs once, when the executor is made.
//
// Where the server lists its functions and keywords (MariaDB 10.6 and
// later: information_schema.SQL_FUNCTIONS and KEYWORDS), a listed
// function is a built-in, which the server resolves before any loadable
// or stored function, and a name in neither list is not one. The other
// names — keywords, or every name on a server without the lists — are
// asked of the server: it prepares SELECT name() and the names it reads
// as a stored function are dropped. Preparing runs no stored function
// (its body is parsed, not run) but does run a loadable function's init
// code, which is why loadable functions are dropped first and, where
// the lists exist, only keywords are asked.
func (c *Guard) builtinsOnly(ctx context.Context, db *sql.DB, extra []string) error {
	keep := map[string]bool{}
	for _, f := range extra {
		keep[strings.ToLower(strings.TrimSpace(f))] = true
	}
	stored, err := queryNames(ctx, db, storedFunctionsOfThisDB)
	if err != nil {
		return fmt.Errorf("mysql: stored functions: %w", err)
	}
	udfs, _, err := loadableFunctions(ctx, db)
	if err != nil {
		return err
	}
	for _, name := range append(stored, udfs...) {
		if !keep[name] {
			delete(c.allow, name)
		}
	}
	native, keywords, err := serverLists(ctx, db)
	if err != nil {
		return err
	}
	var ask []string
	for name := range c.allow {
		switch sql := displayName(name); {
		case keep[name] || !sqlName(name):
		case native == nil || keywords[sql]:
			ask = append(ask, name)
		case !native[sql]:
			delete(c.allow, name)
		}
	}
	return c.askServer(ctx, db, ask)
}

// loadableFunctions are the names in mysql.func, in lower case;
// visible is false when the login may not read it.
func loadableFunctions(ctx context.Context, db *sql.DB) (names []string, visible bool, err error) {
	names, err = queryNames(ctx, db, "SELECT LOWER(name) FROM mysql.func")
	switch code := serverError(err); {
	case err == nil:
		return names, true, nil
	case code == erTableAccessDenied || code == erNoSuchTable:
		return nil, false, nil
	default:
		return nil, false, fmt.Errorf("mysql: loadable functions: %w", err)
	}
}

// serverLists are the server's own lists of its built-in functions and
// of its keywords, in lower case; both nil where it has none.
func serverLists(ctx context.Context, db *sql.DB) (native, keywords map[string]bool, err error) {
	set := func(q string) (map[string]bool, error) {
		names, err := queryNames(ctx, db, q)
		if err != nil {
			return nil, err
		}
		m := make(map[string]bool, len(names))
		for _, n := range names {
			m[strings.ToLower(n)] = true
		}
		return m, nil
	}
	native, err = set("SELECT FUNCTION FROM information_schema.SQL_FUNCTIONS")
	if code := serverError(err); code == erUnknownTable || code == erNoSuchTable {
		return nil, nil, nil
	} else if err != nil {
		return nil, nil, fmt.Errorf("mysql: built-in functions: %w", err)
	}
	if keywords, err = set("SELECT WORD FROM information_schema.KEYWORDS"); err != nil {
		return nil, nil, fmt.Errorf("mysql: keywords: %w", err)
	}
	return native, keywords, nil
}

// askServer prepares SELECT name() for each of names, as the statement
// would write it, and drops those the server reads as a stored function.
func (c *Guard) askServer(ctx context.Context, db *sql.DB, names []string) error {
	if len(names) == 0 {
		return nil
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("mysql: built-in functions: %w", err)
	}
	defer conn.Close()
	for _, name := range names {
		_, err := conn.ExecContext(ctx, "PREPARE "+probeStatementName+" FROM 'SELECT "+displayName(name)+"()'")
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
	_, visible, err := loadableFunctions(ctx, db)
	return visible, err
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

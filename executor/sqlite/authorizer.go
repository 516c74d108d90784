package sqlite

// #include "auth.h"
import "C"

import (
	"errors"
	"runtime/cgo"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	sqlite3 "github.com/mattn/go-sqlite3"

	text2sql "github.com/text2sql-go/text2sql"
)

// DefaultFunctions is the built-in allow-list of SQL functions: read-only
// core scalar functions, aggregates, date and time functions, math
// functions, JSON functions and window functions, plus the functions behind
// the LIKE, GLOB and -> / ->> operators. Every name is lower case. Functions
// that touch files, load code or reveal the connection's state
// (load_extension, readfile, writefile, edit, fts3_tokenizer,
// sqlite_compileoption_*, changes, last_insert_rowid, go-sqlite3's auth_*)
// are not on it, nor json_patch and jsonb_patch, whose one call compares
// every key of one object with every key of the other (two 1 MiB objects:
// minutes, which SQLite cannot interrupt). zeroblob, randomblob, printf and
// similar functions whose result can be large are on it:
// SQLITE_LIMIT_LENGTH (Options.MaxLength) bounds every string and blob, and
// they fail with KindTooLarge beyond it.
var DefaultFunctions = strings.Fields(`
	abs char coalesce concat concat_ws format glob hex ifnull iif if instr length like likelihood
	likely lower ltrim max min nullif octet_length printf quote random randomblob replace round
	rtrim sign soundex substr substring trim typeof unhex unicode unistr unistr_quote unlikely upper zeroblob
	sqlite_version
	avg count group_concat string_agg sum total median percentile percentile_cont percentile_disc
	date time datetime julianday unixepoch strftime timediff current_date current_time current_timestamp
	acos acosh asin asinh atan atan2 atanh ceil ceiling cos cosh degrees exp floor ln log log10 log2
	mod pi pow power radians sin sinh sqrt tan tanh trunc
	json jsonb json_array jsonb_array json_array_length json_error_position json_extract jsonb_extract
	json_insert jsonb_insert json_object jsonb_object json_pretty json_remove
	jsonb_remove json_replace jsonb_replace json_set jsonb_set json_type json_valid json_quote
	json_group_array jsonb_group_array json_group_object jsonb_group_object -> ->>
	row_number rank dense_rank percent_rank cume_dist ntile lag lead first_value last_value nth_value
`)

// authState is the authorizer of one connection. It records the first
// denial since the last reset, so the executor can report a stable kind
// instead of SQLite's bare "not authorized". SQLite calls auth.c, which
// allows SELECT, READ and WITH RECURSIVE itself and passes every other
// action to authorize.
type authState struct {
	allow map[string]bool // shared, read-only
	calls *atomic.Int64   // shared count of authorizer calls (tests read it)
	c     *C.auth_state   // auth.c's state, nil when not installed
	h     cgo.Handle      // the handle auth.c passes back to goAuthorize

	mu     sync.Mutex
	denial *text2sql.SQLError
}

// install makes a db's authorizer (db is the connection's handle), with
// the allow-list's ASCII names in C, where auth.c looks them up.
func (a *authState) install(db *C.sqlite3) error {
	var names []string
	for name := range a.allow {
		if plainASCII(name) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	var blob []byte
	for _, name := range names {
		blob = append(append(blob, name...), 0)
	}
	a.h = cgo.NewHandle(a)
	a.c = C.auth_install(db, C.uintptr_t(a.h), (*C.char)(C.CBytes(blob)), C.int(len(names)))
	if a.c == nil {
		a.h.Delete()
		return errors.New("sqlite: cannot set the authorizer")
	}
	return nil
}

// plainASCII reports whether s is ASCII without NUL, a name auth.c can
// hold as a C string and fold as Go's strings.ToLower does.
func plainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == 0 || s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// free releases what install took; the connection must be closed.
func (a *authState) free() {
	if a.c != nil {
		C.auth_free(a.c)
		a.h.Delete()
		a.c = nil
	}
}

// reset clears the record before a statement is prepared.
func (a *authState) reset() {
	a.mu.Lock()
	a.denial = nil
	a.mu.Unlock()
	if a.c != nil {
		a.c.saw_select = 0
	}
}

// count adds the authorizer calls since it last counted to a.calls.
func (a *authState) count() {
	if a.c != nil && a.calls != nil {
		a.calls.Add(int64(a.c.calls))
		a.c.calls = 0
	}
}

// denied returns the first denial since the last reset, or nil.
func (a *authState) denied() *text2sql.SQLError {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.denial == nil {
		return nil
	}
	d := *a.denial
	return &d
}

//export goAuthorize
func goAuthorize(h C.uintptr_t, op C.int, arg1, arg2, arg3 *C.char, sawSelect C.int) C.int {
	a := cgo.Handle(h).Value().(*authState)
	return C.int(a.authorize(int(op), C.GoString(arg1), C.GoString(arg2), C.GoString(arg3), sawSelect != 0))
}

// authorize decides the actions auth.c does not: it allows calling
// allow-listed functions (those auth.c has not found: names beyond
// ASCII or longer than it looks up) and denies every other action. Its arguments
// are the action code and up to three names (see
// https://www.sqlite.org/c3ref/c_alter_table.html), and whether the
// statement so far held a SELECT.
func (a *authState) authorize(op int, arg1, arg2, arg3 string, sawSelect bool) int {
	switch op {
	case sqlite3.SQLITE_FUNCTION:
		name := strings.ToLower(arg2)
		if a.allow[name] {
			return sqlite3.SQLITE_OK
		}
		return a.deny(text2sql.KindForbiddenFunction, "function "+name+"() is not allowed")
	case sqlite3.SQLITE_PRAGMA:
		name := strings.ToLower(arg1)
		if sawSelect {
			// pragma_xxx(…) in FROM: a read-only table-valued function
			// (SQLite offers only side-effect-free pragmas this way).
			if a.allow["pragma_"+name] {
				return sqlite3.SQLITE_OK
			}
			return a.deny(text2sql.KindForbiddenFunction, "function pragma_"+name+"() is not allowed")
		}
		return a.deny(text2sql.KindForbiddenStatement, "PRAGMA "+name+" is not allowed")
	case sqlite3.SQLITE_ATTACH:
		// VACUUM (and VACUUM INTO) attach their target as well.
		return a.deny(text2sql.KindForbiddenStatement, "ATTACH and VACUUM are not allowed")
	case sqlite3.SQLITE_DETACH:
		return a.deny(text2sql.KindForbiddenStatement, "DETACH is not allowed")
	case sqlite3.SQLITE_TRANSACTION, sqlite3.SQLITE_SAVEPOINT:
		return a.deny(text2sql.KindForbiddenStatement, "transaction control ("+strings.ToUpper(arg1)+") is not allowed")
	case sqlite3.SQLITE_INSERT, sqlite3.SQLITE_UPDATE, sqlite3.SQLITE_DELETE,
		sqlite3.SQLITE_CREATE_INDEX, sqlite3.SQLITE_CREATE_TABLE, sqlite3.SQLITE_CREATE_TEMP_INDEX,
		sqlite3.SQLITE_CREATE_TEMP_TABLE, sqlite3.SQLITE_CREATE_TEMP_TRIGGER, sqlite3.SQLITE_CREATE_TEMP_VIEW,
		sqlite3.SQLITE_CREATE_TRIGGER, sqlite3.SQLITE_CREATE_VIEW, sqlite3.SQLITE_CREATE_VTABLE,
		sqlite3.SQLITE_DROP_INDEX, sqlite3.SQLITE_DROP_TABLE, sqlite3.SQLITE_DROP_TEMP_INDEX,
		sqlite3.SQLITE_DROP_TEMP_TABLE, sqlite3.SQLITE_DROP_TEMP_TRIGGER, sqlite3.SQLITE_DROP_TEMP_VIEW,
		sqlite3.SQLITE_DROP_TRIGGER, sqlite3.SQLITE_DROP_VIEW, sqlite3.SQLITE_DROP_VTABLE,
		sqlite3.SQLITE_ALTER_TABLE, sqlite3.SQLITE_REINDEX, sqlite3.SQLITE_ANALYZE:
		if (op == sqlite3.SQLITE_INSERT || op == sqlite3.SQLITE_UPDATE || op == sqlite3.SQLITE_DELETE) && schemaTable(arg1) {
			// CREATE, DROP and ALTER first write the schema table, and
			// SQLite stops at this first denial.
			return a.deny(text2sql.KindNotReadOnly, "schema change (CREATE, DROP, ALTER) is not allowed; the connection is read-only")
		}
		what := actionNames[op]
		if arg1 != "" {
			what += " on " + arg1
		}
		return a.deny(text2sql.KindNotReadOnly, what+" changes the database; the connection is read-only")
	}
	return a.deny(text2sql.KindForbiddenStatement, "action not allowed on a read-only connection")
}

func (a *authState) deny(kind text2sql.ErrorKind, msg string) int {
	a.mu.Lock()
	if a.denial == nil {
		a.denial = &text2sql.SQLError{Kind: kind, Message: msg}
	}
	a.mu.Unlock()
	return sqlite3.SQLITE_DENY
}

var actionNames = map[int]string{
	sqlite3.SQLITE_INSERT: "INSERT", sqlite3.SQLITE_UPDATE: "UPDATE", sqlite3.SQLITE_DELETE: "DELETE",
	sqlite3.SQLITE_CREATE_INDEX: "CREATE INDEX", sqlite3.SQLITE_CREATE_TABLE: "CREATE TABLE",
	sqlite3.SQLITE_CREATE_TEMP_INDEX: "CREATE TEMP INDEX", sqlite3.SQLITE_CREATE_TEMP_TABLE: "CREATE TEMP TABLE",
	sqlite3.SQLITE_CREATE_TEMP_TRIGGER: "CREATE TEMP TRIGGER", sqlite3.SQLITE_CREATE_TEMP_VIEW: "CREATE TEMP VIEW",
	sqlite3.SQLITE_CREATE_TRIGGER: "CREATE TRIGGER", sqlite3.SQLITE_CREATE_VIEW: "CREATE VIEW",
	sqlite3.SQLITE_CREATE_VTABLE: "CREATE VIRTUAL TABLE", sqlite3.SQLITE_DROP_INDEX: "DROP INDEX",
	sqlite3.SQLITE_DROP_TABLE: "DROP TABLE", sqlite3.SQLITE_DROP_TEMP_INDEX: "DROP TEMP INDEX",
	sqlite3.SQLITE_DROP_TEMP_TABLE: "DROP TEMP TABLE", sqlite3.SQLITE_DROP_TEMP_TRIGGER: "DROP TEMP TRIGGER",
	sqlite3.SQLITE_DROP_TEMP_VIEW: "DROP TEMP VIEW", sqlite3.SQLITE_DROP_TRIGGER: "DROP TRIGGER",
	sqlite3.SQLITE_DROP_VIEW: "DROP VIEW", sqlite3.SQLITE_DROP_VTABLE: "DROP VIRTUAL TABLE",
	sqlite3.SQLITE_ALTER_TABLE: "ALTER TABLE", sqlite3.SQLITE_REINDEX: "REINDEX", sqlite3.SQLITE_ANALYZE: "ANALYZE",
}

func schemaTable(name string) bool {
	switch strings.ToLower(name) {
	case "sqlite_master", "sqlite_schema", "sqlite_temp_master", "sqlite_temp_schema":
		return true
	}
	return false
}

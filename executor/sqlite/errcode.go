package sqlite

import (
	"errors"

	sqlite3 "github.com/mattn/go-sqlite3"

	text2sql "github.com/text2sql-go/text2sql"
)

// errorKind is the kind of err by its SQLite result code, or "" when the
// code leaves the kind to the message (lint.Classify): an error that is
// not SQLite's, and SQLITE_ERROR, the one code of an unknown table, an
// unknown column, a syntax error and a function's own error alike.
// Other codes — busy, locked, corrupt, constraint, mismatch, range —
// are KindRuntime.
func errorKind(err error) text2sql.ErrorKind {
	var serr sqlite3.Error
	if !errors.As(err, &serr) {
		return ""
	}
	switch serr.Code {
	case sqlite3.ErrError:
		return ""
	case sqlite3.ErrAuth, sqlite3.ErrPerm:
		return text2sql.KindForbiddenStatement
	case sqlite3.ErrReadonly:
		return text2sql.KindNotReadOnly
	case sqlite3.ErrInterrupt:
		return text2sql.KindTimeout
	case sqlite3.ErrTooBig, sqlite3.ErrNomem:
		return text2sql.KindTooLarge
	}
	return text2sql.KindRuntime
}

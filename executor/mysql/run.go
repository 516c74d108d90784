package mysql

import (
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/executor"
	"github.com/text2sql-go/text2sql/executor/internal/execkit"
	"github.com/text2sql-go/text2sql/internal/sqltext"
	"github.com/text2sql-go/text2sql/lint"
)

// plan returns the statement to run for query: a text longer than
// Options.MaxSQLLength is refused (KindTooLarge) before the Guard sees
// it, and the Guard's plan of an accepted text is remembered by its
// exact text (e.passed), as the Guard's decision depends on the text
// and on what the executor read when it was made only.
func (e *Executor) plan(query string) (Statement, *text2sql.SQLError) {
	if limit := cmp.Or(e.opts.MaxSQLLength, executor.DefaultMaxSQLLength); len(query) > limit {
		return Statement{}, &text2sql.SQLError{Kind: text2sql.KindTooLarge,
			Message: fmt.Sprintf("the statement is %d bytes long; at most %d are allowed", len(query), limit)}
	}
	if e.opts.skipCheck {
		return Statement{Text: sqltext.StripTrailingMySQL(query, e.checker.mode)}, nil
	}
	if st, ok := e.passed.Get(query); ok {
		return st, nil
	}
	st, se := e.checker.Plan(query)
	if se == nil {
		e.passed.Put(query, st)
	}
	return st, se
}

// resultBytes is Options.MaxResultBytes or its default.
func (e *Executor) resultBytes() int {
	return cmp.Or(e.opts.MaxResultBytes, executor.DefaultMaxResultBytes)
}

// errResultTooLarge stops reading a result past Options.MaxResultBytes.
var errResultTooLarge = errors.New("mysql: result too large")

// run sends q on conn (as text, or prepared where e.prepare) and reads
// its rows into res (readRows). It works on the driver's connection
// itself: its values are read once, where database/sql would copy each
// []byte before the executor turns it into a string.
func (e *Executor) run(ctx context.Context, conn *sql.Conn, q string, maxRows int, res *text2sql.Result) error {
	return conn.Raw(func(dc any) error {
		rows, closeStmt, err := e.query(ctx, dc, q)
		if err != nil {
			return err
		}
		defer closeStmt()
		err = e.readRows(rows, maxRows, res)
		if errors.Is(err, errResultTooLarge) {
			// Close the connection rather than read the rest of the
			// result (release closes it too).
			dc.(driver.Conn).Close()
		}
		return cmp.Or(err, rows.Close())
	})
}

// query starts q on the driver connection dc and returns its rows and
// what closes its prepared statement (nothing when sent as text).
func (e *Executor) query(ctx context.Context, dc any, q string) (driver.Rows, func(), error) {
	if !e.prepare {
		qc, ok := dc.(driver.QueryerContext)
		if !ok {
			return nil, nil, driver.ErrBadConn
		}
		rows, err := qc.QueryContext(ctx, q, nil)
		return rows, func() {}, err
	}
	pc, ok := dc.(driver.ConnPrepareContext)
	if !ok {
		return nil, nil, driver.ErrBadConn
	}
	stmt, err := pc.PrepareContext(ctx, q)
	if err != nil {
		return nil, nil, err
	}
	sq, ok := stmt.(driver.StmtQueryContext)
	if !ok {
		stmt.Close()
		return nil, nil, driver.ErrBadConn
	}
	rows, err := sq.QueryContext(ctx, nil)
	if err != nil {
		stmt.Close()
		return nil, nil, err
	}
	return rows, func() { stmt.Close() }, nil
}

// blockValues bounds the values of one block of rows (see readRows):
// 64 KiB of interfaces, so a block of wide rows stays small.
const blockValues = 4096

// readRows reads rows into res, up to maxRows rows (Truncated when there
// are more) and Options.MaxResultBytes bytes, counted as the values'
// bytes plus executor.ValueOverhead per value (errResultTooLarge past
// them). A []byte value becomes a string unless its column is binary.
// Rows are cut from blocks that double with the rows read, up to
// blockValues values, so that a result of many rows takes a few
// allocations for its rows rather than one per row.
func (e *Executor) readRows(rows driver.Rows, maxRows int, res *text2sql.Result) error {
	cols := rows.Columns()
	res.Columns = cols
	binary := make([]bool, len(cols))
	if t, ok := rows.(driver.RowsColumnTypeDatabaseTypeName); ok {
		for i := range cols {
			binary[i] = execkit.BinaryType(t.ColumnTypeDatabaseTypeName(i))
		}
	}
	dest := make([]driver.Value, len(cols))
	limit, size := e.resultBytes(), 0
	var block []any
	for {
		switch err := rows.Next(dest); {
		case err == io.EOF:
			return nil
		case err != nil:
			return err
		}
		if len(res.Rows) == maxRows {
			res.Truncated = true
			return nil
		}
		if len(block) < len(cols) || len(cols) == 0 {
			n := min(max(len(res.Rows), 1), maxRows-len(res.Rows), max(blockValues/max(len(cols), 1), 1))
			block = make([]any, n*len(cols))
		}
		row := block[:len(cols):len(cols)]
		block = block[len(cols):]
		for i, v := range dest {
			size += executor.ValueOverhead
			switch x := v.(type) {
			case []byte:
				size += len(x)
				if binary[i] {
					v = bytes.Clone(x)
				} else {
					v = string(x)
				}
			case uint64:
				v = unsigned(x)
			}
			row[i] = v
		}
		if size > limit {
			return errResultTooLarge
		}
		res.Rows = append(res.Rows, row)
	}
}

// unsigned is a BIGINT UNSIGNED value of the text protocol as the
// binary protocol gives it, and as other integers are: an int64, or
// the decimal text past the largest int64.
func unsigned(x uint64) any {
	if x > math.MaxInt64 {
		return strconv.FormatUint(x, 10)
	}
	return int64(x)
}

// connError is Execute's answer when the statement could not get its
// connection, or the server could not confirm what the Guard left to
// it: the caller's ctx error, a timeout result when cctx's time ran out,
// else a Go error (the executor cannot work).
func (e *Executor) connError(ctx, cctx context.Context, err error, timeout time.Duration, res *text2sql.Result, done func() (*text2sql.Result, error)) (*text2sql.Result, error) {
	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case cctx.Err() != nil:
		res.Error = execkit.TimeoutError(timeout)
		return done()
	}
	return nil, fmt.Errorf("mysql: connection: %w", err)
}

// sqlError classifies a server's error about the statement q: a timeout
// when its time ran out, else by the server's error number (errorKind),
// or its message where the number says less (lint.EngineError, with hints
// from the schema).
func (e *Executor) sqlError(ctx context.Context, err error, q string, timeout time.Duration) *text2sql.SQLError {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return execkit.TimeoutError(timeout)
	}
	se := lint.EngineError(errorKind(err), err.Error(), e.schema, q)
	if se.Kind == text2sql.KindTimeout { // the server's own limit
		return execkit.TimeoutError(timeout)
	}
	return se
}

// Package execkit holds the plumbing the guarded executors share: the
// limits of one execution, the closed-state checks, the result's
// completion, the timeout error and bounded reads. It is internal so the
// executor package's documentation shows what users need, not this.
package execkit

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"time"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/defaults"
)

// The limits an execution falls back on (executor.DefaultMaxRows and
// DefaultTimeout re-export them).
const (
	DefaultMaxRows = 1000
	DefaultTimeout = 10 * time.Second
)

// ErrClosed is returned by an executor's methods after Close
// (executor.ErrClosed).
var ErrClosed = errors.New("text2sql/executor: executor is closed")

// Limits returns the row cap and time limit of one execution: the
// request's own values when positive, else maxRows and timeout (an
// executor's options) when positive, else DefaultMaxRows and
// DefaultTimeout.
func Limits(req text2sql.ExecuteRequest, maxRows int, timeout time.Duration) (int, time.Duration) {
	if req.MaxRows > 0 {
		maxRows = req.MaxRows
	}
	defaults.Positive(&maxRows, DefaultMaxRows)
	if req.Timeout > 0 {
		timeout = req.Timeout
	}
	defaults.Positive(&timeout, DefaultTimeout)
	return maxRows, timeout
}

// Ready is the precondition of a guarded executor's Execute and Check:
// ErrClosed once closed is set, else ctx.Err(), else nil.
func Ready(ctx context.Context, closed *atomic.Bool) error {
	if closed.Load() {
		return ErrClosed
	}
	return ctx.Err()
}

// Finish completes the result of an Execute call that began at start:
// RowCount becomes len(res.Rows) and Duration the time since start. It
// returns res and a nil error, the shape of Execute's return.
func Finish(res *text2sql.Result, start time.Time) (*text2sql.Result, error) {
	res.RowCount = len(res.Rows)
	res.Duration = time.Since(start)
	return res, nil
}

// Begin starts a guarded executor's Execute call: after Ready, it returns
// the result to fill and done, which completes it (Finish, timed from
// now) and is Execute's return.
func Begin(ctx context.Context, closed *atomic.Bool) (res *text2sql.Result, done func() (*text2sql.Result, error), err error) {
	start := time.Now()
	if err := Ready(ctx, closed); err != nil {
		return nil, nil, err
	}
	res = &text2sql.Result{}
	return res, func() (*text2sql.Result, error) { return Finish(res, start) }, nil
}

// CloseOnce is a guarded executor's Close: the first call sets closed and
// closes db when the executor owns it (it opened the pool); later calls,
// and an executor given a handle it does not own, close nothing.
func CloseOnce(closed *atomic.Bool, db *sql.DB, owned bool) error {
	if closed.Swap(true) || !owned {
		return nil
	}
	return db.Close()
}

// BinaryType reports whether a driver's database type name is a binary
// type (BLOB, BYTEA, BINARY, VARBINARY, …) whose []byte values should stay
// bytes rather than become text.
func BinaryType(name string) bool {
	n := strings.ToUpper(name)
	return strings.Contains(n, "BLOB") || strings.Contains(n, "BYTEA") || strings.Contains(n, "BINARY") ||
		n == "BIT" || n == "GEOMETRY"
}

// TimeoutError is the result error of an execution stopped at its time
// limit.
func TimeoutError(limit time.Duration) *text2sql.SQLError {
	return &text2sql.SQLError{Kind: text2sql.KindTimeout,
		Message: "the query was stopped at its time limit of " + limit.String()}
}

// ReadBounded reads r up to limit bytes; more is an error wrapping
// ErrTooLarge, so an answer larger than a result may be is never held in
// memory.
func ReadBounded(r io.Reader, limit int) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, int64(limit)+1))
	if err != nil {
		return nil, err
	}
	if len(b) > limit {
		return nil, fmt.Errorf("%w: the answer passed %d bytes", ErrTooLarge, limit)
	}
	return b, nil
}

// ErrTooLarge marks an answer larger than the executor's result bound.
var ErrTooLarge = errors.New("result too large")

// ConnectionError reports whether err means the database cannot be
// reached (a broken connection or a network error), as opposed to an
// error about the statement; a context's deadline or cancellation is
// neither.
func ConnectionError(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return false
	}
	if errors.Is(err, driver.ErrBadConn) || errors.Is(err, sql.ErrConnDone) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne)
}

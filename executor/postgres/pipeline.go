package postgres

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/jackc/pgx/v5/pgtype"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/executor"
	"github.com/text2sql-go/text2sql/executor/internal/execkit"
)

const (
	// rowChunk is how many rows' cells are allocated at once.
	rowChunk = 64
	// minBodyLen is the least message size accepted during a pipeline,
	// whatever MaxRowBytes says (row descriptions, error messages).
	minBodyLen = 64 << 10
	// pgMaxBodyLen is pgproto3's default limit, restored afterwards.
	pgMaxBodyLen = 0x3fffffff - 1
)

// rollbackSQL ends every guarded transaction. Session-level advisory
// locks survive a rollback and may be taken in a read-only transaction,
// so they are released too.
const rollbackSQL = "ROLLBACK; SELECT pg_catalog.pg_advisory_unlock_all()"

// outcome is what one pipeline produced.
type outcome struct {
	columns   []string
	rows      [][]any
	truncated bool
	err       *text2sql.SQLError
	// changed says the probe found the catalog changed since it was
	// read (see probeQuery).
	changed bool
}

// pipeline sends, in one write, the guarded transaction around q and
// reads the answers:
//
//	Query  "BEGIN READ ONLY; SET LOCAL …; SET LOCAL search_path TO pg_catalog"   (simple protocol)
//	Parse "SELECT set_config($1, $2, true), …"; Bind; Execute; Sync   (the role and claims, when any)
//	[Parse probe]; Bind probe; Execute; Sync                  (the probe, when any)
//	Query  "SET LOCAL search_path TO …, pg_temp"             (the statement's)
//	Parse q; Bind; Describe portal; Execute max N+1; Sync   (extended protocol)
//	Query  "ROLLBACK; SELECT pg_advisory_unlock_all()"
//
// (Parse q; Describe statement; Sync when describeOnly.) The server runs
// the messages in order: an error in the setup leaves the transaction
// aborted, so q cannot run; an error in q skips to the Sync; the rollback
// runs in every case. The extended protocol refuses a text with more than
// one statement. The connection is closed whenever it may be left in an
// unknown state (a broken read, a cancel request, a COPY), which also
// ends the transaction on the server.
func (e *Executor) pipeline(ctx context.Context, pc *pgconn.PgConn, sess session, ch checked, maxRows int, timeout time.Duration, describeOnly bool) (*outcome, error) {
	q := ch.text
	fe := pc.Frontend()
	fe.Send(&pgproto3.Query{String: e.setupSQL(timeout)})
	// Phases end with a ReadyForQuery each: the setup, the session's role
	// and claims when there are any (parameters, never text to quote),
	// the probe when there is one (probeQuery, prepared once per
	// connection), the search path, the statement, the rollback.
	sessionPhase, stmtPhase := -1, 1
	if sq := sess.query(); sq != "" {
		fe.Send(&pgproto3.Parse{Query: sq})
		fe.Send(&pgproto3.Bind{Parameters: sess.values()})
		fe.Send(&pgproto3.Execute{})
		fe.Send(&pgproto3.Sync{})
		sessionPhase, stmtPhase = 1, 2
	}
	probePhase := -1
	if ch.probe != nil {
		if pc.CustomData()[probeStatement] == nil {
			fe.Send(&pgproto3.Parse{Name: probeStatement, Query: probeQuery})
		}
		fe.Send(&pgproto3.Bind{PreparedStatement: probeStatement, Parameters: ch.bind})
		fe.Send(&pgproto3.Execute{})
		fe.Send(&pgproto3.Sync{})
		probePhase = stmtPhase
		stmtPhase++
	}
	// The search path the check decided names on (see Guard.Scoped),
	// whatever the session, the role or the database set.
	pathPhase := stmtPhase
	fe.Send(&pgproto3.Query{String: searchPathSQL(e.searchPath)})
	stmtPhase++
	fe.Send(&pgproto3.Parse{Query: q})
	if describeOnly {
		fe.Send(&pgproto3.Describe{ObjectType: 'S'})
	} else {
		limit := uint32(math.MaxUint32)
		if maxRows < math.MaxUint32-1 {
			limit = uint32(maxRows + 1)
		}
		fe.Send(&pgproto3.Bind{})
		fe.Send(&pgproto3.Describe{ObjectType: 'P'})
		fe.Send(&pgproto3.Execute{MaxRows: limit})
	}
	fe.Send(&pgproto3.Sync{})
	fe.Send(&pgproto3.Query{String: rollbackSQL})

	fe.SetMaxBodyLen(max(e.opts.MaxRowBytes, minBodyLen))
	defer fe.SetMaxBodyLen(pgMaxBodyLen)
	w := startWatch(ctx, pc, timeout+cancelGrace)
	e.sent.Add(1)
	if err := fe.Flush(); err != nil {
		w.finish()
		closeConn(pc)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("postgres: send: %w", err)
	}

	out := &outcome{}
	var (
		setupErr, stmtErr *pgconn.PgError
		sessionErr        *pgconn.PgError
		probeErr          *pgconn.PgError
		oids              []uint32
		empty, copying    bool
		readErr           error
		cells             []any
		tooBig            *pgproto3.ExceededMaxBodyLenErr
		resultBytes       int
		overResult        bool
	)
	for phase := 0; phase < stmtPhase+2; {
		msg, err := pc.ReceiveMessage(context.Background())
		if err != nil {
			readErr = err
			var big *pgproto3.ExceededMaxBodyLenErr
			if errors.As(err, &big) {
				tooBig = big
			}
			break
		}
		switch m := msg.(type) {
		case *pgproto3.ReadyForQuery:
			phase++
		case *pgproto3.ErrorResponse:
			pe := pgconn.ErrorResponseToPgError(m)
			switch {
			case phase == 0 && setupErr == nil,
				phase == pathPhase && setupErr == nil && sessionErr == nil && probeErr == nil:
				setupErr = pe
			case phase == sessionPhase && sessionErr == nil && setupErr == nil:
				sessionErr = pe
			case phase == probePhase && probeErr == nil && setupErr == nil && sessionErr == nil:
				probeErr = pe
			case phase == stmtPhase && stmtErr == nil:
				stmtErr = pe
			}
		case *pgproto3.RowDescription:
			if phase == stmtPhase {
				out.columns = make([]string, len(m.Fields))
				oids = make([]uint32, len(m.Fields))
				for i, f := range m.Fields {
					out.columns[i] = string(f.Name)
					oids[i] = f.DataTypeOID
				}
			}
		case *pgproto3.DataRow:
			if phase != stmtPhase {
				continue
			}
			if len(out.rows) >= maxRows {
				out.truncated = true
				continue
			}
			for _, v := range m.Values {
				resultBytes += len(v) + executor.ValueOverhead
			}
			if resultBytes > e.opts.MaxResultBytes {
				overResult = true
			}
			// Cells are allocated for many rows at once.
			if len(cells) < len(m.Values) {
				cells = make([]any, len(m.Values)*min(rowChunk, maxRows-len(out.rows)))
			}
			row := cells[:len(m.Values):len(m.Values)]
			cells = cells[len(m.Values):]
			for i, v := range m.Values {
				if v != nil && i < len(oids) {
					row[i] = decode(oids[i], v)
				}
			}
			out.rows = append(out.rows, row)
		case *pgproto3.ParseComplete:
			if phase == probePhase {
				pc.CustomData()[probeStatement] = true // it now exists on the server
			}
		case *pgproto3.EmptyQueryResponse:
			if phase == stmtPhase {
				empty = true
			}
		case *pgproto3.CopyInResponse, *pgproto3.CopyOutResponse, *pgproto3.CopyBothResponse:
			copying = true
		}
		if copying || overResult {
			break
		}
	}
	cancelled := w.finish()
	if readErr != nil || copying || overResult || cancelled || pc.TxStatus() != 'I' {
		closeConn(pc)
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	switch {
	case copying:
		return &outcome{err: &text2sql.SQLError{Kind: text2sql.KindForbiddenStatement,
			Message: "COPY is not allowed; the connection was closed, which rolled the transaction back"}}, nil
	case overResult:
		return &outcome{err: &text2sql.SQLError{Kind: text2sql.KindTooLarge,
			Message: fmt.Sprintf("the result passed %d bytes (Options.MaxResultBytes) after %d rows; the statement was stopped — select fewer columns or rows, or aggregate", e.opts.MaxResultBytes, len(out.rows))}}, nil
	case tooBig != nil:
		return &outcome{err: &text2sql.SQLError{Kind: text2sql.KindTooLarge,
			Message: fmt.Sprintf("a row of %d bytes exceeds the limit of %d bytes (Options.MaxRowBytes); the statement was stopped", tooBig.ActualBodyLen, e.opts.MaxRowBytes)}}, nil
	case readErr != nil && cancelled:
		return &outcome{err: timeoutError(timeout)}, nil
	case readErr != nil:
		return nil, fmt.Errorf("postgres: %w", readErr)
	case setupErr != nil:
		return nil, fmt.Errorf("%w: postgres: session setup failed (check Options.SearchPath): %s (SQLSTATE %s)",
			text2sql.ErrInvalidConfig, setupErr.Message, setupErr.Code)
	case sessionErr != nil:
		return nil, sess.failed(sessionErr.Message, sessionErr.Code)
	case probeErr != nil && (probeErr.Code == "26000" || probeErr.Code == "42P05"):
		// The probe's statement was dropped (DISCARD ALL on a shared
		// pool) or made by an earlier pipeline that failed to say so:
		// prepare it anew on the next try.
		delete(pc.CustomData(), probeStatement)
		return &outcome{changed: true}, nil
	case probeErr != nil && strings.Contains(probeErr.Message, probeChanged):
		return &outcome{changed: true}, nil
	case probeErr != nil:
		return &outcome{err: probeError(probeErr)}, nil
	case stmtErr != nil && (stmtErr.Code == "57014" || cancelled):
		return &outcome{err: timeoutError(timeout)}, nil
	case stmtErr != nil:
		return &outcome{err: e.sqlError(stmtErr, q)}, nil
	case empty:
		return &outcome{err: &text2sql.SQLError{Kind: text2sql.KindEmpty, Message: "no SQL statement"}}, nil
	}
	return out, nil
}

// probeError turns the failure of the resolution probe into the refusal:
// the probe casts the names it found to an integer, so the server's
// message (22P02, invalid input syntax for type integer: "functions: f,
// g") carries them. Any other failure of the probe refuses the statement too.
func probeError(pe *pgconn.PgError) *text2sql.SQLError {
	found := pe.Message
	if i := strings.IndexByte(found, '"'); i >= 0 && pe.Code == "22P02" {
		found = strings.TrimPrefix(strings.TrimSuffix(found[i+1:], `"`), probePrefix)
	}
	return &text2sql.SQLError{Kind: text2sql.KindForbiddenFunction,
		Message: "the server's catalog has " + found + " where the check took the name for a column (attribute notation x.f calls f(x)), a built-in function or operator: it runs code outside pg_catalog and the trusted extensions",
		Hint:    "qualify built-in functions with pg_catalog, or allow the function with Options.AllowFunctions"}
}

func timeoutError(limit time.Duration) *text2sql.SQLError {
	se := execkit.TimeoutError(limit)
	se.SQLState = "57014"
	return se
}

// closeConn closes a connection left in an unknown state; database/sql
// drops it from the pool (the pgx driver reports it invalid).
func closeConn(pc *pgconn.PgConn) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	pc.Close(ctx) //nolint:errcheck // the connection is being discarded
}

// watch sends a cancel request when ctx is done or the client-side limit
// passes while a pipeline runs, and breaks the connection if the server
// still has not answered breakGrace later.
type watch struct {
	mu       sync.Mutex
	finished bool
	timer    *time.Timer
	fired    atomic.Bool
	done     chan struct{}
	stop     func() bool
	cancel   context.CancelFunc
}

func startWatch(ctx context.Context, pc *pgconn.PgConn, limit time.Duration) *watch {
	w := &watch{done: make(chan struct{})}
	wctx, cancel := context.WithTimeout(ctx, limit)
	w.cancel = cancel
	w.stop = context.AfterFunc(wctx, func() {
		defer close(w.done)
		w.fired.Store(true)
		cctx, c := context.WithTimeout(context.Background(), breakGrace)
		_ = pc.CancelRequest(cctx) // best effort; the deadline below backs it
		c()
		w.mu.Lock()
		defer w.mu.Unlock()
		if !w.finished {
			w.timer = time.AfterFunc(breakGrace, func() {
				w.mu.Lock()
				defer w.mu.Unlock()
				if !w.finished {
					_ = pc.Conn().SetDeadline(time.Now())
				}
			})
		}
	})
	return w
}

// finish ends the watch and reports whether it sent a cancel request; it
// returns only after the request is delivered, so a late cancel cannot
// hit the connection's next statement (the connection is closed anyway).
func (w *watch) finish() bool {
	w.mu.Lock()
	w.finished = true
	if w.timer != nil {
		w.timer.Stop()
	}
	w.mu.Unlock()
	if !w.stop() {
		<-w.done // the cancel request is under way: wait for it
	}
	w.cancel()
	return w.fired.Load()
}

// decode converts a value in PostgreSQL's text format (see
// Executor.Execute for the mapping).
func decode(oid uint32, v []byte) any {
	switch oid {
	case pgtype.BoolOID:
		return len(v) > 0 && v[0] == 't'
	case pgtype.Int2OID, pgtype.Int4OID, pgtype.Int8OID, pgtype.OIDOID:
		if n, ok := parseInt(v); ok {
			return n
		}
	case pgtype.Float4OID, pgtype.Float8OID:
		return float(string(v))
	case pgtype.NumericOID:
		if n, ok := parseInt(v); ok {
			return n
		}
		return float(string(v))
	case pgtype.ByteaOID:
		if len(v) >= 2 && v[0] == '\\' && v[1] == 'x' {
			b := make([]byte, hex.DecodedLen(len(v)-2))
			if _, err := hex.Decode(b, v[2:]); err == nil {
				return b
			}
		}
		return append([]byte(nil), v...)
	}
	return string(v)
}

// parseInt parses a decimal integer in int64 range, without allocating
// in the common case.
func parseInt(v []byte) (int64, bool) {
	i, neg := 0, false
	if len(v) > 0 && (v[0] == '-' || v[0] == '+') {
		i, neg = 1, v[0] == '-'
	}
	if i == len(v) || len(v)-i > 18 {
		n, err := strconv.ParseInt(string(v), 10, 64) // long: let strconv check the range
		return n, err == nil
	}
	var n int64
	for ; i < len(v); i++ {
		c := v[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

// float parses a float in text form; NaN and the infinities, which JSON
// cannot carry, stay strings.
func float(s string) any {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return s
	}
	return f
}

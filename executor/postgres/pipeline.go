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
	// minText and maxText bound the buffers a result's text values are
	// copied into, in bytes: each buffer is twice the last, so a small
	// result takes little memory and a large one few allocations.
	minText, maxText = 256, 16 << 10
	// minBodyLen is the least message size accepted during a pipeline,
	// whatever MaxRowBytes says (row descriptions, error messages).
	minBodyLen = 64 << 10
	// pgMaxBodyLen is pgproto3's default limit, restored afterwards.
	pgMaxBodyLen = 0x3fffffff - 1
	// stmtPrefix starts the name of every statement the executor
	// prepares on a connection.
	stmtPrefix = "text2sql_"
)

// outcome is what one pipeline produced.
type outcome struct {
	columns   []string
	rows      [][]any
	truncated bool
	err       *text2sql.SQLError
	// changed says the probe found the catalog changed since it was
	// read (see probe.go).
	changed bool
	// stale says a statement the executor had prepared on the
	// connection was gone (DISCARD ALL or DEALLOCATE by a pool that
	// shares the handle): the pipeline may run again.
	stale bool
}

// stmt is a statement of the guarded transaction whose text is the same
// from call to call: it is prepared on a connection once, under its
// name, and then only bound and executed, neither parsed nor planned
// again.
type stmt struct{ name, text string }

// The statements around every call's. Session-level advisory locks
// survive a rollback and may be taken in a read-only transaction (by a
// function the host allows, a trusted extension's, a policy's), so they
// are released too.
var (
	beginStmt    = stmt{stmtPrefix + "begin", "BEGIN READ ONLY"}
	rollbackStmt = stmt{stmtPrefix + "rollback", "ROLLBACK"}
	unlockStmt   = stmt{stmtPrefix + "unlock", "SELECT pg_catalog.pg_advisory_unlock_all()"}
)

// step is what an Execute of the guarded transaction runs; the first
// that fails names the failure.
type step uint8

const (
	stepSetup     step = iota // BEGIN, the SETs, the search paths
	stepSession               // the role and the claims
	stepProbe                 // the resolution probe
	stepStatement             // the caller's statement
)

// pipeline sends, in one write, the guarded transaction around q and
// reads the answers, all in the extended protocol:
//
//	BEGIN READ ONLY; SET LOCAL …; SET LOCAL search_path TO pg_catalog    (prepared once per connection)
//	[SELECT set_config($1, $2, true), …]                                 (the role and claims, when any)
//	[probe]                                                              (probe.go, prepared once)
//	SET LOCAL search_path TO …, pg_temp                                  (the statement's, prepared once)
//	Parse q; Bind; Describe portal; Execute max N+1
//	Sync
//	ROLLBACK; SELECT pg_advisory_unlock_all()                            (prepared once)
//	Sync
//
// (Parse q; Describe statement when describeOnly.) The server runs the
// messages in order and, after an error, skips the rest up to the Sync:
// an error in the setup, the role or the probe leaves q unrun; the
// rollback runs in every case. q runs only after every statement before
// it ran, so one of them dropped on the connection (DEALLOCATE) fails
// the setup before q, and one of the rollback segment fails it, which
// closes the connection. The extended protocol refuses a text with
// more than one statement. The connection is closed whenever it may be
// left in an unknown state (a broken read, a cancel request, a COPY, a
// failed rollback or unlock), which also ends the transaction and
// releases every lock on the server.
func (e *Executor) pipeline(ctx context.Context, pc *pgconn.PgConn, sess session, ch checked, maxRows int, timeout time.Duration, describeOnly bool) (*outcome, error) {
	p := &pipe{e: e, pc: pc, fe: pc.Frontend(), maxRows: maxRows}
	p.steps = p.stepBuf[:0]
	p.parsed[0], p.parsed[1] = p.parsedBuf[0][:0], p.parsedBuf[1][:0]
	p.send(sess, ch, timeout, describeOnly)
	p.fe.SetMaxBodyLen(max(e.opts.MaxRowBytes, minBodyLen))
	defer p.fe.SetMaxBodyLen(pgMaxBodyLen)
	w := startWatch(ctx, pc, timeout+cancelGrace)
	e.sent.Add(1)
	if err := p.fe.Flush(); err != nil {
		w.finish()
		closeConn(pc)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("postgres: send: %w", err)
	}
	readErr := p.receive()
	cancelled := w.finish()
	if readErr != nil || p.copying || p.overResult || p.endErr != nil || cancelled || pc.TxStatus() != 'I' {
		closeConn(pc)
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if out := p.stopped(readErr, cancelled, timeout); out != nil {
		return out, nil
	}
	if readErr != nil {
		return nil, fmt.Errorf("postgres: %w", readErr)
	}
	return p.answer(ch.text, sess, timeout, cancelled)
}

// pipe is one run of the guarded transaction on a connection: the
// messages sent, and what the answers said so far.
type pipe struct {
	e       *Executor
	pc      *pgconn.PgConn
	fe      *pgproto3.Frontend
	maxRows int
	// steps are the transaction's Executes, in order; parsed the
	// statements whose Parse was sent, per segment (0: the transaction,
	// 1: the rollback; the name "" for an unnamed one); sending the
	// segment being sent.
	steps   []step
	stepBuf [16]step // steps' first backing array
	// parsedBuf backs parsed on a connection that holds the prepared
	// statements: the statement's and the session's Parse.
	parsedBuf [2][2]stmt
	parsed    [2][]stmt
	sending   int
	// seg counts the segments answered (ReadyForQuery), done the
	// transaction's Executes answered.
	seg, done int
	// failure is the transaction's error, in step failedAt (the server
	// skips the rest of the segment); endErr the rollback segment's.
	failure  *pgconn.PgError
	failedAt step
	endErr   *pgconn.PgError

	out   outcome
	oids  []uint32
	cells []any
	text  strings.Builder
	bytes int // the result's size, as MaxResultBytes counts it

	empty, copying, overResult bool

	// The messages, reused: Frontend.Send encodes a message at once.
	msg struct {
		bind     pgproto3.Bind
		execute  pgproto3.Execute
		parse    pgproto3.Parse
		close    pgproto3.Close
		describe pgproto3.Describe
	}
}

// send queues the messages of the guarded transaction (see pipeline).
func (p *pipe) send(sess session, ch checked, timeout time.Duration, describeOnly bool) {
	p.exec(beginStmt, nil, stepSetup)
	for _, s := range p.e.setup(timeout) {
		p.exec(s, nil, stepSetup)
	}
	// The role and claims are parameters, never text to quote.
	if sq := sess.query(); sq != "" {
		p.parse(stmt{text: sq})
		p.sendBind("", sess.values())
		p.execute(stepSession, 0)
	}
	if ch.probe != nil {
		p.exec(ch.probeStmt, ch.bind, stepProbe)
	}
	// The search path the check decided names on (see Guard.Scoped),
	// whatever the session, the role or the database set.
	p.exec(p.e.pathStmt, nil, stepSetup)
	p.statement(ch.text, describeOnly)
	p.fe.Send(&pgproto3.Sync{})
	p.sending = 1
	for _, s := range []stmt{rollbackStmt, unlockStmt} {
		p.bind(s, nil)
		p.sendExecute(0)
	}
	p.fe.Send(&pgproto3.Sync{})
}

// exec queues the run of the prepared statement s as step st.
func (p *pipe) exec(s stmt, params [][]byte, st step) {
	p.bind(s, params)
	p.execute(st, 0)
}

// bind queues the Bind of s, preceded by its Parse when the connection
// does not hold it yet. A Close comes first: the connection may hold
// another text under the name (an executor with other options sharing
// the pool, a Parse skipped after an error), and closing a statement that
// does not exist is no error.
func (p *pipe) bind(s stmt, params [][]byte) {
	if p.pc.CustomData()[s.name] != s.text {
		p.msg.close = pgproto3.Close{ObjectType: 'S', Name: s.name}
		p.fe.Send(&p.msg.close)
		p.parse(s)
	}
	p.sendBind(s.name, params)
}

func (p *pipe) parse(s stmt) {
	p.msg.parse = pgproto3.Parse{Name: s.name, Query: s.text}
	p.fe.Send(&p.msg.parse)
	p.parsed[p.sending] = append(p.parsed[p.sending], s)
}

// execute queues an Execute of at most maxRows rows (0: all) as step st.
func (p *pipe) execute(st step, maxRows uint32) {
	p.sendExecute(maxRows)
	p.steps = append(p.steps, st)
}

func (p *pipe) sendBind(name string, params [][]byte) {
	p.msg.bind = pgproto3.Bind{PreparedStatement: name, Parameters: params}
	p.fe.Send(&p.msg.bind)
}

func (p *pipe) sendExecute(maxRows uint32) {
	p.msg.execute = pgproto3.Execute{MaxRows: maxRows}
	p.fe.Send(&p.msg.execute)
}

func (p *pipe) sendDescribe(objectType byte) {
	p.msg.describe = pgproto3.Describe{ObjectType: objectType}
	p.fe.Send(&p.msg.describe)
}

// statement queues the caller's statement: executed for at most
// maxRows+1 rows, or only described.
func (p *pipe) statement(q string, describeOnly bool) {
	p.parse(stmt{text: q})
	if describeOnly {
		p.sendDescribe('S')
		p.steps = append(p.steps, stepStatement)
		return
	}
	limit := uint32(math.MaxUint32)
	if p.maxRows < math.MaxUint32-1 {
		limit = uint32(p.maxRows + 1)
	}
	p.sendBind("", nil)
	p.sendDescribe('P')
	p.execute(stepStatement, limit)
}

// receive reads the answers up to the rollback segment's ReadyForQuery,
// or until a message stops the read.
func (p *pipe) receive() error {
	for p.seg < 2 {
		msg, err := p.pc.ReceiveMessage(context.Background())
		if err != nil {
			return err
		}
		if p.handle(msg) {
			return nil
		}
	}
	return nil
}

// handle takes one message; it reports whether the read must stop (the
// connection is then closed).
func (p *pipe) handle(msg pgproto3.BackendMessage) bool {
	switch m := msg.(type) {
	case *pgproto3.ReadyForQuery:
		p.seg++
	case *pgproto3.ParseComplete:
		p.prepared()
	case *pgproto3.CommandComplete, *pgproto3.PortalSuspended:
		p.completed(false)
	case *pgproto3.EmptyQueryResponse:
		p.completed(true)
	case *pgproto3.ErrorResponse:
		p.failed(pgconn.ErrorResponseToPgError(m))
	case *pgproto3.RowDescription:
		p.describe(m)
	case *pgproto3.DataRow:
		return p.row(m)
	case *pgproto3.CopyInResponse, *pgproto3.CopyOutResponse, *pgproto3.CopyBothResponse:
		p.copying = true
		return true
	}
	return false
}

// at reports whether the transaction's answers are those of step st.
func (p *pipe) at(st step) bool {
	return p.seg == 0 && p.done < len(p.steps) && p.steps[p.done] == st
}

// prepared records that the connection now holds the statement of the
// next Parse answered.
func (p *pipe) prepared() {
	q := p.parsed[p.seg]
	if len(q) == 0 {
		return
	}
	if q[0].name != "" {
		p.pc.CustomData()[q[0].name] = q[0].text
	}
	p.parsed[p.seg] = q[1:]
}

// completed records the end of an Execute; empty says the statement was
// blank.
func (p *pipe) completed(empty bool) {
	if p.seg != 0 {
		return
	}
	p.empty = p.empty || empty && p.at(stepStatement)
	p.done++
}

// failed records an error: the transaction's first, at the step
// answering, or the rollback segment's.
func (p *pipe) failed(pe *pgconn.PgError) {
	switch {
	case p.seg > 0:
		p.endErr = cmpOr(p.endErr, pe)
	case p.failure == nil:
		p.failure, p.failedAt = pe, stepStatement
		if p.done < len(p.steps) {
			p.failedAt = p.steps[p.done]
		}
	}
}

// cmpOr returns a when it is set, else b.
func cmpOr(a, b *pgconn.PgError) *pgconn.PgError {
	if a != nil {
		return a
	}
	return b
}

// describe takes the statement's columns.
func (p *pipe) describe(m *pgproto3.RowDescription) {
	if !p.at(stepStatement) {
		return
	}
	p.out.columns = make([]string, len(m.Fields))
	p.oids = make([]uint32, len(m.Fields))
	for i, f := range m.Fields {
		p.out.columns[i] = string(f.Name)
		p.oids[i] = f.DataTypeOID
	}
}

// row takes one of the statement's rows, up to maxRows (the one after
// marks the result truncated); it reports whether the result passed
// MaxResultBytes, which stops the read.
func (p *pipe) row(m *pgproto3.DataRow) bool {
	if !p.at(stepStatement) {
		return false
	}
	if len(p.out.rows) >= p.maxRows {
		p.out.truncated = true
		return false
	}
	for _, v := range m.Values {
		p.bytes += len(v) + executor.ValueOverhead
	}
	if p.bytes > p.e.opts.MaxResultBytes {
		p.overResult = true
		return true
	}
	// Cells are allocated for many rows at once.
	n := len(m.Values)
	if len(p.cells) < n {
		p.cells = make([]any, n*min(rowChunk, p.maxRows-len(p.out.rows)))
	}
	row := p.cells[:n:n]
	p.cells = p.cells[n:]
	for i, v := range m.Values {
		if v != nil && i < len(p.oids) {
			row[i] = p.decode(p.oids[i], v)
		}
	}
	p.out.rows = append(p.out.rows, row)
	return false
}

// stopped returns the outcome of a read the executor stopped or a
// cancel request ended, nil for one that ran to the end or broke.
func (p *pipe) stopped(readErr error, cancelled bool, timeout time.Duration) *outcome {
	var tooBig *pgproto3.ExceededMaxBodyLenErr
	switch {
	case p.copying:
		return &outcome{err: &text2sql.SQLError{Kind: text2sql.KindForbiddenStatement,
			Message: "COPY is not allowed; the connection was closed, which rolled the transaction back"}}
	case p.overResult:
		return &outcome{err: &text2sql.SQLError{Kind: text2sql.KindTooLarge,
			Message: fmt.Sprintf("the result passed %d bytes (Options.MaxResultBytes) after %d rows; the statement was stopped — select fewer columns or rows, or aggregate", p.e.opts.MaxResultBytes, len(p.out.rows))}}
	case errors.As(readErr, &tooBig):
		return &outcome{err: &text2sql.SQLError{Kind: text2sql.KindTooLarge,
			Message: fmt.Sprintf("a row of %d bytes exceeds the limit of %d bytes (Options.MaxRowBytes); the statement was stopped", tooBig.ActualBodyLen, p.e.opts.MaxRowBytes)}}
	case readErr != nil && cancelled:
		return &outcome{err: timeoutError(timeout)}
	}
	return nil
}

// answer returns the outcome the server's answers give to a read that
// ran to the end.
func (p *pipe) answer(q string, sess session, timeout time.Duration, cancelled bool) (*outcome, error) {
	pe := p.failure
	switch {
	case pe == nil && p.empty:
		return &outcome{err: &text2sql.SQLError{Kind: text2sql.KindEmpty, Message: "no SQL statement"}}, nil
	case pe == nil:
		return &p.out, nil
	case pe.Code == "26000" && p.failedAt != stepStatement:
		// A statement prepared earlier was dropped (DISCARD ALL on a
		// shared pool): prepare them anew on the next try.
		p.forget()
		return &outcome{stale: true}, nil
	}
	switch p.failedAt {
	case stepSetup:
		return nil, fmt.Errorf("%w: postgres: session setup failed (check Options.SearchPath): %s (SQLSTATE %s)",
			text2sql.ErrInvalidConfig, pe.Message, pe.Code)
	case stepSession:
		return nil, sess.failed(pe.Message, pe.Code)
	case stepProbe:
		if strings.Contains(pe.Message, probeChanged) {
			return &outcome{changed: true}, nil
		}
		return &outcome{err: probeError(pe)}, nil
	}
	if pe.Code == "57014" || cancelled {
		return &outcome{err: timeoutError(timeout)}, nil
	}
	return &outcome{err: p.e.sqlError(pe, q)}, nil
}

// forget drops what the connection was said to hold (see bind).
func (p *pipe) forget() {
	for name := range p.pc.CustomData() {
		if strings.HasPrefix(name, stmtPrefix) {
			delete(p.pc.CustomData(), name)
		}
	}
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
func (p *pipe) decode(oid uint32, v []byte) any {
	switch oid {
	case pgtype.BoolOID:
		return len(v) > 0 && v[0] == 't'
	case pgtype.Int2OID, pgtype.Int4OID, pgtype.Int8OID, pgtype.OIDOID:
		if n, ok := parseInt(v); ok {
			return n
		}
	case pgtype.Float4OID, pgtype.Float8OID:
		return p.float(v)
	case pgtype.NumericOID:
		if n, ok := parseInt(v); ok {
			return n
		}
		return p.float(v)
	case pgtype.ByteaOID:
		if len(v) >= 2 && v[0] == '\\' && v[1] == 'x' {
			b := make([]byte, hex.DecodedLen(len(v)-2))
			if _, err := hex.Decode(b, v[2:]); err == nil {
				return b
			}
		}
		return append([]byte(nil), v...)
	}
	return p.str(v)
}

// str returns v as a string copied into the result's text buffer, so
// that many values take one allocation: a strings.Builder never writes
// over the bytes of a string it returned, and a full one is replaced.
func (p *pipe) str(v []byte) string {
	if p.text.Cap()-p.text.Len() < len(v) {
		size := min(max(2*p.text.Cap(), minText), maxText)
		p.text = strings.Builder{}
		p.text.Grow(max(size, len(v)))
	}
	start := p.text.Len()
	p.text.Write(v)
	return p.text.String()[start:]
}

// float parses a float in text form; NaN and the infinities, which JSON
// cannot carry, stay strings.
func (p *pipe) float(v []byte) any {
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return p.str(v)
	}
	return f
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

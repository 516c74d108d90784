package mysql

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"database/sql"
	"database/sql/driver"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"io"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	mysqldrv "github.com/go-sql-driver/mysql"
)

// wireSlack is what the protocol itself may add to a result's values on
// the wire beyond what the executor counts (it counts 16 bytes per value,
// more than a row header and a value's length prefix take): the handshake
// and the column definitions (sent with a prepare and again with its
// execution on a host's handle) of up to 4,096 columns with long names
// (4 MiB).
const wireSlack = 4 << 20

// sessions gives each statement a connection whose session holds
// nothing of an earlier statement's.
//
// On a handle made by Open, over plain TCP or a Unix socket, the
// connections are the executor's own and are reused: when a statement
// ends its connection is reset by the server's own command,
// COM_RESET_CONNECTION (MariaDB 10.2, MySQL 5.7), which ends the
// transaction and drops user variables, named locks (GET_LOCK),
// temporary tables, prepared statements, HANDLERs and the last insert
// id, and puts every session variable back to its global value. When
// the connection is next taken, the executor selects the database
// again (the reset keeps the current one, which a statement may have
// changed), pins the session again (setup), checks the connection's
// identity and begins the statement's read-only transaction, in one
// write and one round trip, whose answer includes the reset's.
// go-sql-driver/mysql v1.10 has no call for the command (its
// ResetSession only checks the socket), so it is written
// on the socket the executor dials, between two commands of the
// driver's, when the driver waits for none; over TLS or with
// compression that socket carries the driver's encoding, and every
// statement gets a new connection instead, closed when it ends, as on
// a handle passed to New, whose connections are closed after use
// instead of going back to its pool.
//
// The reset does not log in again, and the server keeps in the session
// the privileges it granted at login: global ones, the database's, and
// those of the active role. So the reset also reads the login's account
// as the server's ACL has it now (accountQueries) and closes a
// connection whose account changed since it was opened: a REVOKE, DROP
// USER, a revoked role, ACCOUNT LOCK, a new password or resource limit.
// The check runs just before a statement, so a change made before it
// started reaches it. What the account does not show (a changed
// init_connect or global variable) reaches the executor within
// lifetime, the age after which a connection is closed rather than
// reused. The reset also puts max_statement_time back to its global
// value, dropping the login's own (MariaDB's per-account
// MAX_STATEMENT_TIME, or what init_connect set): it is read when the
// connection is opened and set again by the connection's reset.
type sessions struct {
	// cfg, when set (Open), dials each connection itself, through a
	// socket that stops reading after wireLimit bytes.
	cfg       *mysqldrv.Config
	wireLimit int64
	// db is the host's handle (New): its connections are closed after
	// use instead of going back to its pool.
	db *sql.DB
	// setup pins what the check assumed about the session: the character
	// set of the statement text and the sql_mode that decides how the
	// server lexes it (a connection of the host's may have changed them),
	// after the DSN's own session variables.
	setup string
	// reset is what cleans a connection for reuse (resetCommands); nil
	// when connections are not reused. idle holds the clean ones, reused
	// until they are lifetime old.
	// identity reads a connection's id and active role (NULL where the
	// server has no roles), which the reset keeps: a connection whose
	// role or account (accountQueries) is no longer the one it was
	// opened with is closed.
	reset    []byte
	identity string
	lifetime time.Duration
	// limitVar is the server's session bound on a statement's time
	// (MariaDB's max_statement_time), which the reset takes back; ""
	// where the executor does not set it again (MySQL).
	limitVar string
	idle     chan *session
	closed   atomic.Bool
	// taken counts the connections given to statements, dialed the
	// connections made, for tests.
	taken, dialed atomic.Int64
	// killer, when set (MySQL), is the handle that stops a statement on
	// the server when its time runs out on the client, or its caller
	// gives up: MySQL's
	// MAX_EXECUTION_TIME hint reaches only a query that starts with
	// SELECT, and a server that is not sending rows does not notice that
	// the client closed the connection, so a parenthesised query or
	// VALUES would run on. MariaDB's SET STATEMENT max_statement_time
	// bounds every statement itself.
	killer *sql.DB
}

// session is one connection of a statement: sock is its socket (nil on
// a host's handle), id and role the server's CONNECTION_ID and
// CURRENT_ROLE and account the digest of accountQueries when it was
// opened, at the time it was opened, reset the commands that clean it
// (sessions.reset, with the login's bound on a statement's time), close
// closes it.
type session struct {
	conn    *sql.Conn
	sock    *budgetConn
	id      int64
	role    sql.NullString
	account []byte
	at      time.Time
	reset   []byte
	close   func()
	// answer reads the answers to the reset's commands.
	answer *response
}

// newSessions returns the sessions of an executor; cfg is nil for New.
// Up to idle clean connections are kept for reuse, each until it is
// lifetime old. roles tells whether the server has CURRENT_ROLE(),
// mariadb whether it is MariaDB (max_statement_time).
func newSessions(db *sql.DB, cfg *mysqldrv.Config, setup string, wireLimit int64, idle int, lifetime time.Duration, roles, mariadb bool) *sessions {
	s := &sessions{cfg: cfg, db: db, wireLimit: wireLimit, setup: sessionSetup(cfg, setup), lifetime: lifetime,
		identity: "SELECT CONNECTION_ID(), NULL"}
	if roles {
		s.identity = "SELECT CONNECTION_ID(), CURRENT_ROLE()"
	}
	if mariadb {
		s.limitVar = "max_statement_time"
	}
	if cfg != nil && cfg.TLS == nil && !strings.Contains(cfg.FormatDSN(), "compress=true") {
		s.reset = resetCommands(cfg.DBName, s.setup, s.identity)
		s.idle = make(chan *session, idle)
	}
	return s
}

// accountQueries show the current login's account as the server's ACL
// has it now, which GRANT, REVOKE, DROP USER and ALTER USER change at
// once (unlike the privileges the session took at login), to any login
// without a privilege: its grants and those of its roles, the roles
// granted and the default one, its password and resource limits (SHOW
// GRANTS), and its lock (SHOW CREATE USER). A dropped login gets an
// error. They cost the server far less than information_schema's
// privilege views, each filled into a temporary table.
var accountQueries = []string{"SHOW GRANTS", "SHOW CREATE USER CURRENT_USER"}

// digestValue adds one value of an accountQueries row to h, its length
// first, so the rows of the answers cannot run into one another.
func digestValue(h hash.Hash, v []byte) {
	h.Write(binary.AppendUvarint(nil, uint64(len(v))))
	h.Write(v)
}

// digestAccount returns the digest of accountQueries' answers on conn.
func digestAccount(ctx context.Context, conn *sql.Conn) ([]byte, error) {
	h := sha256.New()
	for _, q := range accountQueries {
		rows, err := conn.QueryContext(ctx, q)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var v sql.RawBytes
			if err := rows.Scan(&v); err != nil {
				rows.Close()
				return nil, err
			}
			digestValue(h, v)
		}
		if err := cmp.Or(rows.Err(), rows.Close()); err != nil {
			return nil, err
		}
	}
	return h.Sum(nil), nil
}

// sessionSetup is setup after the DSN's session variables (cfg.Params),
// which the driver sets when it connects and a reset takes back.
func sessionSetup(cfg *mysqldrv.Config, setup string) string {
	if cfg == nil || len(cfg.Params) == 0 {
		return setup
	}
	var b strings.Builder
	b.WriteString("SET ")
	for _, k := range slices.Sorted(maps.Keys(cfg.Params)) {
		b.WriteString(k + " = " + cfg.Params[k] + ", ")
	}
	b.WriteString(strings.TrimPrefix(setup, "SET "))
	return b.String()
}

// killGrace bounds the KILL QUERY sent after a statement's time ran out.
const killGrace = 5 * time.Second

// errWireLimit is the read error of a connection past its byte bound.
var errWireLimit = errors.New("mysql: the result passed its byte bound on the wire")

// budgetConn is a socket that fails reads once more than limit bytes
// have been read through it since it was armed for a statement, so the
// driver never buffers more: the driver reads a whole row before the
// executor can count it, and a row of many large values is not bounded
// by the server's max_allowed_packet.
type budgetConn struct {
	net.Conn
	read    int64
	limit   int64
	tripped *atomic.Bool
}

func (c *budgetConn) Read(p []byte) (int, error) {
	if c.read >= c.limit {
		c.tripped.Store(true)
		return 0, errWireLimit
	}
	if rest := c.limit - c.read; int64(len(p)) > rest {
		p = p[:rest]
	}
	n, err := c.Conn.Read(p)
	c.read += int64(n)
	return n, err
}

// SyscallConn lets the driver check an idle connection's socket before
// it is used (ResetSession): a server that closed it, or bytes that no
// command asked for, make the connection bad.
func (c *budgetConn) SyscallConn() (syscall.RawConn, error) {
	sc, ok := c.Conn.(syscall.Conn)
	if !ok {
		return nil, errors.ErrUnsupported
	}
	return sc.SyscallConn()
}

// arm starts a statement's budget, reported in tripped.
func (c *budgetConn) arm(tripped *atomic.Bool) {
	c.read, c.tripped = 0, tripped
}

// conn returns a connection with a clean session pinned for one
// statement, inside a read-only transaction when begin is set, and
// release, which cleans it for the next statement or closes it: either
// ends the transaction (the reset rolls it back, and the server rolls
// back a closed connection's), so no ROLLBACK is sent. tripped reports,
// after the statement, whether the connection stopped at its byte
// bound.
func (s *sessions) conn(ctx context.Context, tripped *atomic.Bool, begin bool) (*sql.Conn, func(), error) {
	se, err := s.take(ctx, begin)
	if err != nil {
		return nil, nil, err
	}
	s.taken.Add(1)
	if se.sock != nil {
		se.sock.arm(tripped)
	}
	return se.conn, func() {
		switch {
		case ctx.Err() != nil:
			se.close()
			if s.killer != nil {
				s.kill(se.id)
			}
		case tripped.Load() || s.reset == nil || s.expired(se) || s.startReset(se) != nil:
			se.close()
		default:
			s.put(se)
		}
	}, nil
}

// beginReadOnly starts the read-only transaction a statement runs in.
const beginReadOnly = "START TRANSACTION READ ONLY"

// take returns an idle connection, its reset finished, or a new one;
// begin starts the read-only transaction on it (in the reset's write
// on an idle one).
func (s *sessions) take(ctx context.Context, begin bool) (*session, error) {
	for {
		select {
		case se := <-s.idle:
			if !s.expired(se) && s.finishReset(se, begin) == nil {
				return se, nil
			}
			se.close()
		default:
			se, err := s.open(ctx)
			if err != nil || !begin {
				return se, err
			}
			if _, err := se.conn.ExecContext(ctx, beginReadOnly); err != nil {
				se.close()
				return nil, err
			}
			return se, nil
		}
	}
}

// expired tells whether se is too old to be reused.
func (s *sessions) expired(se *session) bool {
	return time.Since(se.at) >= s.lifetime
}

// checkIdle is the driver's own check of a connection taken from a pool.
func checkIdle(dc any) error {
	r, ok := dc.(driver.SessionResetter)
	if !ok {
		return driver.ErrBadConn
	}
	return r.ResetSession(context.Background())
}

// put keeps a connection being reset for the next statement, or closes it when
// enough are kept or the executor is closed.
func (s *sessions) put(se *session) {
	select {
	case s.idle <- se:
		if s.closed.Load() {
			s.drain()
		}
	default:
		se.close()
	}
}

// close closes the idle connections; later ones are closed when their
// statement ends.
func (s *sessions) close() {
	s.closed.Store(true)
	s.drain()
}

func (s *sessions) drain() {
	for {
		select {
		case se := <-s.idle:
			se.close()
		default:
			return
		}
	}
}

// open makes a new connection and pins its session.
func (s *sessions) open(ctx context.Context) (*session, error) {
	se := &session{}
	var err error
	if s.cfg != nil {
		err = s.dial(ctx, se)
	} else {
		se.conn, err = s.db.Conn(ctx)
		se.close = func() {
			// Returning driver.ErrBadConn from Raw makes database/sql close
			// the connection instead of putting it back into the pool.
			se.conn.Raw(func(any) error { return driver.ErrBadConn }) //nolint:errcheck // the error is the point
		}
	}
	if err != nil {
		return nil, err
	}
	s.dialed.Add(1)
	if _, err := se.conn.ExecContext(ctx, s.setup); err != nil {
		se.close()
		return nil, err
	}
	if s.killer == nil && s.reset == nil {
		return se, nil
	}
	if err := s.identify(ctx, se); err != nil {
		se.close()
		return nil, err
	}
	return se, nil
}

// identify reads a new connection's identity and, where the reset takes
// it back, the login's bound on a statement's time, which the
// connection's reset then sets again.
func (s *sessions) identify(ctx context.Context, se *session) error {
	se.at, se.reset = time.Now(), s.reset
	if s.reset != nil { // a connection used once is not checked again
		var err error
		if se.account, err = digestAccount(ctx, se.conn); err != nil {
			return err
		}
	}
	if s.limitVar == "" {
		return se.conn.QueryRowContext(ctx, s.identity).Scan(&se.id, &se.role)
	}
	var limit float64
	if err := se.conn.QueryRowContext(ctx, s.identity+", @@SESSION."+s.limitVar).Scan(&se.id, &se.role, &limit); err != nil {
		return err
	}
	if s.reset != nil {
		setup := s.setup + ", SESSION " + s.limitVar + " = " + strconv.FormatFloat(limit, 'f', -1, 64)
		se.reset = resetCommands(s.cfg.DBName, setup, s.identity)
	}
	return nil
}

// kill stops the statement running on the server's connection id, if
// any; it fails silently, as the statement has already failed.
func (s *sessions) kill(id int64) {
	ctx, cancel := context.WithTimeout(context.Background(), killGrace)
	defer cancel()
	s.killer.ExecContext(ctx, "KILL QUERY "+strconv.FormatInt(id, 10)) //nolint:errcheck // the statement may have ended
}

// dial opens a connection of its own, through a budgetConn, in a handle
// of its own that se.close closes.
func (s *sessions) dial(ctx context.Context, se *session) error {
	cfg := s.cfg.Clone()
	// The driver logs a read error before returning it; a statement
	// stopped at its bound is reported in its result instead.
	cfg.Logger = quietLogger{}
	base := cfg.DialFunc
	cfg.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		var (
			c   net.Conn
			err error
		)
		if base != nil {
			c, err = base(ctx, network, addr)
		} else {
			var d net.Dialer
			c, err = d.DialContext(ctx, network, addr)
		}
		if err != nil {
			return nil, err
		}
		se.sock = &budgetConn{Conn: c, limit: s.wireLimit, tripped: new(atomic.Bool)}
		return se.sock, nil
	}
	connector, err := mysqldrv.NewConnector(cfg)
	if err != nil {
		return err
	}
	db := sql.OpenDB(connector)
	if se.conn, err = db.Conn(ctx); err != nil {
		db.Close()
		return err
	}
	se.close = func() {
		se.conn.Close()
		db.Close()
	}
	return nil
}

// The commands of the reset (see the protocol's COM_RESET_CONNECTION,
// COM_INIT_DB and COM_QUERY) and the first byte of the server's packets
// that are no row: OK, ERR and EOF (or OK closing a result).
const (
	comQuery           = 0x03
	comInitDB          = 0x02
	comResetConnection = 0x1f
	okPacket           = 0x00
	errPacket          = 0xff
	eofPacket          = 0xfe
	// nullValue is a NULL in a row of the text protocol.
	nullValue = 0xfb
	// maxPacket is the longest payload of one protocol packet; an EOF
	// packet is shorter than maxEOF.
	maxPacket = 1<<24 - 1
	maxEOF    = 9
)

// resetCommands are the packets that clean a connection: first
// COM_RESET_CONNECTION (resetLen bytes), then COM_INIT_DB database,
// COM_QUERY setup, a COM_QUERY of each of accountQueries, COM_QUERY
// identity and last COM_QUERY beginReadOnly (beginLen bytes), each the
// first packet (sequence 0) of its command.
func resetCommands(database, setup, identity string) []byte {
	cmds := [][]byte{{comResetConnection}, append([]byte{comInitDB}, database...), append([]byte{comQuery}, setup...)}
	for _, q := range accountQueries {
		cmds = append(cmds, append([]byte{comQuery}, q...))
	}
	cmds = append(cmds, append([]byte{comQuery}, identity...), append([]byte{comQuery}, beginReadOnly...))
	var b []byte
	for _, cmd := range cmds {
		b = append(b, byte(len(cmd)), byte(len(cmd)>>8), byte(len(cmd)>>16), 0)
		b = append(b, cmd...)
	}
	return b
}

// beginLen is the length of the packet of beginReadOnly: its header,
// the command and the statement.
const beginLen = 4 + 1 + len(beginReadOnly)

// resetLen is the length of the COM_RESET_CONNECTION packet: its header
// and the command.
const resetLen = 5

// errReset is an answer to the reset that is not the one expected.
var errReset = errors.New("mysql: session reset: unexpected answer")

// startReset sends COM_RESET_CONNECTION when se's statement ends, so the
// server drops what the statement left (locks, temporary tables, the
// transaction) at once; the driver must be waiting for nothing and the
// socket hold nothing unread. finishReset reads its answer when se is
// next taken.
func (s *sessions) startReset(se *session) error {
	if err := se.conn.Raw(func(dc any) error {
		if v, ok := dc.(driver.Validator); !ok || !v.IsValid() {
			return driver.ErrBadConn
		}
		return checkIdle(dc)
	}); err != nil {
		return err
	}
	c := se.sock.Conn
	if err := c.SetDeadline(time.Now().Add(killGrace)); err != nil {
		return err
	}
	_, err := c.Write(se.reset[:resetLen])
	return err
}

// finishReset sends the rest of se's reset (resetCommands), without
// its beginReadOnly unless begin is set, in one write when se is taken
// for a statement, and reads the answers: each command must answer OK,
// and the connection must have the account, id and role it was opened
// with, within killGrace. The reset keeps the role a statement set; an
// account changed on the server (a REVOKE just before this statement)
// reaches the session only when it logs in again. Reading the identity
// last of the SELECTs also makes it the last SELECT, whose row count
// FOUND_ROWS() reports and the reset keeps. The transaction begins
// after the identity's answer in the server's order, but the client
// hands the connection over only when it has read every answer, so no
// statement runs on a connection whose check failed.
func (s *sessions) finishReset(se *session, begin bool) error {
	c := se.sock.Conn
	if err := c.SetDeadline(time.Now().Add(killGrace)); err != nil {
		return err
	}
	cmds := se.reset[resetLen:]
	if !begin {
		cmds = cmds[:len(cmds)-beginLen]
	}
	if _, err := c.Write(cmds); err != nil {
		return err
	}
	rd := se.answers(c)
	for range 3 {
		if err := rd.command().ok(); err != nil {
			return err
		}
	}
	h := sha256.New()
	for range accountQueries {
		if err := rd.command().lines(h); err != nil {
			return err
		}
	}
	if !bytes.Equal(h.Sum(nil), se.account) {
		return errors.New("mysql: session reset: the login's account changed")
	}
	row, err := rd.command().row(2)
	if err != nil {
		return err
	}
	role := sql.NullString{String: string(row[1]), Valid: row[1] != nil}
	if string(row[0]) != strconv.FormatInt(se.id, 10) || role != se.role {
		return errors.New("mysql: session reset: the connection changed its role")
	}
	if begin {
		if err := rd.command().ok(); err != nil {
			return err
		}
	}
	if rd.r.Buffered() != 0 { // the server answered what was not asked
		return errReset
	}
	return c.SetDeadline(time.Time{})
}

// answerBuffer is the buffer of the reader of a reset's answers: the
// answers of one reset take a few hundred bytes (a long grant more),
// read in a few reads rather than two per packet.
const answerBuffer = 4 << 10

// answers returns the reader of se's reset answers on c, kept with se.
func (se *session) answers(c net.Conn) *response {
	if se.answer == nil {
		se.answer = &response{r: bufio.NewReaderSize(c, answerBuffer)}
	}
	se.answer.r.Reset(c)
	return se.answer
}

// response reads the packets of one command's response after another
// from r, into buf, which it reuses.
type response struct {
	r   *bufio.Reader
	seq byte
	buf []byte
}

// command starts reading the response to the next command.
func (r *response) command() *response {
	r.seq = 0
	return r
}

// next returns the payload of the next packet, which must follow the
// previous one in sequence; it is valid until the next call.
func (r *response) next() ([]byte, error) {
	var head [4]byte
	if _, err := io.ReadFull(r.r, head[:]); err != nil {
		return nil, err
	}
	n := int(head[0]) | int(head[1])<<8 | int(head[2])<<16
	r.seq++
	if head[3] != r.seq || n == 0 || n == maxPacket {
		return nil, errReset
	}
	if cap(r.buf) < n {
		r.buf = make([]byte, n)
	}
	p := r.buf[:n]
	_, err := io.ReadFull(r.r, p)
	return p, err
}

// ok reads an OK packet; an ERR packet is the server's message.
func (r *response) ok() error {
	p, err := r.next()
	switch {
	case err != nil:
		return err
	case p[0] == okPacket:
		return nil
	case p[0] == errPacket:
		return fmt.Errorf("mysql: session reset: %s", p[min(len(p), 9):]) // after the code, '#' and SQL state
	}
	return errReset
}

// head reads the head of a result of n columns (n < 251) and returns
// its first row; a result without rows is an error.
func (r *response) head(n int) ([]byte, error) {
	p, err := r.next()
	// The column count, and MariaDB's "metadata follows" where the
	// driver asks for its metadata cache (MARIADB_CLIENT_CACHE_METADATA).
	count := string([]byte{byte(n)})
	if err != nil || string(p) != count && string(p) != count+"\x01" {
		return nil, cmp.Or(err, errReset)
	}
	for range n { // the column definitions
		if _, err := r.next(); err != nil {
			return nil, err
		}
	}
	if p, err = r.next(); err == nil && p[0] == eofPacket && len(p) < maxEOF { // without CLIENT_DEPRECATE_EOF
		p, err = r.next()
	}
	if err == nil && p[0] == eofPacket { // the end of the result (no value is 16 MiB long)
		err = errReset
	}
	return p, err
}

// row reads a result of one row of n short values (n < 251, each
// shorter than 251 bytes), nil for NULL, copied.
func (r *response) row(n int) ([][]byte, error) {
	p, err := r.head(n)
	if err != nil {
		return nil, err
	}
	var vals [][]byte
	for range n {
		switch {
		case len(p) > 0 && p[0] == nullValue:
			vals, p = append(vals, nil), p[1:]
		case len(p) > 0 && p[0] < nullValue && int(p[0]) < len(p):
			vals, p = append(vals, bytes.Clone(p[1:1+p[0]])), p[1+p[0]:]
		default:
			return nil, errReset
		}
	}
	if end, err := r.next(); err != nil || len(p) != 0 || end[0] != eofPacket {
		return nil, cmp.Or(err, errReset)
	}
	return vals, nil
}

// lines reads a result of one column and one or more rows, each a
// value that is not NULL, and adds the values to h (digestValue).
func (r *response) lines(h hash.Hash) error {
	p, err := r.head(1)
	for ; err == nil && p[0] != eofPacket; p, err = r.next() {
		v, rest, ok := lenEncoded(p)
		if !ok || len(rest) != 0 {
			return errReset
		}
		digestValue(h, v)
	}
	return err
}

// lenEncoded splits p after its first value, a length-encoded string of
// less than 16 MiB (the protocol's length of 1, 3 or 4 bytes); NULL is
// not ok.
func lenEncoded(p []byte) (v, rest []byte, ok bool) {
	n, skip := 0, 1
	switch {
	case len(p) == 0 || p[0] == nullValue || p[0] == eofPacket || p[0] == errPacket:
		return nil, nil, false
	case p[0] < nullValue:
		n = int(p[0])
	case p[0] == 0xfc && len(p) >= 3:
		n, skip = int(p[1])|int(p[2])<<8, 3
	case p[0] == 0xfd && len(p) >= 4:
		n, skip = int(p[1])|int(p[2])<<8|int(p[3])<<16, 4
	default:
		return nil, nil, false
	}
	if len(p)-skip < n {
		return nil, nil, false
	}
	return p[skip : skip+n], p[skip+n:], true
}

// quietLogger drops the driver's log lines.
type quietLogger struct{}

func (quietLogger) Print(...any) {}

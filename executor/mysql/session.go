package mysql

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"net"
	"strconv"
	"sync/atomic"
	"time"

	mysqldrv "github.com/go-sql-driver/mysql"
)

// wireSlack is what the protocol itself may add to a result's values on
// the wire beyond what the executor counts (it counts 16 bytes per value,
// more than a row header and a value's length prefix take): the handshake
// and the column definitions, sent with the prepare and again with the
// execution, of up to 4,096 columns with long names (4 MiB).
const wireSlack = 4 << 20

// sessions gives each statement a connection of its own, which is closed
// when the statement ends: go-sql-driver/mysql v1.10 resets nothing when
// database/sql reuses a connection (its ResetSession only checks the
// socket; it never sends COM_RESET_CONNECTION or COM_CHANGE_USER), so a
// reused connection would carry user variables, named locks, temporary
// tables and session variables from one statement to the next.
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
	// server lexes it (a connection of the host's may have changed them).
	setup string
	// opened counts the connections made, for tests.
	opened atomic.Int64
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

// killGrace bounds the KILL QUERY sent after a statement's time ran out.
const killGrace = 5 * time.Second

// errWireLimit is the read error of a connection past its byte bound.
var errWireLimit = errors.New("mysql: the result passed its byte bound on the wire")

// budgetConn is a socket that fails reads once more than limit bytes
// have been read through it, so the driver never buffers more: the
// driver reads a whole row before the executor can count it, and a row
// of many large values is not bounded by the server's max_allowed_packet.
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

// conn returns a fresh connection with the session pinned, and release,
// which closes it. tripped reports, after the statement, whether the
// connection stopped at its byte bound.
func (s *sessions) conn(ctx context.Context, tripped *atomic.Bool) (*sql.Conn, func(), error) {
	var (
		conn  *sql.Conn
		close func()
		err   error
	)
	if s.cfg != nil {
		conn, close, err = s.dial(ctx, tripped)
	} else {
		conn, err = s.db.Conn(ctx)
		close = func() {
			// Returning driver.ErrBadConn from Raw makes database/sql close
			// the connection instead of putting it back into the pool.
			conn.Raw(func(any) error { return driver.ErrBadConn }) //nolint:errcheck // the error is the point
		}
	}
	if err != nil {
		return nil, nil, err
	}
	s.opened.Add(1)
	if _, err := conn.ExecContext(ctx, s.setup); err != nil {
		close()
		return nil, nil, err
	}
	if s.killer == nil {
		return conn, close, nil
	}
	var id int64
	if err := conn.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id); err != nil {
		close()
		return nil, nil, err
	}
	return conn, func() {
		close()
		if ctx.Err() != nil {
			s.kill(id)
		}
	}, nil
}

// kill stops the statement running on the server's connection id, if
// any; it fails silently, as the statement has already failed.
func (s *sessions) kill(id int64) {
	ctx, cancel := context.WithTimeout(context.Background(), killGrace)
	defer cancel()
	s.killer.ExecContext(ctx, "KILL QUERY "+strconv.FormatInt(id, 10)) //nolint:errcheck // the statement may have ended
}

// dial opens a connection of its own, through a budgetConn, in a handle
// of its own that release closes.
func (s *sessions) dial(ctx context.Context, tripped *atomic.Bool) (*sql.Conn, func(), error) {
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
		return &budgetConn{Conn: c, limit: s.wireLimit, tripped: tripped}, nil
	}
	connector, err := mysqldrv.NewConnector(cfg)
	if err != nil {
		return nil, nil, err
	}
	db := sql.OpenDB(connector)
	conn, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	return conn, func() {
		conn.Close()
		db.Close()
	}, nil
}

// quietLogger drops the driver's log lines.
type quietLogger struct{}

func (quietLogger) Print(...any) {}

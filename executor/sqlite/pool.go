package sqlite

// #include "bounds.h"
import "C"

import (
	"context"
	"errors"
	"sync"
	"time"
)

// pool holds the guarded connections of Execute and Check: at most size
// open, the idle ones in idle. database/sql's pool would serve too, but
// there a dedicated connection within the time limit costs a context with
// a timer, a Conn and its locks on every call; here a call that finds an
// idle connection takes it from a channel, and only a call that must wait
// starts a timer.
type pool struct {
	connector *connector
	idle      chan *guardedConn
	slots     chan struct{} // a token per open connection

	mu     sync.Mutex // orders put against close
	closed bool
}

func newPool(c *connector, size int) *pool {
	return &pool{connector: c, idle: make(chan *guardedConn, size), slots: make(chan struct{}, size)}
}

// errPoolWait is get's error when no connection came free in time.
var errPoolWait = errors.New("sqlite: no connection came free within the time limit")

// get returns an idle connection, or opens one while fewer than size are
// open, or waits for one until ctx is done (ctx.Err()) or wait passes
// (errPoolWait). It returns what is left of wait.
func (p *pool) get(ctx context.Context, wait time.Duration) (*guardedConn, time.Duration, error) {
	select {
	case c := <-p.idle:
		return c, wait, nil
	default:
	}
	start := time.Now()
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case c := <-p.idle:
		return c, wait - time.Since(start), nil
	case p.slots <- struct{}{}:
		dc, err := p.connector.Connect(ctx)
		if err != nil {
			<-p.slots
			return nil, 0, err
		}
		return dc.(*guardedConn), wait - time.Since(start), nil
	case <-t.C:
		return nil, 0, errPoolWait
	case <-ctx.Done():
		return nil, 0, ctx.Err()
	}
}

// put returns c to the idle connections, or closes it once the pool is
// closed.
func (p *pool) put(c *guardedConn) {
	p.mu.Lock()
	if !p.closed {
		p.idle <- c // never blocks: at most size connections exist
		p.mu.Unlock()
		return
	}
	p.mu.Unlock()
	c.Close()
	<-p.slots
}

// close closes the idle connections, and makes put close the others.
func (p *pool) close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	var errs []error
	for {
		select {
		case c := <-p.idle:
			errs = append(errs, c.Close())
			<-p.slots
		default:
			return errors.Join(errs...)
		}
	}
}

// watchdog interrupts the statement running on a connection when its
// time limit passes (sqlite3_interrupt: SQLite stops at its next check,
// between VM instructions, while it plans a statement or counts a
// table's rows). One timer per connection, reset for each statement,
// costs less than a context with a deadline per call.
type watchdog struct {
	db *C.sqlite3
	t  *time.Timer

	mu       sync.Mutex
	deadline time.Time // zero while no statement runs
	fired    bool
}

func newWatchdog(db *C.sqlite3) *watchdog {
	w := &watchdog{db: db}
	w.t = time.AfterFunc(time.Hour, w.fire)
	w.t.Stop()
	return w
}

// arm starts the limit of the statement about to run.
func (w *watchdog) arm(limit time.Duration) {
	w.mu.Lock()
	w.deadline, w.fired = time.Now().Add(limit), false
	w.mu.Unlock()
	w.t.Reset(limit)
}

// disarm ends it. The timer is left to run: the next arm resets it,
// and should it fire first it finds no deadline.
func (w *watchdog) disarm() {
	w.mu.Lock()
	w.deadline = time.Time{}
	w.mu.Unlock()
}

// expired reports whether the limit passed and interrupted the
// statement.
func (w *watchdog) expired() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.fired
}

// fire interrupts the running statement once its deadline has passed. A
// call the timer made for an earlier statement finds a later deadline,
// or none, and does nothing.
func (w *watchdog) fire() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.db != nil && !w.deadline.IsZero() && !time.Now().Before(w.deadline) {
		C.bounds_interrupt(w.db)
		w.fired = true
	}
}

// stop ends the watchdog before its connection closes.
func (w *watchdog) stop() {
	w.t.Stop()
	w.mu.Lock()
	w.db = nil
	w.mu.Unlock()
}

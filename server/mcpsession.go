package server

import (
	"net/http"
	"sync"
	"time"
)

// mcpSessionHeader names an MCP session over streamable HTTP.
const mcpSessionHeader = "Mcp-Session-Id"

// mcpOwners binds each MCP session to the principal whose request
// created it (principalID: method and id). The MCP SDK keeps sessions in
// this process, so the binding lives here too; an entry goes when its
// owner ends the session or when the session has been idle as long as
// the SDK's own timeout.
type mcpOwners struct {
	idle time.Duration
	mu   sync.Mutex
	byID map[string]*mcpOwner
}

type mcpOwner struct {
	principal string
	used      time.Time
	active    int // requests in flight, as the SDK counts a session busy
}

// mcpOwned wraps the MCP handler next: a request naming a session that
// is not the caller's is answered exactly as an unknown session (404
// "session not found", the SDK's own answer), so another principal can
// neither call tools in it, read its stream, nor end it, and cannot tell
// a live session of someone else from an expired one. idle is the SDK's
// session timeout.
func (s *service) mcpOwned(idle time.Duration, next http.Handler) http.Handler {
	o := &mcpOwners{idle: idle, byID: map[string]*mcpOwner{}}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		who := principalID(r.Context())
		id := r.Header.Get(mcpSessionHeader)
		if id == "" {
			// Only a request without a session starts one: the
			// session the SDK names in its answer is the caller's.
			next.ServeHTTP(&sessionStart{ResponseWriter: w, owners: o, who: who}, r)
			return
		}
		if !o.enter(id, who) {
			http.Error(w, "session not found", http.StatusNotFound)
			return
		}
		defer o.leave(id, r.Method == http.MethodDelete)
		next.ServeHTTP(w, r)
	})
}

// enter reports whether session id is who's, and marks it busy.
func (o *mcpOwners) enter(id, who string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	e := o.byID[id]
	if e == nil || e.principal != who {
		return false
	}
	e.active++
	e.used = time.Now()
	return true
}

// leave marks a request to session id done; ended drops the binding (the
// owner's DELETE).
func (o *mcpOwners) leave(id string, ended bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	e := o.byID[id]
	if e == nil {
		return
	}
	e.active--
	e.used = time.Now()
	if ended {
		delete(o.byID, id)
	}
}

// bind records who as the owner of the new session id, first dropping
// the bindings of sessions the SDK has closed as idle.
func (o *mcpOwners) bind(id, who string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for k, e := range o.byID {
		if e.active == 0 && time.Since(e.used) > o.idle {
			delete(o.byID, k)
		}
	}
	if _, taken := o.byID[id]; !taken {
		o.byID[id] = &mcpOwner{principal: who, used: time.Now()}
	}
}

// sessionStart binds the session id the SDK sets on its answer to a
// request without one.
type sessionStart struct {
	http.ResponseWriter
	owners *mcpOwners
	who    string
	done   bool
}

func (w *sessionStart) WriteHeader(code int) {
	if !w.done {
		w.done = true
		if id := w.Header().Get(mcpSessionHeader); id != "" && code < http.StatusBadRequest {
			w.owners.bind(id, w.who)
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *sessionStart) Write(b []byte) (int, error) {
	if !w.done {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

// Flush lets the MCP handler stream server-sent events.
func (w *sessionStart) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the underlying writer.
func (w *sessionStart) Unwrap() http.ResponseWriter { return w.ResponseWriter }

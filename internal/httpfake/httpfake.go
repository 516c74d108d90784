// Package httpfake is a scripted HTTP server for the provider tests: it
// answers with canned replies in order and records every request it got.
package httpfake

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
)

// Reply is one canned answer.
type Reply struct {
	Status int               // 200 when 0
	Header map[string]string // extra response headers
	Body   string            // sent as application/json
	// Block holds the request until the client gives up (or the server
	// closes), to test deadlines.
	Block bool
}

// Request is one request as the server received it.
type Request struct {
	Method string      // e.g. "POST"
	Path   string      // URL path, e.g. "/v1/embeddings"
	Query  string      // raw query, without "?"
	Header http.Header // request headers
	Body   []byte      // request body
}

// Server is a running fake. It answers with the scripted replies in order;
// once they are used, Handle answers when set, else the last reply repeats.
type Server struct {
	*httptest.Server
	mu      sync.Mutex
	replies []Reply
	reqs    []Request
	// Handle, when set, computes the reply to each request after the
	// scripted ones from the request.
	Handle func(r Request) Reply
	conns  atomic.Int64
}

// New starts a Server answering replies in order; t's cleanup closes it.
func New(t testing.TB, replies ...Reply) *Server {
	s := &Server{replies: replies}
	done := make(chan struct{})
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		req := Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Header: r.Header.Clone(), Body: body}
		s.mu.Lock()
		n := len(s.reqs)
		s.reqs = append(s.reqs, req)
		var rep Reply
		var h func(Request) Reply
		switch {
		case n < len(s.replies):
			rep = s.replies[n]
		case s.Handle != nil:
			h = s.Handle
		case len(s.replies) > 0:
			rep = s.replies[len(s.replies)-1]
		}
		s.mu.Unlock()
		if h != nil {
			rep = h(req)
		}
		if rep.Block {
			select {
			case <-r.Context().Done():
			case <-done:
			}
			return
		}
		for k, v := range rep.Header {
			w.Header().Set(k, v)
		}
		if w.Header().Get("Content-Type") == "" {
			w.Header().Set("Content-Type", "application/json")
		}
		if rep.Status == 0 {
			rep.Status = http.StatusOK
		}
		w.WriteHeader(rep.Status)
		_, _ = io.WriteString(w, rep.Body)
	}))
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.conns.Add(1)
		}
	}
	s.Start()
	t.Cleanup(func() {
		close(done)
		s.Server.Close()
	})
	return s
}

// Conns returns the number of connections clients opened so far.
func (s *Server) Conns() int { return int(s.conns.Load()) }

// Requests returns the requests received so far, oldest first.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

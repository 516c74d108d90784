package server

import (
	"context"
	"database/sql"
	"log/slog"
	"net/http"
	"sync"
	"time"
)

// Probe reports whether a dependency of the service can be reached now:
// nil, or why not. It is called with a deadline of probeTimeout.
type Probe func(ctx context.Context) error

const (
	// probeTimeout bounds one probe: a dependency slower than this is
	// reported unreachable, inside a load balancer's usual check timeout.
	probeTimeout = 2 * time.Second
	// probeTTL is how long probe results are reused, so a load balancer
	// polling every replica often does not turn into load on the
	// database and Redis.
	probeTTL = time.Second
)

// readiness runs the configured probes and remembers their results for
// probeTTL.
type readiness struct {
	probes map[string]Probe
	log    *slog.Logger

	mu      sync.Mutex
	checked time.Time
	results map[string]string // name → "ok" or "unreachable"
	ready   bool
}

// check returns the probes' results, running them (concurrently) when the
// last results are older than probeTTL.
func (r *readiness) check(ctx context.Context) (map[string]string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if time.Since(r.checked) < probeTTL {
		return r.results, r.ready
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), probeTimeout)
	defer cancel()
	errs := make(map[string]error, len(r.probes))
	var mu sync.Mutex
	var wg sync.WaitGroup
	for name, p := range r.probes {
		wg.Go(func() {
			err := p(ctx)
			mu.Lock()
			errs[name] = err
			mu.Unlock()
		})
	}
	wg.Wait()
	results, ready := make(map[string]string, len(errs)), true
	for name, err := range errs {
		results[name] = "ok"
		if err != nil {
			// The reason goes to the log, not to the unauthenticated
			// response: it can name hosts and users.
			results[name], ready = "unreachable", false
			r.log.LogAttrs(ctx, slog.LevelWarn, "dependency unreachable", slog.String("dependency", name), slog.String("error", err.Error()))
		}
	}
	r.results, r.ready, r.checked = results, ready, time.Now()
	return results, ready
}

// handleHealth is the readiness route: 200 with status "ok" when every
// probe passes, 503 with status "unavailable" when one fails. Only an
// authenticated caller sees more than the status and the checks: the
// models, the index and the login's privileges tell an attacker what to
// aim at.
func (s *service) handleHealth(w http.ResponseWriter, r *http.Request) {
	h, status := s.health, http.StatusOK
	if len(s.ready.probes) > 0 {
		checks, ok := s.ready.check(r.Context())
		h.Checks = checks
		if !ok {
			h.Status, status = "unavailable", http.StatusServiceUnavailable
		}
	}
	if !s.healthCaller(r) {
		writeJSON(w, status, struct {
			Status string            `json:"status"`
			Checks map[string]string `json:"checks,omitempty"`
		}{h.Status, h.Checks})
		return
	}
	writeJSON(w, status, h)
}

// healthCaller reports whether r's credentials are valid. A request
// without any is not sent to the authenticator, so a load balancer's
// polling never reaches an identity provider.
func (s *service) healthCaller(r *http.Request) bool {
	if _, ok := BearerToken(r); !ok && !IsNoAuth(s.cfg.Auth) {
		return false
	}
	p, err := s.cfg.Auth.Authenticate(r)
	return err == nil && p != nil && p.ID != ""
}

// handleLive is the liveness route: 200 while the process serves
// requests, whatever its dependencies' state (a restart would not bring
// them back).
func handleLive(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, LiveResponse{Status: "ok"})
}

// PingProbe is the readiness probe of a database pool: it pings db, but
// reports a pool whose every connection is in use as reachable — those
// connections are busy with statements the database is answering — so
// callers' slow statements cannot take a replica out of rotation.
func PingProbe(db *sql.DB) Probe {
	return func(ctx context.Context) error {
		if st := db.Stats(); st.MaxOpenConnections > 0 && st.InUse >= st.MaxOpenConnections {
			return nil
		}
		return db.PingContext(ctx)
	}
}

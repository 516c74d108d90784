package server

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// SupabaseOptions configure a Supabase-compatible verifier.
type SupabaseOptions struct {
	// URL is the project URL, e.g. "https://abcd.supabase.co"; required.
	// Tokens are checked with GET {URL}/auth/v1/user.
	URL string
	// AnonKey is the project's anon (publishable) key, sent as the apikey
	// header; required. It is never logged or returned.
	AnonKey string
	// Client makes the calls; nil means a client with a 10-second timeout.
	Client *http.Client
	// CacheTTL is how long an accepted token is remembered, so a burst of
	// requests costs one call to the auth server. 0 means
	// DefaultSupabaseCacheTTL; a negative value disables the cache.
	// Rejected tokens are never cached. A token revoked at the auth server
	// keeps working here for at most CacheTTL.
	CacheTTL time.Duration
	// MaxCacheEntries bounds the cache; 0 means 10,000.
	MaxCacheEntries int
}

// DefaultSupabaseCacheTTL is the positive-cache lifetime of a Supabase
// verifier when SupabaseOptions.CacheTTL is zero.
const DefaultSupabaseCacheTTL = 30 * time.Second

// Supabase authenticates bearer tokens by asking a Supabase-compatible
// auth server (GoTrue) who they belong to: GET {URL}/auth/v1/user with the
// anon key in the apikey header and the caller's token as the bearer
// token. A 200 with a user id lets the request in as
// {ID: user id, Method: "supabase", Email, Claims: {role, aud}}; 400, 401,
// 403 and 404 are ErrUnauthenticated; anything else (5xx, 429, a network
// failure) is an error that refuses the request with 503.
//
// Accepted tokens are cached for CacheTTL under their SHA-256 digest; the
// token itself is not kept.
type Supabase struct {
	endpoint string
	anonKey  string
	client   *http.Client
	ttl      time.Duration
	max      int
	now      func() time.Time

	mu    sync.Mutex
	cache map[[sha256.Size]byte]cached
}

type cached struct {
	p   *Principal
	exp time.Time
}

// NewSupabase returns a Supabase verifier. Errors: a missing or invalid
// URL, or a missing AnonKey.
func NewSupabase(o SupabaseOptions) (*Supabase, error) {
	if o.URL == "" || o.AnonKey == "" {
		return nil, errors.New("server: supabase: URL and AnonKey are required")
	}
	u, err := url.Parse(strings.TrimRight(o.URL, "/"))
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, errors.New("server: supabase: URL must be an absolute http(s) URL")
	}
	s := &Supabase{
		endpoint: u.String() + "/auth/v1/user",
		anonKey:  o.AnonKey,
		client:   o.Client,
		ttl:      o.CacheTTL,
		max:      o.MaxCacheEntries,
		now:      time.Now,
		cache:    map[[sha256.Size]byte]cached{},
	}
	if s.client == nil {
		s.client = &http.Client{Timeout: 10 * time.Second}
	}
	if s.ttl == 0 {
		s.ttl = DefaultSupabaseCacheTTL
	}
	if s.max <= 0 {
		s.max = 10000
	}
	return s, nil
}

// Authenticate implements Authenticator.
func (s *Supabase) Authenticate(r *http.Request) (*Principal, error) {
	tok, ok := BearerToken(r)
	if !ok {
		return nil, fmt.Errorf("%w: no bearer token", ErrUnauthenticated)
	}
	key := sha256.Sum256([]byte(tok))
	if p := s.lookup(key); p != nil {
		return p, nil
	}
	req, err := http.NewRequestWithContext(r.Context(), http.MethodGet, s.endpoint, nil)
	if err != nil {
		return nil, errors.New("server: supabase: cannot build the request")
	}
	req.Header.Set("apikey", s.anonKey)
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Accept", "application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		// The error text of a failed call names the URL, never the headers.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("server: supabase: auth server unreachable: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("server: supabase: reading the auth server's answer: %v", err)
	}
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound:
		return nil, fmt.Errorf("%w: the auth server rejected the token (HTTP %d)", ErrUnauthenticated, resp.StatusCode)
	default:
		return nil, fmt.Errorf("server: supabase: auth server answered HTTP %d", resp.StatusCode)
	}
	var user struct {
		ID    string `json:"id"`
		Email string `json:"email"`
		Role  string `json:"role"`
		Aud   string `json:"aud"`
	}
	if err := json.Unmarshal(body, &user); err != nil || user.ID == "" {
		return nil, errors.New("server: supabase: the auth server's answer has no user id")
	}
	p := &Principal{ID: user.ID, Method: "supabase", Email: user.Email, Claims: map[string]any{}}
	if user.Role != "" {
		p.Claims["role"] = user.Role
	}
	if user.Aud != "" {
		p.Claims["aud"] = user.Aud
	}
	s.store(key, p)
	return p, nil
}

func (s *Supabase) lookup(key [sha256.Size]byte) *Principal {
	if s.ttl < 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.cache[key]
	if !ok {
		return nil
	}
	if !s.now().Before(c.exp) {
		delete(s.cache, key)
		return nil
	}
	return c.p
}

func (s *Supabase) store(key [sha256.Size]byte, p *Principal) {
	if s.ttl < 0 {
		return
	}
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.cache) >= s.max {
		for k, c := range s.cache {
			if !now.Before(c.exp) {
				delete(s.cache, k)
			}
		}
		// Still full: drop arbitrary entries (they are re-verified on
		// their next use) until there is room.
		for k := range s.cache {
			if len(s.cache) < s.max {
				break
			}
			delete(s.cache, k)
		}
	}
	s.cache[key] = cached{p: p, exp: now.Add(s.ttl)}
}

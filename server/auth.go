package server

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/text2sql-go/text2sql/identity"
)

// ErrUnauthenticated is returned (possibly wrapped) by an Authenticator
// when a request carries no credentials or bad ones. The server answers
// 401 with code "unauthorized". Any other Authenticator error means the
// verifier itself failed (an identity provider unreachable, say); the
// server answers 503 with code "auth_unavailable" and lets nobody in.
var ErrUnauthenticated = errors.New("server: unauthenticated")

// Principal is who a request acts for (identity.Principal). The server
// puts it in the context of every pipeline call (identity.PrincipalFrom),
// where executors read it to run the caller's statements under the
// caller's own database role and claims, and in every AuditEvent.
type Principal = identity.Principal

// Authenticator decides who a request is from. It returns the Principal,
// or an error wrapping ErrUnauthenticated for missing or bad credentials,
// or another error when it cannot decide (the request is then refused with
// 503). Implementations must be safe for concurrent use and must never put
// the credential in an error or a log line.
type Authenticator interface {
	Authenticate(r *http.Request) (*Principal, error)
}

// AuthenticatorFunc lets a plain function serve as an Authenticator.
type AuthenticatorFunc func(r *http.Request) (*Principal, error)

// Authenticate calls f.
func (f AuthenticatorFunc) Authenticate(r *http.Request) (*Principal, error) { return f(r) }

// BearerToken returns the token of an "Authorization: Bearer <token>"
// header (the scheme is case-insensitive), or false when there is none.
func BearerToken(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	scheme, tok, ok := strings.Cut(strings.TrimSpace(h), " ")
	if !ok || !strings.EqualFold(scheme, "bearer") {
		return "", false
	}
	tok = strings.TrimSpace(tok)
	return tok, tok != ""
}

// noAuth is the Authenticator of NoAuth.
type noAuth struct{}

// NoAuth returns an Authenticator that lets every request in as the
// principal {ID: "local", Method: "none"}. It is for local use only: a
// service reachable by anyone else must authenticate. The server logs a
// warning at startup when it is used, and the CLI accepts it only on a
// loopback address.
func NoAuth() Authenticator { return noAuth{} }

func (noAuth) Authenticate(*http.Request) (*Principal, error) {
	return &Principal{ID: "local", Method: "none"}, nil
}

// IsNoAuth reports whether a is the Authenticator NoAuth returns.
func IsNoAuth(a Authenticator) bool {
	_, ok := a.(noAuth)
	return ok
}

// StaticTokens authenticates bearer tokens against a fixed set. Build it
// with NewStaticTokens.
type StaticTokens struct {
	names   []string
	digests [][sha256.Size]byte
}

// MinStaticTokenLength is the shortest token NewStaticTokens accepts, in
// bytes: 16 bytes is 128 bits when the token is random hex or base64.
const MinStaticTokenLength = 16

// NewStaticTokens returns an Authenticator accepting the bearer tokens of
// tokens, a map from a name (the Principal.ID, e.g. "alice" or "ci") to
// its token. Tokens are compared in constant time: every request hashes
// the presented token with SHA-256 and compares it with every configured
// digest, so neither the length nor the content of a token leaks through
// timing, and only the digests are kept.
//
// Errors: no tokens, an empty name, a token shorter than
// MinStaticTokenLength, or two names with the same token.
func NewStaticTokens(tokens map[string]string) (*StaticTokens, error) {
	if len(tokens) == 0 {
		return nil, errors.New("server: static tokens: no tokens configured")
	}
	s := &StaticTokens{}
	names := make([]string, 0, len(tokens))
	for name := range tokens {
		names = append(names, name)
	}
	sort.Strings(names)
	seen := map[[sha256.Size]byte]string{}
	for _, name := range names {
		tok := tokens[name]
		if strings.TrimSpace(name) == "" {
			return nil, errors.New("server: static tokens: empty token name")
		}
		if len(tok) < MinStaticTokenLength {
			return nil, fmt.Errorf("server: static tokens: the token of %q is shorter than %d bytes", name, MinStaticTokenLength)
		}
		d := sha256.Sum256([]byte(tok))
		if other, dup := seen[d]; dup {
			return nil, fmt.Errorf("server: static tokens: %q and %q have the same token", other, name)
		}
		seen[d] = name
		s.names = append(s.names, name)
		s.digests = append(s.digests, d)
	}
	return s, nil
}

// ParseStaticTokens parses "name:token,name:token" (white space around
// entries is ignored) into the map NewStaticTokens takes, for flags and
// environment variables. A token may itself contain ':'.
func ParseStaticTokens(s string) (map[string]string, error) {
	out := map[string]string{}
	for _, entry := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == '\n' }) {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		name, tok, ok := strings.Cut(entry, ":")
		if !ok || strings.TrimSpace(name) == "" || tok == "" {
			return nil, errors.New("server: static tokens: want name:token entries separated by commas")
		}
		name = strings.TrimSpace(name)
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("server: static tokens: name %q given twice", name)
		}
		out[name] = strings.TrimSpace(tok)
	}
	return out, nil
}

// Authenticate implements Authenticator.
func (s *StaticTokens) Authenticate(r *http.Request) (*Principal, error) {
	tok, ok := BearerToken(r)
	if !ok {
		return nil, fmt.Errorf("%w: no bearer token", ErrUnauthenticated)
	}
	d := sha256.Sum256([]byte(tok))
	match := -1
	for i := range s.digests {
		if subtle.ConstantTimeCompare(d[:], s.digests[i][:]) == 1 {
			match = i
		}
	}
	if match < 0 {
		return nil, fmt.Errorf("%w: unknown token", ErrUnauthenticated)
	}
	return &Principal{ID: s.names[match], Method: "static"}, nil
}

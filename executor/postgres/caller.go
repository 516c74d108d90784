package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/identity"
)

// RoleFunc chooses the role a caller's statements run as (Options.RoleFor):
// a role name, or "" for Options.Role. An error refuses the call; wrap
// text2sql.ErrForbidden when the principal may not run statements.
type RoleFunc func(p *identity.Principal) (string, error)

// RoleMap returns a RoleFunc that maps Principal.ID to a role, as given in
// m (copied). A principal m does not name is refused with an error
// wrapping text2sql.ErrForbidden.
func RoleMap(m map[string]string) RoleFunc {
	m = maps.Clone(m)
	return func(p *identity.Principal) (string, error) {
		if r, ok := m[p.ID]; ok && r != "" {
			return r, nil
		}
		return "", fmt.Errorf("%w: postgres: no role is mapped to principal %q", text2sql.ErrForbidden, p.ID)
	}
}

// RoleFromClaim returns a RoleFunc that takes the role from the
// principal's claim named claim (PostgREST and Supabase read "role"), as
// PostgREST does with a verified JWT. When allowed is not empty the role
// must be one of them (a token signed for another service cannot name a
// role this one never meant to lend). A principal without the claim, or
// with a role not allowed, is refused with an error wrapping
// text2sql.ErrForbidden.
func RoleFromClaim(claim string, allowed ...string) RoleFunc {
	allowed = slices.Clone(allowed)
	return func(p *identity.Principal) (string, error) {
		r, _ := p.Claims[claim].(string)
		switch {
		case r == "":
			return "", fmt.Errorf("%w: postgres: principal %q has no %q claim to choose a role", text2sql.ErrForbidden, p.ID, claim)
		case len(allowed) > 0 && !slices.Contains(allowed, r):
			return "", fmt.Errorf("%w: postgres: principal %q: role %q (claim %q) is not among the allowed roles", text2sql.ErrForbidden, p.ID, r, claim)
		}
		return r, nil
	}
}

// session is what one call sets in its transaction besides the limits:
// the role and the caller's claims, as set_config(name, value, true)
// pairs. principal is "" for a call without one.
type session struct {
	settings  []string // name, value, name, value, …
	role      string
	principal string
	chosen    bool // the role is RoleFor's choice for the principal
}

// caller is how a call's role and claims are chosen (Options.Role,
// RoleFor, Claims).
type caller struct {
	role    string
	roleFor RoleFunc
	claims  bool
}

// sessionFor chooses the role and claims of a call from the principal ctx
// carries.
func (c caller) sessionFor(ctx context.Context) (session, error) {
	s := session{role: c.role}
	p, ok := identity.PrincipalFrom(ctx)
	if ok && (c.roleFor != nil || c.claims) {
		s.principal = p.ID
		if !utf8.ValidString(p.ID) || strings.IndexByte(p.ID, 0) >= 0 || len(p.ID) > maxClaimsBytes {
			return s, fmt.Errorf("%w: postgres: the principal's id is not text of at most %d bytes", text2sql.ErrForbidden, maxClaimsBytes)
		}
		if c.roleFor != nil {
			r, err := c.roleFor(p)
			if err != nil {
				return s, err
			}
			if r != "" {
				s.role, s.chosen = r, true
			}
		}
	}
	if strings.EqualFold(s.role, "none") {
		// set_config('role', 'none') is RESET ROLE: the login's own rights.
		if s.chosen {
			return s, fmt.Errorf("%w: postgres: principal %q: %q is not a role", text2sql.ErrForbidden, s.principal, s.role)
		}
		return s, fmt.Errorf("%w: postgres: Options.Role %q is not a role", text2sql.ErrInvalidConfig, s.role)
	}
	if s.role != "" {
		s.settings = append(s.settings, "role", s.role)
	}
	if ok && c.claims {
		claims, err := claimsJSON(p, s.role)
		if err != nil {
			return s, err
		}
		s.settings = append(s.settings, "request.jwt.claims", claims, "request.jwt.claim.sub", p.ID)
		if s.role != "" {
			s.settings = append(s.settings, "request.jwt.claim.role", s.role)
		}
		if p.Email != "" {
			s.settings = append(s.settings, "request.jwt.claim.email", p.Email)
		}
	}
	return s, nil
}

// maxClaimsBytes bounds a principal's id and its claims as JSON: a JWT's
// claims take a few hundred bytes; every statement carries them.
const maxClaimsBytes = 64 << 10

// claimsJSON is the principal's claims as PostgREST puts them in
// request.jwt.claims: the claims as given, except that "sub" is
// Principal.ID, "role" the role chosen and "email" Principal.Email when
// they are set, so that every setting names one caller.
func claimsJSON(p *identity.Principal, role string) (string, error) {
	c := make(map[string]any, len(p.Claims)+3)
	for k, v := range p.Claims {
		c[k] = v
	}
	for k, v := range map[string]string{"sub": p.ID, "role": role, "email": p.Email} {
		if v != "" {
			c[k] = v
		}
	}
	b, err := json.Marshal(c)
	switch {
	case err != nil:
		return "", fmt.Errorf("%w: postgres: principal %q: claims are not JSON: %v", text2sql.ErrForbidden, p.ID, err)
	case len(b) > maxClaimsBytes:
		return "", fmt.Errorf("%w: postgres: principal %q: claims are %d bytes as JSON; the limit is %d", text2sql.ErrForbidden, p.ID, len(b), maxClaimsBytes)
	}
	return string(b), nil
}

// query is the statement that applies s: set_config for each setting,
// the names and values as parameters, transaction-local; "" when there is
// nothing to set.
func (s session) query() string {
	if len(s.settings) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("SELECT ")
	for i := 0; i < len(s.settings); i += 2 {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("pg_catalog.set_config($" + strconv.Itoa(i+1) + ", $" + strconv.Itoa(i+2) + ", true)")
	}
	return b.String()
}

// values are the parameters of query.
func (s session) values() [][]byte {
	v := make([][]byte, len(s.settings))
	for i, x := range s.settings {
		v[i] = []byte(x)
	}
	return v
}

// failed is the error of a session that could not be applied: the
// login may not assume the role, or it does not exist. A role RoleFor
// chose for the principal is the principal's refusal (ErrForbidden);
// Options.Role is the host's configuration (ErrInvalidConfig).
func (s session) failed(msg, code string) error {
	switch code {
	case "42501", "22023", "42704": // permission denied to set role; no such role
	default:
		return fmt.Errorf("%w: postgres: principal %q: the caller's claims cannot be set: %s (SQLSTATE %s)", text2sql.ErrForbidden, s.principal, msg, code)
	}
	if s.chosen {
		return fmt.Errorf("%w: postgres: principal %q may not run as role %q: %s (SQLSTATE %s)", text2sql.ErrForbidden, s.principal, s.role, msg, code)
	}
	return fmt.Errorf("%w: postgres: the login may not run as role %q (Options.Role): %s (SQLSTATE %s)", text2sql.ErrInvalidConfig, s.role, msg, code)
}

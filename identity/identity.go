// Package identity carries who a call acts for, the Principal, and the
// caller's own bearer token through a context.Context: from where the
// caller is known (the server's authenticators, an MCP tool call, the
// command line's --as) to where access is decided (an executor running
// each caller's statements under the caller's own database role, the
// audit hook). The pipeline itself never reads them.
package identity

import "context"

// Principal is who a call acts for: the caller a service authenticated
// (package server's Authenticators set it), a tool call's user (MCP), or a name
// given on the command line (text2sql --as NAME). It travels in the
// context (WithPrincipal, PrincipalFrom) from where the caller is known to
// where access is decided: an executor that runs each caller's statements
// under the caller's own database role and row-level-security claims, and
// the audit hook. It never holds a credential.
type Principal struct {
	// ID identifies the caller stably: a static token's name, a Supabase
	// user id, a JWT's subject, "local" without authentication. It is the
	// rate-limit key, the "sub" claim an executor sets when Claims has
	// none, and appears in logs and audit records.
	ID string `json:"id"`
	// Method is how the caller was authenticated: "static", "supabase",
	// "jwt", "none", "cli", or a custom authenticator's own name.
	Method string `json:"method"`
	// Email is the caller's e-mail address when the identity provider
	// gives one, else "".
	Email string `json:"email,omitempty"`
	// Claims are the verified JWT claims (method "jwt"), the user
	// record's role and audience (method "supabase"), or nil. Executors
	// that set row-level-security claims pass them to the database as
	// given; they must not be modified once in a context.
	Claims map[string]any `json:"claims,omitempty"`
}

type principalKey struct{}

// WithPrincipal returns a copy of ctx carrying p; a nil p carries none.
func WithPrincipal(ctx context.Context, p *Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// PrincipalFrom returns the principal ctx carries (WithPrincipal), or
// false when it carries none.
func PrincipalFrom(ctx context.Context) (*Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(*Principal)
	return p, ok && p != nil
}

type bearerKey struct{}

// WithBearerToken returns a copy of ctx carrying the caller's own bearer
// token, for an executor that calls the database's API as the caller
// (executor/postgrest: the database, not the service, then decides what
// the caller reads). The server sets it only when its Config asks
// (ForwardBearerToken). Nothing in this module logs or returns it.
func WithBearerToken(ctx context.Context, token string) context.Context {
	return context.WithValue(ctx, bearerKey{}, token)
}

// BearerTokenFrom returns the token ctx carries (WithBearerToken), or false.
func BearerTokenFrom(ctx context.Context) (string, bool) {
	t, ok := ctx.Value(bearerKey{}).(string)
	return t, ok && t != ""
}

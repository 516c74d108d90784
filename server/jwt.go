package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"github.com/MicahParks/keyfunc/v3"
	"github.com/golang-jwt/jwt/v5"
)

// JWTOptions configure a JWT verifier.
type JWTOptions struct {
	// JWKSURL is where the signing keys are published, e.g.
	// "https://abcd.supabase.co/auth/v1/.well-known/jwks.json" or an
	// identity provider's jwks_uri; required.
	JWKSURL string
	// Issuer, when set, must equal the token's iss claim. Set it.
	Issuer string
	// Audience, when set, must be among the token's aud claim.
	Audience string
	// Algorithms are the accepted signing algorithms; nil means RS256,
	// RS384, RS512, PS256, ES256, ES384 and EdDSA. HMAC algorithms and
	// "none" are never accepted: a public key set cannot verify them.
	Algorithms []string
	// Leeway is the clock skew tolerated on exp, nbf and iat; 0 means
	// 30 seconds.
	Leeway time.Duration
	// RefreshInterval is how often the key set is fetched again; 0 means
	// one hour. A token signed with an unknown key id also triggers a
	// fetch, at most once every five minutes.
	RefreshInterval time.Duration
	// Client fetches the key set; nil means a client with a 10-second
	// timeout.
	Client *http.Client
	// Logger receives key-refresh failures; nil means slog.Default().
	Logger *slog.Logger
}

// JWT authenticates bearer tokens that are JWTs signed with a key of a
// JWKS (JSON Web Key Set). Signature, exp (required), nbf, iat, and the
// configured issuer and audience are checked; the principal is
// {ID: sub, Method: "jwt", Email: the email claim, Claims: every claim}.
// Tokens without a subject are refused.
//
// A JWT keeps the key set fresh in a background goroutine: call Close
// when done with it.
type JWT struct {
	kf     keyfunc.Keyfunc
	parser *jwt.Parser
	cancel context.CancelFunc
}

// NewJWT starts a JWT verifier. The first key-set fetch happens now; when
// it fails, NewJWT still succeeds (every token is refused with 401 until a
// fetch succeeds) and the failure is logged. Errors: a missing or invalid
// JWKSURL, an HMAC or "none" algorithm.
func NewJWT(o JWTOptions) (*JWT, error) {
	u, err := url.Parse(o.JWKSURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, errors.New("server: jwt: JWKSURL must be an absolute http(s) URL")
	}
	algs := o.Algorithms
	if algs == nil {
		algs = []string{"RS256", "RS384", "RS512", "PS256", "ES256", "ES384", "EdDSA"}
	}
	for _, a := range algs {
		switch a {
		case "HS256", "HS384", "HS512", "none", "":
			return nil, fmt.Errorf("server: jwt: algorithm %q cannot be verified with a public key set", a)
		}
	}
	leeway := o.Leeway
	if leeway == 0 {
		leeway = 30 * time.Second
	}
	logger := o.Logger
	if logger == nil {
		logger = slog.Default()
	}
	client := o.Client
	if client == nil {
		client = &http.Client{Timeout: 10 * time.Second}
	}
	ctx, cancel := context.WithCancel(context.Background())
	kf, err := keyfunc.NewDefaultOverrideCtx(ctx, []string{o.JWKSURL}, keyfunc.Override{
		Client:          client,
		RefreshInterval: o.RefreshInterval,
		HTTPTimeout:     client.Timeout,
		RefreshErrorHandlerFunc: func(u string) func(context.Context, error) {
			return func(ctx context.Context, err error) {
				logger.LogAttrs(ctx, slog.LevelError, "jwks refresh failed", slog.String("url", u), slog.String("error", err.Error()))
			}
		},
	})
	if err != nil {
		cancel()
		return nil, fmt.Errorf("server: jwt: %v", err)
	}
	opts := []jwt.ParserOption{
		jwt.WithValidMethods(algs),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithLeeway(leeway),
	}
	if o.Issuer != "" {
		opts = append(opts, jwt.WithIssuer(o.Issuer))
	}
	if o.Audience != "" {
		opts = append(opts, jwt.WithAudience(o.Audience))
	}
	return &JWT{kf: kf, parser: jwt.NewParser(opts...), cancel: cancel}, nil
}

// Close stops the key-refresh goroutine. Authenticate keeps working with
// the keys already fetched.
func (j *JWT) Close() error {
	j.cancel()
	return nil
}

// Authenticate implements Authenticator.
func (j *JWT) Authenticate(r *http.Request) (*Principal, error) {
	tok, ok := BearerToken(r)
	if !ok {
		return nil, fmt.Errorf("%w: no bearer token", ErrUnauthenticated)
	}
	claims := jwt.MapClaims{}
	_, err := j.parser.ParseWithClaims(tok, claims, j.kf.KeyfuncCtx(r.Context()))
	if err != nil {
		// jwt's error texts name the failed check, never the token.
		return nil, fmt.Errorf("%w: %v", ErrUnauthenticated, err)
	}
	sub, err := claims.GetSubject()
	if err != nil || sub == "" {
		return nil, fmt.Errorf("%w: the token has no subject", ErrUnauthenticated)
	}
	p := &Principal{ID: sub, Method: "jwt", Claims: map[string]any(claims)}
	if email, ok := claims["email"].(string); ok {
		p.Email = email
	}
	return p, nil
}

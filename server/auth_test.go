package server

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/text2sql-go/text2sql/internal/syncbuf"
)

const anonKey = "anon-key-SECRET-7f3a9c"

// supabaseStub answers GET /auth/v1/user like a Supabase auth server:
// 200 with a user for "good-…" tokens sent with the anon key, 401 for
// anything else, 500 for the token "crash".
func supabaseStub(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if r.Method != "GET" || r.URL.Path != "/auth/v1/user" || r.Header.Get("apikey") != anonKey {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		tok, _ := BearerToken(r)
		switch tok {
		case "good-token-of-ada":
			json.NewEncoder(w).Encode(map[string]any{"id": "user-ada", "email": "ada@example.org", "role": "authenticated", "aud": "authenticated"})
		case "crash":
			w.WriteHeader(http.StatusInternalServerError)
		default:
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"code":401,"msg":"invalid JWT"}`))
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &calls
}

func TestSupabase(t *testing.T) {
	stub, calls := supabaseStub(t)
	auth, err := NewSupabase(SupabaseOptions{URL: stub.URL + "/", AnonKey: anonKey, CacheTTL: time.Minute})
	require.NoError(t, err)
	defer auth.client.CloseIdleConnections()
	rec := &recorder{}
	srv := testServer(t, Config{Auth: auth, Auditor: rec})
	run := map[string]string{"sql": "SELECT 1"}
	r := do(t, srv, "POST", "/v1/run", "", run)
	assert.False(t, r.status != 401 || r.code(t) != CodeUnauthorized, "no token: %d %s", r.status, r.body)
	assert.Zero(t, calls.Load(), "the auth server was asked without a token")
	r = do(t, srv, "POST", "/v1/run", "bad-token", run)
	assert.False(t, r.status != 401 || r.code(t) != CodeUnauthorized, "bad token: %d %s", r.status, r.body)
	r = do(t, srv, "POST", "/v1/run", "good-token-of-ada", run)
	assert.Equal(t, 200, r.status, "good token: %d %s", r.status, r.body)
	before := calls.Load()
	r = do(t, srv, "POST", "/v1/run", "good-token-of-ada", run)
	assert.Equal(t, 200, r.status, "good token again: %d %s", r.status, r.body)
	assert.Equal(t, before, calls.Load(), "an accepted token was not cached")
	r = do(t, srv, "POST", "/v1/run", "bad-token", run)
	assert.Equal(t, 401, r.status, "bad token again: %d", r.status)
	assert.Equal(t, before+1, calls.Load(), "a rejected token was cached")
	r = do(t, srv, "POST", "/v1/run", "crash", run)
	assert.False(t, r.status != 503 || r.code(t) != CodeAuthUnavailable, "auth server failure: %d %s", r.status, r.body)
	ev := rec.all()
	assert.False(t, len(ev) != 2 || ev[0].Principal != "user-ada" || ev[0].Method != "supabase", "audit %+v", ev)

	// The cache expires.
	now := time.Now()
	auth.now = func() time.Time { return now.Add(2 * time.Minute) }
	before = calls.Load()
	do(t, srv, "POST", "/v1/run", "good-token-of-ada", run)
	assert.Equal(t, before+1, calls.Load(), "an expired cache entry was used")

	// An unreachable auth server refuses everyone.
	down, err := NewSupabase(SupabaseOptions{URL: "http://127.0.0.1:1", AnonKey: anonKey})
	require.NoError(t, err)
	srv2 := testServer(t, Config{Auth: down})
	r = do(t, srv2, "POST", "/v1/run", "good-token-of-ada", run)
	assert.Equal(t, 503, r.status, "unreachable: %d", r.status)
	_, err = NewSupabase(SupabaseOptions{URL: "not a url", AnonKey: "k"})
	assert.Error(t, err, "bad URL accepted")
}

func TestSupabaseCacheBounded(t *testing.T) {
	s, err := NewSupabase(SupabaseOptions{URL: "https://x.supabase.co", AnonKey: "k", MaxCacheEntries: 3})
	require.NoError(t, err)
	for i := 0; i < 10; i++ {
		var k [32]byte
		k[0] = byte(i)
		s.store(k, &Principal{ID: "u"})
	}
	n := len(s.cache)
	assert.LessOrEqual(t, n, 3, "cache holds %d entries", n)
}

// jwks serves a JWK set with one RSA and one EC key.
type jwksServer struct {
	*httptest.Server
	rsaKey *rsa.PrivateKey
	ecKey  *ecdsa.PrivateKey
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func newJWKS(t *testing.T) *jwksServer {
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	ek, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	pad := func(b []byte) []byte { return append(make([]byte, 32-len(b)), b...) }
	set := map[string]any{"keys": []map[string]any{
		{"kty": "RSA", "kid": "rsa1", "use": "sig", "alg": "RS256", "n": b64(rk.N.Bytes()), "e": b64(big.NewInt(int64(rk.E)).Bytes())},
		{"kty": "EC", "kid": "ec1", "use": "sig", "alg": "ES256", "crv": "P-256", "x": b64(pad(ek.X.Bytes())), "y": b64(pad(ek.Y.Bytes()))},
	}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(set)
	}))
	t.Cleanup(srv.Close)
	return &jwksServer{Server: srv, rsaKey: rk, ecKey: ek}
}

func (j *jwksServer) sign(t *testing.T, method jwt.SigningMethod, kid string, key any, claims jwt.MapClaims) string {
	tok := jwt.NewWithClaims(method, claims)
	tok.Header["kid"] = kid
	s, err := tok.SignedString(key)
	require.NoError(t, err)
	return s
}

func TestJWT(t *testing.T) {
	js := newJWKS(t)
	auth, err := NewJWT(JWTOptions{JWKSURL: js.URL, Issuer: "https://issuer.example", Audience: "text2sql"})
	require.NoError(t, err)
	defer auth.Close()
	rec := &recorder{}
	srv := testServer(t, Config{Auth: auth, Auditor: rec})
	now := time.Now()
	claims := func(mod func(jwt.MapClaims)) jwt.MapClaims {
		c := jwt.MapClaims{"sub": "user-42", "iss": "https://issuer.example", "aud": "text2sql", "exp": now.Add(time.Hour).Unix(),
			"iat": now.Unix(), "email": "grace@example.org"}
		if mod != nil {
			mod(c)
		}
		return c
	}
	other, _ := rsa.GenerateKey(rand.Reader, 2048)
	cases := []struct {
		name   string
		token  string
		status int
	}{
		{"valid RS256", js.sign(t, jwt.SigningMethodRS256, "rsa1", js.rsaKey, claims(nil)), 200},
		{"valid ES256", js.sign(t, jwt.SigningMethodES256, "ec1", js.ecKey, claims(nil)), 200},
		{"no token", "", 401},
		{"garbage", "not.a.jwt", 401},
		{"expired", js.sign(t, jwt.SigningMethodRS256, "rsa1", js.rsaKey, claims(func(c jwt.MapClaims) { c["exp"] = now.Add(-time.Hour).Unix() })), 401},
		{"no exp", js.sign(t, jwt.SigningMethodRS256, "rsa1", js.rsaKey, claims(func(c jwt.MapClaims) { delete(c, "exp") })), 401},
		{"wrong issuer", js.sign(t, jwt.SigningMethodRS256, "rsa1", js.rsaKey, claims(func(c jwt.MapClaims) { c["iss"] = "https://evil" })), 401},
		{"wrong audience", js.sign(t, jwt.SigningMethodRS256, "rsa1", js.rsaKey, claims(func(c jwt.MapClaims) { c["aud"] = "other" })), 401},
		{"no subject", js.sign(t, jwt.SigningMethodRS256, "rsa1", js.rsaKey, claims(func(c jwt.MapClaims) { delete(c, "sub") })), 401},
		{"other key", js.sign(t, jwt.SigningMethodRS256, "rsa1", other, claims(nil)), 401},
		{"HMAC with the public key", js.sign(t, jwt.SigningMethodHS256, "rsa1", js.rsaKey.N.Bytes(), claims(nil)), 401},
	}
	for _, c := range cases {
		r := do(t, srv, "POST", "/v1/run", c.token, map[string]string{"sql": "SELECT 1"})
		assert.Equal(t, c.status, r.status, "%s: %d %s, want %d", c.name, r.status, r.body, c.status)
	}
	ev := rec.all()
	assert.False(t, len(ev) != 2 || ev[0].Principal != "user-42" || ev[0].Method != "jwt", "audit %+v", ev)
	_, err = NewJWT(JWTOptions{JWKSURL: js.URL, Algorithms: []string{"HS256"}})
	assert.Error(t, err, "HS256 accepted")
	_, err = NewJWT(JWTOptions{JWKSURL: "ftp://x"})
	assert.Error(t, err, "bad URL accepted")
}

func TestNoAuth(t *testing.T) {
	buf := &syncbuf.Buffer{}
	srv := testServer(t, Config{Auth: NoAuth(), Logger: jsonLogger(buf)})
	r := do(t, srv, "POST", "/v1/run", "", map[string]string{"sql": "SELECT 1"})
	assert.Equal(t, 200, r.status, "no auth: %d %s", r.status, r.body)
	assert.Contains(t, buf.String(), "no-auth mode", "no warning logged for no-auth mode")
}

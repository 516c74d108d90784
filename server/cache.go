package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/identity"
	"github.com/text2sql-go/text2sql/wire"
)

// AnswerStore holds cached answers as opaque bytes under a key. Get and
// Set are called from many goroutines at once. An error means the store
// cannot be reached: the request goes on without the cache.
type AnswerStore interface {
	// Get returns the value under key; ok is false when there is none or
	// it has expired.
	Get(ctx context.Context, key string) (value []byte, ok bool, err error)
	// Set stores value under key for ttl.
	Set(ctx context.Context, key string, value []byte, ttl time.Duration) error
}

// DataVersioner is implemented by executors that can tell when the data
// they read changes: DataVersion returns an opaque token that differs
// after a change (executor/sqlite, executor/postgres, executor/mysql).
// An error means the version cannot be read now.
type DataVersioner interface {
	DataVersion(ctx context.Context) (string, error)
}

// Cache configures the answer cache of /v1/generate, /v1/ask and the MCP
// tools ask and generate_sql: a question asked again is answered from the
// cache, with no model call and no statement run, while the knowledge,
// the schema and the data it was answered on are unchanged.
//
// An entry's key is a SHA-256 over the route (generate or ask), the
// namespace, the caller's rights scope (Scope and Config.RightsVersion,
// as saved answers use it), the question (cacheQuestion: white
// space outside quotes folded, final question marks dropped), Info.Fingerprint
// (knowledge, schema, embedder) and the data version. Only answers that
// are not failed, and no larger than MaxCacheEntryBytes, are cached; an
// entry read back is checked again. The store is trusted as the database
// is: whoever can write it can answer for the service.
type Cache struct {
	// Store holds the entries; nil turns the cache off.
	Store AnswerStore
	// TTL is how long an entry lives; 0 means DefaultCacheTTL. It also
	// bounds how stale an answer can be when DataVersion is nil.
	TTL time.Duration
	// Scope returns the part of the key that says who may share an
	// answer. Nil means PrincipalScope (the whole principal, claims
	// included): the safe choice when the database decides per caller
	// what it reads (roles, row-level security). A host whose every
	// caller reads the same data as one login may use SharedScope.
	Scope func(p *identity.Principal) string
	// Namespace is part of every key: replicas share entries only when
	// their namespaces agree. Put in it what changes an answer that the
	// fingerprint does not cover: the database's identity (two databases
	// with one schema), the model, the pipeline's options (plan, judge,
	// row cap). The CLI does.
	Namespace string
	// DataVersion, when set, is part of every key, so a change to the data
	// misses the entries answered before it; an error skips the cache for
	// that request. Usually the executor's (DataVersioner).
	DataVersion func(ctx context.Context) (string, error)
}

// DefaultCacheTTL is the answer cache's default entry lifetime.
const DefaultCacheTTL = 10 * time.Minute

// MaxCacheEntryBytes bounds one cached answer (its JSON): a larger answer
// is not cached, and a larger entry read back is ignored, so one caller's
// wide results cannot fill a shared store.
const MaxCacheEntryBytes = 256 << 10

// cacheTimeout bounds one cache read or write: a slow store costs a
// request at most this much before it goes on without the cache.
const cacheTimeout = time.Second

// PrincipalScope is the default Cache.Scope: every identity its own
// entries. The scope is the whole principal (method, id, e-mail and every
// claim, as canonical JSON): an executor that lets the database decide
// from a claim (a tenant, a role) sees the same claims as the key, so two
// tokens of one subject with different claims never share an answer.
func PrincipalScope(p *identity.Principal) string {
	if p == nil {
		return ""
	}
	// encoding/json sorts map keys, so equal principals give equal bytes.
	b, err := json.Marshal(p)
	if err != nil {
		// A claim JSON cannot encode: no scope could be trusted to
		// match what the database sees.
		return "unencodable:" + p.Method + ":" + p.ID + ":" + err.Error()
	}
	return string(b)
}

// SharedScope is a Cache.Scope under which every principal shares the
// entries: for a service whose callers all read the same data.
func SharedScope(*identity.Principal) string { return "" }

// cacheQuestion normalises q for the key without changing what it asks:
// runs of ASCII white space outside quotes become one space, and white
// space and question marks at the end go. Quoted text ('Ann  Lee', "x"),
// other punctuation (an exclamation mark can be part of a value) and
// letter case ("Smith" and "smith" are different values) are kept.
func cacheQuestion(q string) string {
	var b strings.Builder
	var quote rune
	space := false
	for _, r := range strings.TrimSpace(q) {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '\'' || r == '"':
			quote = r
		case r == ' ' || r == '\t' || r == '\n' || r == '\r':
			space = true
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	return strings.TrimRight(b.String(), "? \t\n\r")
}

// cacheKey returns the key of route's answer to question for the caller
// in ctx, and false when the cache is off or cannot be used now.
func (s *service) cacheKey(ctx context.Context, route, question string) (string, bool) {
	c := s.cfg.Cache
	if c.Store == nil {
		return "", false
	}
	version := ""
	if c.DataVersion != nil {
		vctx, cancel := context.WithTimeout(ctx, cacheTimeout)
		v, err := c.DataVersion(vctx)
		cancel()
		if err != nil {
			s.log.LogAttrs(ctx, slog.LevelWarn, "data version unavailable; answer cache skipped", slog.String("request_id", requestID(ctx)), slog.String("error", err.Error()))
			return "", false
		}
		version = v
	}
	h := sha256.New()
	for _, part := range []string{route, c.Namespace, s.rightsScope(ctx), cacheQuestion(question), s.cfg.Info.Fingerprint, version} {
		// Length-prefixed, so no two different part lists hash alike.
		h.Write([]byte{byte(len(part) >> 24), byte(len(part) >> 16), byte(len(part) >> 8), byte(len(part))})
		h.Write([]byte(part))
	}
	return "answer:" + hex.EncodeToString(h.Sum(nil)), true
}

// cached returns the cached answer under key, marked Cached, with this
// request's id and no model use of its own.
func (s *service) cached(ctx context.Context, key string) *wire.Answer {
	ctx, cancel := context.WithTimeout(ctx, cacheTimeout)
	defer cancel()
	b, ok, err := s.cfg.Cache.Store.Get(ctx, key)
	if err != nil {
		s.log.LogAttrs(ctx, slog.LevelWarn, "answer cache unavailable", slog.String("request_id", requestID(ctx)), slog.String("error", err.Error()))
		return nil
	}
	if !ok {
		return nil
	}
	var body wire.Answer
	if err := decodeEntry(b, &body); err != nil {
		s.log.LogAttrs(ctx, slog.LevelWarn, "unreadable answer cache entry ignored", slog.String("request_id", requestID(ctx)), slog.String("error", err.Error()))
		return nil
	}
	body.RequestID, body.Cached = requestID(ctx), true
	body.Usage, body.ModelCalls, body.Timings = text2sql.Usage{}, 0, wire.Timings{}
	return &body
}

// remember stores body under key when it is worth reusing.
func (s *service) remember(ctx context.Context, key string, body *wire.Answer) {
	if body == nil || body.Status == text2sql.StatusFailed || body.Error != nil {
		return
	}
	b, err := json.Marshal(body)
	if err != nil || len(b) > MaxCacheEntryBytes {
		// Large results are rare and cheap to recompute next to the
		// memory a shared store would give them.
		return
	}
	ttl := s.cfg.Cache.TTL
	if ttl <= 0 {
		ttl = DefaultCacheTTL
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cacheTimeout)
	defer cancel()
	if err := s.cfg.Cache.Store.Set(ctx, key, b, ttl); err != nil {
		s.log.LogAttrs(ctx, slog.LevelWarn, "answer cache unavailable", slog.String("request_id", requestID(ctx)), slog.String("error", err.Error()))
	}
}

// decodeEntry decodes a cache entry into body and checks it is an answer
// this service could have stored: bounded, with a known status that is
// not failed, and no error.
func decodeEntry(b []byte, body *wire.Answer) error {
	if len(b) > MaxCacheEntryBytes {
		return fmt.Errorf("entry of %d bytes, over %d", len(b), MaxCacheEntryBytes)
	}
	if err := json.Unmarshal(b, body); err != nil {
		return err
	}
	switch body.Status {
	case text2sql.StatusGenerated, text2sql.StatusAnswered, text2sql.StatusVerified, text2sql.StatusUnverified, text2sql.StatusDeclined:
	default:
		return fmt.Errorf("entry with status %q", body.Status)
	}
	if body.Error != nil {
		return errors.New("entry with an error")
	}
	return nil
}

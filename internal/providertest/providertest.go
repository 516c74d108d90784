// Package providertest holds the tests every provider client (llm/…,
// embed/…) must pass against a local HTTP server (internal/httpfake), so
// each client is held to the same contract: its time limit (Timeout), how
// it reports failures (Errors), honours a server's wait (RetryAfter),
// keeps its key out of errors (KeyNeverInErrors) and serves concurrent
// calls (Concurrent); plus the pieces the clients' own tests share
// (Sleeps, Vector, Conversation), and the conformance kits run against fakes
// (ModelKit, EmbedderKit).
package providertest

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/httpfake"
	"github.com/text2sql-go/text2sql/internal/retry"
)

// Client is the provider client under test, as the shared tests drive it.
type Client struct {
	Provider string // its ModelError.Provider, e.g. "gemini"
	Key      string // the API key it is built with, which no error may show
	// New builds a client against srv (its key, srv's URL, a retry base
	// delay of 1 ms, and s) and returns one call of it: a completion of a
	// short message, or an embedding of one text.
	New func(t *testing.T, srv *httpfake.Server, s Setup) func(ctx context.Context) error
}

// Setup is what a shared test sets on the client it builds.
type Setup struct {
	Timeout    time.Duration // Options.Timeout; 0: the client's default
	MaxRetries int           // Options.MaxRetries; 0: the default, negative: none
	// Sleep is the retry loop's wait (retry.Policy.Sleep); nil: real waits.
	Sleep func(ctx context.Context, d time.Duration) error
	// Query, when set, is added to the base URL as "?"+Query, e.g.
	// "key=…", to show that URLs in errors are scrubbed.
	Query string
}

// Sleeps records the waits of a retry loop instead of sleeping. It is
// safe for concurrent use.
type Sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

// Record makes p record its waits in a new Sleeps instead of sleeping.
func Record(p *retry.Policy) *Sleeps {
	s := &Sleeps{}
	p.Sleep = s.Sleep
	return s
}

// Sleep records d and returns at once: ctx.Err(), as a real wait would
// when ctx has ended.
func (s *Sleeps) Sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	return ctx.Err()
}

// Waits returns the waits recorded so far, oldest first.
func (s *Sleeps) Waits() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.d...)
}

// noKey fails t when err's message shows key.
func noKey(t testing.TB, key string, err error) {
	t.Helper()
	if err != nil {
		assert.NotContains(t, err.Error(), key, "API key leaked in error")
	}
}

// URL is base with s.Query added, when set.
func (s Setup) URL(base string) string {
	if s.Query == "" {
		return base
	}
	return base + "?" + s.Query
}

// Conversation is a request with every part a model client maps: a system
// prompt, a user question, the assistant's answer and a follow-up
// question (in that order), schema, temperature and maxTokens.
func Conversation(schema json.RawMessage, temperature float64, maxTokens int) text2sql.ModelRequest {
	return text2sql.ModelRequest{
		System: "You write SQLite.",
		Messages: []text2sql.Message{
			{Role: text2sql.RoleUser, Content: "How many students?"},
			{Role: text2sql.RoleAssistant, Content: "SELECT count(*) FROM student"},
			{Role: text2sql.RoleUser, Content: "Only active ones."},
		},
		Schema:      schema,
		Temperature: &temperature,
		MaxTokens:   maxTokens,
	}
}

// Package llmtest provides a scripted text2sql.Model for tests: it answers
// with replies fixed in advance (New) or computed from the request (Func),
// makes no network call, and records every request so a test can assert
// what its pipeline sent.
//
// A *Model is safe for concurrent use. With concurrent callers, replies
// are handed out in the order the calls reach the model.
package llmtest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"unicode/utf8"

	"github.com/text2sql-go/text2sql"
)

// ModelName is the ModelResponse.Model of every scripted answer.
const ModelName = "scripted"

// ErrExhausted is returned by a Model from New, without RepeatLast, when it
// is called more times than it has replies (or has none). It wraps
// text2sql.ErrModel, so errors.Is(err, text2sql.ErrModel) holds too.
var ErrExhausted = fmt.Errorf("llmtest: no more scripted replies: %w", text2sql.ErrModel)

// Model is a scripted text2sql.Model.
type Model struct {
	mu      sync.Mutex
	replies []string
	fn      func(req text2sql.ModelRequest) (string, error)
	repeat  bool
	next    int
	calls   []text2sql.ModelRequest
}

var _ text2sql.Model = (*Model)(nil)

// New returns a Model whose n-th call answers replies[n-1]. After the last
// reply, calls fail with ErrExhausted, unless RepeatLast was called, in
// which case they keep answering the last reply.
func New(replies ...string) *Model {
	return &Model{replies: slices.Clone(replies)}
}

// Func returns a Model that answers with fn(req): its text, or its error
// returned as is. fn may be called from several goroutines at once if the
// Model is.
func Func(fn func(req text2sql.ModelRequest) (string, error)) *Model {
	return &Model{fn: fn}
}

// RepeatLast makes a Model from New answer its last reply forever once the
// others are used, instead of failing with ErrExhausted. It returns m, for
// chaining: llmtest.New("a", "b").RepeatLast(). It has no effect on a
// Model from Func or on one with no replies.
func (m *Model) RepeatLast() *Model {
	m.mu.Lock()
	m.repeat = true
	m.mu.Unlock()
	return m
}

// Complete records req and returns the next reply.
//
// The response's Model is "scripted" and its Usage is a deterministic
// estimate: InputTokens is ceil(r/4) where r is the number of runes of
// req.System plus those of every message content, OutputTokens is
// ceil(r/4) of the reply.
//
// Errors: ctx.Err() when ctx has already ended (the call is then not
// recorded and uses no reply); ErrExhausted when the replies are used up;
// the error of a Func's function, as is.
func (m *Model) Complete(ctx context.Context, req text2sql.ModelRequest) (*text2sql.ModelResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	m.calls = append(m.calls, clone(req))
	fn := m.fn
	var reply string
	var err error
	if fn == nil {
		switch {
		case m.next < len(m.replies):
			reply = m.replies[m.next]
			m.next++
		case m.repeat && len(m.replies) > 0:
			reply = m.replies[len(m.replies)-1]
		default:
			err = ErrExhausted
		}
	}
	m.mu.Unlock()
	if fn != nil {
		reply, err = fn(clone(req))
	}
	if err != nil {
		return nil, err
	}
	return &text2sql.ModelResponse{
		Text:  reply,
		Model: ModelName,
		Usage: text2sql.Usage{InputTokens: inputTokens(req), OutputTokens: tokens(utf8.RuneCountInString(reply))},
	}, nil
}

// Calls returns a copy of every request received, oldest first.
func (m *Model) Calls() []text2sql.ModelRequest {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]text2sql.ModelRequest, len(m.calls))
	for i, r := range m.calls {
		out[i] = clone(r)
	}
	return out
}

// CallCount returns the number of requests received.
func (m *Model) CallCount() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.calls)
}

func tokens(runes int) int { return (runes + 3) / 4 }

func inputTokens(req text2sql.ModelRequest) int {
	n := utf8.RuneCountInString(req.System)
	for _, msg := range req.Messages {
		n += utf8.RuneCountInString(msg.Content)
	}
	return tokens(n)
}

// clone copies the slices of req so later changes by either side do not
// leak into the other.
func clone(req text2sql.ModelRequest) text2sql.ModelRequest {
	req.Messages = slices.Clone(req.Messages)
	if req.Schema != nil {
		req.Schema = json.RawMessage(slices.Clone([]byte(req.Schema)))
	}
	if req.Temperature != nil {
		t := *req.Temperature
		req.Temperature = &t
	}
	return req
}

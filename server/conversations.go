package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"sync"
	"time"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/conversation"
)

// Conversations configures the conversation routes: POST /v1/conversations
// starts one, POST /v1/conversations/{id}/messages answers a message in
// it. Conversations live in this process's memory, owned by the
// principal that started them (another principal's ID is not found).
type Conversations struct {
	// Options are every conversation's (the model for routing and
	// rewriting, the window); the pipeline is Config.Pipeline.
	Options conversation.Options
	// Max bounds the conversations kept (default 1,000); past it the one
	// idle longest is dropped.
	Max int
	// IdleTimeout drops a conversation unused this long (default 1 h).
	IdleTimeout time.Duration
}

// ConversationBody is the body of POST /v1/conversations.
type ConversationBody struct {
	RequestID      string `json:"request_id"`
	ConversationID string `json:"conversation_id"`
}

// MessageRequest is the body of POST /v1/conversations/{id}/messages.
type MessageRequest struct {
	Message string `json:"message"`
}

// ReplyBody is a conversation's reply: the route taken ("data",
// "about_last", "small_talk", "out_of_scope"), the standalone question a
// follow-up became, the reply in words, the SQL, the steps of the
// decision, and for "data" the pipeline's answer.
type ReplyBody struct {
	RequestID      string      `json:"request_id"`
	ConversationID string      `json:"conversation_id"`
	Message        string      `json:"message"`
	Route          string      `json:"route"`
	Standalone     string      `json:"standalone,omitempty"`
	Text           string      `json:"text"`
	SQL            string      `json:"sql,omitempty"`
	Steps          []StepBody  `json:"steps"`
	Answer         *AnswerBody `json:"answer,omitempty"`
}

// StepBody is one decision of a reply.
type StepBody struct {
	Name    string `json:"name"`
	Outcome string `json:"outcome"`
	Saved   string `json:"saved,omitempty"`
}

// session is one conversation and its owner.
type session struct {
	owner string
	conv  *conversation.Conversation
	used  time.Time
}

// sessions are the live conversations.
type sessions struct {
	mu   sync.Mutex
	byID map[string]*session
}

func (s *service) conversationLimits() (int, time.Duration) {
	max, idle := s.cfg.Conversations.Max, s.cfg.Conversations.IdleTimeout
	if max <= 0 {
		max = 1000
	}
	if idle <= 0 {
		idle = time.Hour
	}
	return max, idle
}

func principalID(ctx context.Context) string {
	if p, ok := text2sql.PrincipalFrom(ctx); ok {
		return p.ID
	}
	return ""
}

// startConversation creates a conversation for the caller.
func (s *service) startConversation(ctx context.Context) (*ConversationBody, *apiError) {
	if s.cfg.Conversations == nil {
		return nil, &apiError{code: CodeNotConfigured, msg: "conversations are not enabled on this service"}
	}
	// The service's ask path, so that every statement is audited as on
	// /v1/ask.
	asker := askerFunc(func(ctx context.Context, q string) (*text2sql.Answer, error) {
		return s.runAsk(ctx, "POST /v1/conversations/{id}/messages", q)
	})
	conv, err := conversation.New(asker, s.cfg.Conversations.Options)
	if err != nil {
		return nil, &apiError{code: CodeInternal, msg: "the conversation could not be started"}
	}
	var b [16]byte
	rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	max, idle := s.conversationLimits()
	now := time.Now()
	s.convs.mu.Lock()
	defer s.convs.mu.Unlock()
	if s.convs.byID == nil {
		s.convs.byID = map[string]*session{}
	}
	var oldest string
	for k, v := range s.convs.byID {
		if now.Sub(v.used) > idle {
			delete(s.convs.byID, k)
		} else if oldest == "" || v.used.Before(s.convs.byID[oldest].used) {
			oldest = k
		}
	}
	if len(s.convs.byID) >= max {
		delete(s.convs.byID, oldest)
	}
	s.convs.byID[id] = &session{owner: principalID(ctx), conv: conv, used: now}
	return &ConversationBody{RequestID: requestID(ctx), ConversationID: id}, nil
}

// message answers one message of the caller's conversation id.
func (s *service) message(ctx context.Context, id string, req *MessageRequest) (*ReplyBody, *apiError) {
	if s.cfg.Conversations == nil {
		return nil, &apiError{code: CodeNotConfigured, msg: "conversations are not enabled on this service"}
	}
	if aerr := checkQuestion(req.Message); aerr != nil {
		return nil, aerr
	}
	_, idle := s.conversationLimits()
	s.convs.mu.Lock()
	sess := s.convs.byID[id]
	if sess != nil && (sess.owner != principalID(ctx) || time.Since(sess.used) > idle) {
		sess = nil // another principal's, or expired: not found either way
	}
	if sess != nil {
		sess.used = time.Now()
	}
	s.convs.mu.Unlock()
	if sess == nil {
		return nil, &apiError{code: CodeNotFound, msg: "no such conversation"}
	}
	r, err := sess.conv.Ask(ctx, req.Message)
	if r == nil {
		_, aerr := s.answer(ctx, nil, err)
		return nil, aerr
	}
	out := &ReplyBody{RequestID: requestID(ctx), ConversationID: id, Message: r.Message, Route: string(r.Route),
		Standalone: r.Standalone, Text: r.Text, SQL: r.SQL, Steps: []StepBody{}}
	for _, st := range r.Steps {
		out.Steps = append(out.Steps, StepBody{Name: st.Name, Outcome: st.Outcome, Saved: st.Saved})
	}
	if r.Answer != nil {
		b, aerr := s.answer(ctx, r.Answer, err)
		if aerr != nil {
			return nil, aerr
		}
		out.Answer = b
	}
	return out, nil
}

// askerFunc adapts a function to conversation.Asker.
type askerFunc func(ctx context.Context, q string) (*text2sql.Answer, error)

func (f askerFunc) Ask(ctx context.Context, q string) (*text2sql.Answer, error) { return f(ctx, q) }

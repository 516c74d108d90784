package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"sync"
	"time"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/conversation"
)

// Conversations configures the conversation routes: POST /v1/conversations
// starts one, POST /v1/conversations/{id}/messages answers a message in
// it. Conversations are owned by the principal that started them (another
// principal's ID is not found); they live in this process's memory and,
// with a Store, are saved after every message, so they survive a restart
// and move between replicas that share the store.
type Conversations struct {
	// Store keeps the conversations; nil keeps them in memory only.
	Store conversation.Store
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
	// saved is the Updated time of the stored state conv holds: a newer
	// one in the store (another replica answered) replaces conv.
	saved time.Time
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
	conv, err := conversation.New(s.asker(), s.cfg.Conversations.Options)
	if err != nil {
		return nil, &apiError{code: CodeInternal, msg: "the conversation could not be started"}
	}
	var b [16]byte
	rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	now := time.Now()
	sess := &session{owner: principalID(ctx), conv: conv, used: now, saved: now}
	if st := s.cfg.Conversations.Store; st != nil {
		if err := st.Save(ctx, conversation.Saved{ID: id, Owner: sess.owner, Updated: now}); err != nil {
			return nil, s.storeFailed(ctx, err)
		}
	}
	s.keep(id, sess)
	return &ConversationBody{RequestID: requestID(ctx), ConversationID: id}, nil
}

// keep puts sess in memory under id (or returns the one already there, so
// concurrent requests share one copy), first dropping conversations idle
// past the timeout and, at the bound, the one idle longest.
func (s *service) keep(id string, sess *session) *session {
	max, idle := s.conversationLimits()
	s.convs.mu.Lock()
	defer s.convs.mu.Unlock()
	if s.convs.byID == nil {
		s.convs.byID = map[string]*session{}
	}
	if live := s.convs.byID[id]; live != nil && !sess.saved.After(live.saved) {
		return live
	}
	var oldest string
	for k, v := range s.convs.byID {
		if time.Since(v.used) > idle {
			delete(s.convs.byID, k)
		} else if oldest == "" || v.used.Before(s.convs.byID[oldest].used) {
			oldest = k
		}
	}
	if _, replacing := s.convs.byID[id]; !replacing && len(s.convs.byID) >= max {
		delete(s.convs.byID, oldest)
	}
	s.convs.byID[id] = sess
	return sess
}

// storeFailed logs a conversation store's error and says so.
func (s *service) storeFailed(ctx context.Context, err error) *apiError {
	s.log.LogAttrs(ctx, slog.LevelError, "conversation store failed", slog.String("request_id", requestID(ctx)), slog.String("error", err.Error()))
	return &apiError{code: CodeInternal, msg: "the conversation could not be stored"}
}

// asker is the service's ask path, so that every statement a
// conversation runs is audited as on /v1/ask.
func (s *service) asker() conversation.Asker {
	return askerFunc(func(ctx context.Context, q string) (*text2sql.Answer, error) {
		return s.runAsk(ctx, "POST /v1/conversations/{id}/messages", q)
	})
}

// session returns the caller's conversation id: from memory, else from
// the store; nil when it does not exist, is another principal's or has
// expired.
func (s *service) session(ctx context.Context, id string) (*session, *apiError) {
	_, idle := s.conversationLimits()
	s.convs.mu.Lock()
	sess := s.convs.byID[id]
	if sess != nil && time.Since(sess.used) > idle {
		delete(s.convs.byID, id)
		sess = nil
	}
	s.convs.mu.Unlock()
	if st := s.cfg.Conversations.Store; st != nil {
		// The store is the truth: another replica may have answered
		// since this one's copy was saved.
		saved, err := st.Load(ctx, id)
		if err != nil {
			return nil, s.storeFailed(ctx, err)
		}
		if saved != nil && (sess == nil || saved.Updated.After(sess.saved)) {
			conv, err := conversation.Restore(s.asker(), s.cfg.Conversations.Options, saved.State)
			if err != nil {
				return nil, &apiError{code: CodeInternal, msg: "the conversation could not be restored"}
			}
			sess = s.keep(id, &session{owner: saved.Owner, conv: conv, used: time.Now(), saved: saved.Updated})
		}
	}
	if sess == nil || sess.owner != principalID(ctx) {
		return nil, nil // another principal's is not found either
	}
	s.convs.mu.Lock()
	sess.used = time.Now()
	s.convs.mu.Unlock()
	return sess, nil
}

// message answers one message of the caller's conversation id.
func (s *service) message(ctx context.Context, id string, req *MessageRequest) (*ReplyBody, *apiError) {
	if s.cfg.Conversations == nil {
		return nil, &apiError{code: CodeNotConfigured, msg: "conversations are not enabled on this service"}
	}
	if aerr := checkQuestion(req.Message); aerr != nil {
		return nil, aerr
	}
	sess, aerr := s.session(ctx, id)
	if aerr != nil {
		return nil, aerr
	}
	if sess == nil {
		return nil, &apiError{code: CodeNotFound, msg: "no such conversation"}
	}
	r, err := sess.conv.Ask(ctx, req.Message)
	if r == nil {
		_, aerr := s.answer(ctx, nil, err)
		return nil, aerr
	}
	if st := s.cfg.Conversations.Store; st != nil {
		now := time.Now()
		if serr := st.Save(ctx, conversation.Saved{ID: id, Owner: sess.owner, State: sess.conv.State(), Updated: now}); serr != nil {
			return nil, s.storeFailed(ctx, serr)
		}
		s.convs.mu.Lock()
		if now.After(sess.saved) {
			sess.saved = now
		}
		s.convs.mu.Unlock()
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

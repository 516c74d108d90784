package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/conversation"
	"github.com/text2sql-go/text2sql/identity"
	"github.com/text2sql-go/text2sql/internal/defaults"
	"github.com/text2sql-go/text2sql/wire"
)

// Conversations configures the conversation routes: POST /v1/conversations
// starts one, GET /v1/conversations lists the caller's, POST
// /v1/conversations/{id}/messages answers a message in one, DELETE
// /v1/conversations/{id} deletes one, POST /v1/conversations/{id}/saved
// saves its last answer; GET /v1/saved lists the caller's saved answers
// and DELETE /v1/saved/{id} deletes one. Conversations and saved answers
// are owned by the principal that made them (another principal's ID is
// not found); conversations live in this process's memory and, with a
// Store, are saved after every message, so they survive a restart and
// move between replicas that share the store.
//
// A question asked again whose saved answer (the caller's own) is still
// valid is answered from it: from its rows when DataVersion says the data
// is unchanged, else by running its SQL again (through the guard,
// audited); no model call either way.
type Conversations struct {
	// Store keeps the conversations; nil keeps them in memory only.
	Store conversation.Store
	// Options are every conversation's (the model for routing and
	// rewriting, the window); the pipeline is Config.Pipeline.
	Options conversation.Options
	// Max bounds the conversations kept in memory (default 1,000), a
	// backstop behind MaxPerPrincipal; past it the one idle longest is
	// dropped.
	Max int
	// MaxPerPrincipal bounds one principal's conversations kept in memory
	// (default DefaultConversationQuota); past it that principal's own
	// idle longest is dropped, never another's. A Store bounds what it
	// keeps on its own (conversation/sqlite: MaxConversationsPerOwner).
	MaxPerPrincipal int
	// IdleTimeout drops a conversation unused this long (default 1 h).
	IdleTimeout time.Duration
	// Answers keeps the saved answers; nil: the Store, when it is a
	// conversation.AnswerStore (conversation/sqlite is). Neither: the
	// saved-answer routes answer 503 not_configured.
	Answers conversation.AnswerStore
	// DataVersion is the data's current version (usually the executor's,
	// DataVersioner); nil: a saved answer's SQL always runs again.
	DataVersion func(ctx context.Context) (string, error)
}

// MaxListed bounds the conversations GET /v1/conversations returns, the
// most recently used first.
const MaxListed = 100

// ConversationBody is the body of POST /v1/conversations.
type ConversationBody struct {
	RequestID      string `json:"request_id"`
	ConversationID string `json:"conversation_id"`
}

// MessageRequest is the body of POST /v1/conversations/{id}/messages.
type MessageRequest struct {
	Message string `json:"message"`
}

// SaveRequest is the body of POST /v1/conversations/{id}/saved: an
// optional note (at most conversation.MaxNoteBytes).
type SaveRequest struct {
	Note string `json:"note"`
}

// ConversationInfo is one conversation of GET /v1/conversations: its
// id, when it last changed, its turns in the window and the last message.
type ConversationInfo struct {
	ConversationID string    `json:"conversation_id"`
	Updated        time.Time `json:"updated"`
	Turns          int       `json:"turns"`
	LastMessage    string    `json:"last_message,omitempty"`
}

// ConversationList is the body of GET /v1/conversations.
type ConversationList struct {
	RequestID     string             `json:"request_id"`
	Conversations []ConversationInfo `json:"conversations"`
}

// SavedAnswerBody is a saved answer: the question, its SQL, the first
// rows of its result (conversation.MaxSavedRows at most) and its row
// count, the result in words, the note, and when it was saved.
type SavedAnswerBody struct {
	ID       string    `json:"id"`
	Question string    `json:"question"`
	SQL      string    `json:"sql"`
	Dialect  string    `json:"dialect,omitempty"`
	Columns  []string  `json:"columns"`
	Rows     [][]any   `json:"rows"`
	RowCount int       `json:"row_count"`
	Words    string    `json:"words,omitempty"`
	Note     string    `json:"note,omitempty"`
	Created  time.Time `json:"created"`
	Updated  time.Time `json:"updated"`
}

// SavedBody is the body of POST /v1/conversations/{id}/saved.
type SavedBody struct {
	RequestID string          `json:"request_id"`
	Saved     SavedAnswerBody `json:"saved"`
}

// SavedList is the body of GET /v1/saved: the caller's saved answers,
// newest first.
type SavedList struct {
	RequestID string            `json:"request_id"`
	Saved     []SavedAnswerBody `json:"saved"`
}

// DeletedBody is the body of a DELETE.
type DeletedBody struct {
	RequestID string `json:"request_id"`
	Deleted   bool   `json:"deleted"`
}

// ReplyBody is a conversation's reply: the route taken ("data",
// "about_last", "small_talk", "out_of_scope"), the standalone question a
// follow-up became, the reply in words, the SQL, the steps of the
// decision, and for "data" the pipeline's answer.
type ReplyBody struct {
	RequestID      string       `json:"request_id"`
	ConversationID string       `json:"conversation_id"`
	Message        string       `json:"message"`
	Route          string       `json:"route"`
	Standalone     string       `json:"standalone,omitempty"`
	Text           string       `json:"text"`
	SQL            string       `json:"sql,omitempty"`
	Steps          []StepBody   `json:"steps"`
	Answer         *wire.Answer `json:"answer,omitempty"`
	// SavedAnswer is the ID of the caller's saved answer the reply came
	// from; Related are the caller's saved answers of similar questions.
	SavedAnswer string                 `json:"saved_answer,omitempty"`
	Related     []conversation.Related `json:"related,omitempty"`
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
	// info is what GET /v1/conversations says of it (read without
	// waiting for a message being answered).
	info ConversationInfo
}

// sessions are the live conversations.
type sessions struct {
	mu   sync.Mutex
	byID map[string]*session
}

func (s *service) conversationLimits() (int, time.Duration) {
	max, idle := s.cfg.Conversations.Max, s.cfg.Conversations.IdleTimeout
	defaults.Positive(&max, 1000)
	defaults.Positive(&idle, time.Hour)
	return max, idle
}

// DefaultConversationQuota is Conversations.MaxPerPrincipal's default:
// the conversations GET /v1/conversations lists.
const DefaultConversationQuota = MaxListed

// principalID is the owner key of the caller's conversations and saved
// answers: how the caller was authenticated and its id ("static:alice",
// "jwt:alice"), so that two authenticators' callers of the same name
// never share them; "" without a principal.
func principalID(ctx context.Context) string {
	if p, ok := identity.PrincipalFrom(ctx); ok {
		return p.Method + ":" + p.ID
	}
	return ""
}

// startConversation creates a conversation for the caller.
func (s *service) startConversation(ctx context.Context) (*ConversationBody, *apiError) {
	if s.cfg.Conversations == nil {
		return nil, &apiError{code: CodeNotConfigured, msg: "conversations are not enabled on this service"}
	}
	owner := principalID(ctx)
	conv, err := conversation.New(s.asker(), s.conversationOptions(owner))
	if err != nil {
		return nil, &apiError{code: CodeInternal, msg: "the conversation could not be started"}
	}
	var b [16]byte
	rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	now := time.Now()
	sess := &session{owner: owner, conv: conv, used: now, saved: now}
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
// past the timeout, at the owner's quota the owner's idle longest and, at
// the bound, the one idle longest of all.
func (s *service) keep(id string, sess *session) *session {
	max, idle := s.conversationLimits()
	quota := s.cfg.Conversations.MaxPerPrincipal
	defaults.Positive(&quota, DefaultConversationQuota)
	s.convs.mu.Lock()
	defer s.convs.mu.Unlock()
	if s.convs.byID == nil {
		s.convs.byID = map[string]*session{}
	}
	if live := s.convs.byID[id]; live != nil && !sess.saved.After(live.saved) {
		return live
	}
	var oldest, ownOldest string
	own := 0
	for k, v := range s.convs.byID {
		switch {
		case time.Since(v.used) > idle:
			delete(s.convs.byID, k)
			continue
		case oldest == "" || v.used.Before(s.convs.byID[oldest].used):
			oldest = k
		}
		if v.owner == sess.owner {
			own++
			if ownOldest == "" || v.used.Before(s.convs.byID[ownOldest].used) {
				ownOldest = k
			}
		}
	}
	if _, replacing := s.convs.byID[id]; !replacing {
		switch {
		case own >= quota:
			delete(s.convs.byID, ownOldest)
		case len(s.convs.byID) >= max:
			delete(s.convs.byID, oldest)
		}
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
// the store; a CodeNotFound error when it does not exist, is another
// principal's or has expired.
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
			conv, err := conversation.Restore(s.asker(), s.conversationOptions(saved.Owner), saved.State)
			if err != nil {
				return nil, &apiError{code: CodeInternal, msg: "the conversation could not be restored"}
			}
			sess = s.keep(id, &session{owner: saved.Owner, conv: conv, used: time.Now(), saved: saved.Updated,
				info: conversationInfo(id, saved.Updated, saved.State.Turns)})
		}
	}
	if sess == nil || sess.owner != principalID(ctx) {
		// Another principal's is not found either.
		return nil, &apiError{code: CodeNotFound, msg: "no such conversation"}
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
		if aerr.code == CodeEmptyQuestion {
			aerr.msg = `the message is empty: send {"message": "…"}`
		}
		return nil, aerr
	}
	sess, aerr := s.session(ctx, id)
	if aerr != nil {
		return nil, aerr
	}
	release, aerr := s.askSlot()
	if aerr != nil {
		return nil, aerr
	}
	defer release()
	r, err := sess.conv.Ask(ctx, req.Message)
	if r == nil || (err != nil && r.Answer == nil) {
		// No answer to show: the pipeline or a part of the service
		// failed (the database, the audit log).
		_, aerr := s.answer(ctx, nil, err)
		return nil, aerr
	}
	turns := len(sess.conv.Turns())
	s.convs.mu.Lock()
	sess.info.Turns, sess.info.LastMessage = turns, r.Message
	s.convs.mu.Unlock()
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
		Standalone: r.Standalone, Text: r.Text, SQL: r.SQL, Steps: []StepBody{}, SavedAnswer: r.SavedAnswer, Related: r.Related}
	for _, st := range r.Steps {
		out.Steps = append(out.Steps, StepBody{Name: st.Name, Outcome: st.Outcome, Saved: st.Saved})
	}
	if r.Answer != nil {
		b, aerr := s.answer(ctx, r.Answer, err)
		if aerr != nil {
			return nil, aerr
		}
		if r.Replayed {
			// A saved answer's rows, delivered without a statement: audited
			// as a cached delivery, and withheld when that cannot be written.
			if err := s.recordDelivery(ctx, "POST /v1/conversations/{id}/messages", r.Standalone, "saved", b); err != nil {
				return nil, s.failed(ctx, err)
			}
		}
		out.Answer = b
	}
	return out, nil
}

// noSavedAnswers is the message of the saved-answer routes without
// answers().
const noSavedAnswers = "saved answers are not enabled on this service: its conversations need a store that keeps them (Conversations.Store; text2sql serve --conversations-db FILE)"

// answers is the saved-answer store, or nil.
func (s *service) answers() conversation.AnswerStore {
	c := s.cfg.Conversations
	if c == nil {
		return nil
	}
	if c.Answers != nil {
		return c.Answers
	}
	a, _ := c.Store.(conversation.AnswerStore)
	return a
}

// conversationOptions are the options of owner's conversations: the
// configured ones, with the owner's saved answers.
func (s *service) conversationOptions(owner string) conversation.Options {
	opts := s.cfg.Conversations.Options
	if st := s.answers(); st != nil {
		opts.Memory = &conversation.Memory{Store: st, Owner: owner, Dialect: text2sql.Dialect(s.cfg.Info.Dialect),
			DataVersion: s.answerVersion, Execute: s.rerun}
	}
	return opts
}

// answerVersion is the version under which a saved answer's rows are
// reused: the data's and the caller's rights scope (rightsScope, as the
// answer cache keys its entries), so a caller whose rights changed — a
// claim, the role the --run-as map gives it, its --login-map login — gets
// the saved SQL run again under its current rights, not rows read under
// its old ones. Unknown ("") without a data version.
func (s *service) answerVersion(ctx context.Context) (string, error) {
	if s.cfg.Conversations.DataVersion == nil {
		return "", nil
	}
	v, err := s.cfg.Conversations.DataVersion(ctx)
	if err != nil || v == "" {
		return "", err
	}
	return v + ";rights=" + s.rightsScope(ctx)[:16], nil
}

// rerun runs a saved answer's SQL again, audited as a conversation's
// statement: not at all while a fail-closed auditor cannot be reached,
// and without its rows when the record cannot be written.
func (s *service) rerun(ctx context.Context, sql string) (*text2sql.Result, error) {
	if err := s.auditReady(ctx); err != nil {
		return nil, err
	}
	res, err := s.cfg.Pipeline.Execute(ctx, sql)
	if err == nil && res.Error == nil {
		if err := s.record(ctx, "POST /v1/conversations/{id}/messages", "", "", sql, res); err != nil {
			return nil, err
		}
	}
	return res, err
}

// listConversations lists the caller's conversations: those in the store
// and those in memory, most recently used first, at most MaxListed.
func (s *service) listConversations(ctx context.Context) (*ConversationList, *apiError) {
	if s.cfg.Conversations == nil {
		return nil, &apiError{code: CodeNotConfigured, msg: "conversations are not enabled on this service"}
	}
	owner := principalID(ctx)
	_, idle := s.conversationLimits()
	byID := map[string]ConversationInfo{}
	s.convs.mu.Lock()
	for id, sess := range s.convs.byID {
		if sess.owner == owner && time.Since(sess.used) <= idle {
			byID[id] = ConversationInfo{ConversationID: id, Updated: sess.used, Turns: sess.info.Turns, LastMessage: sess.info.LastMessage}
		}
	}
	s.convs.mu.Unlock()
	if st := s.cfg.Conversations.Store; st != nil {
		saved, err := st.List(ctx, owner, MaxListed)
		if err != nil {
			return nil, s.storeFailed(ctx, err)
		}
		for _, c := range saved {
			if old, ok := byID[c.ID]; !ok || c.Updated.After(old.Updated) {
				byID[c.ID] = conversationInfo(c.ID, c.Updated, c.State.Turns)
			}
		}
	}
	out := &ConversationList{RequestID: requestID(ctx), Conversations: []ConversationInfo{}}
	for _, c := range byID {
		out.Conversations = append(out.Conversations, c)
	}
	slices.SortFunc(out.Conversations, func(a, b ConversationInfo) int { return b.Updated.Compare(a.Updated) })
	if len(out.Conversations) > MaxListed {
		out.Conversations = out.Conversations[:MaxListed]
	}
	return out, nil
}

func conversationInfo(id string, updated time.Time, turns []conversation.Turn) ConversationInfo {
	c := ConversationInfo{ConversationID: id, Updated: updated, Turns: len(turns)}
	if len(turns) > 0 {
		c.LastMessage = turns[len(turns)-1].Message
	}
	return c
}

// deleteConversation deletes the caller's conversation id.
func (s *service) deleteConversation(ctx context.Context, id string) (*DeletedBody, *apiError) {
	if s.cfg.Conversations == nil {
		return nil, &apiError{code: CodeNotConfigured, msg: "conversations are not enabled on this service"}
	}
	if _, aerr := s.session(ctx, id); aerr != nil {
		return nil, aerr
	}
	s.convs.mu.Lock()
	delete(s.convs.byID, id)
	s.convs.mu.Unlock()
	if st := s.cfg.Conversations.Store; st != nil {
		if _, err := st.Delete(ctx, id); err != nil {
			return nil, s.storeFailed(ctx, err)
		}
	}
	return &DeletedBody{RequestID: requestID(ctx), Deleted: true}, nil
}

// saveAnswer saves the last answer of the caller's conversation id.
func (s *service) saveAnswer(ctx context.Context, id string, req *SaveRequest) (*SavedBody, *apiError) {
	if s.answers() == nil {
		return nil, &apiError{code: CodeNotConfigured, msg: noSavedAnswers}
	}
	sess, aerr := s.session(ctx, id)
	if aerr != nil {
		return nil, aerr
	}
	a, err := sess.conv.SaveLast(ctx, req.Note)
	switch {
	case errors.Is(err, conversation.ErrNothingToSave):
		return nil, &apiError{code: CodeNothingToSave, msg: "the conversation has no answered question to save"}
	case errors.Is(err, conversation.ErrInvalidNote):
		return nil, &apiError{code: CodeBadRequest, msg: fmt.Sprintf("the note is longer than %d bytes or not UTF-8", conversation.MaxNoteBytes)}
	case errors.Is(err, conversation.ErrQuotaExceeded):
		return nil, &apiError{code: CodeQuotaExceeded, msg: "you keep as many saved answers as one user may: delete one (DELETE /v1/saved/{id}) to save another; saving a question again replaces its answer"}
	case err != nil:
		return nil, s.storeFailed(ctx, err)
	}
	return &SavedBody{RequestID: requestID(ctx), Saved: savedBody(*a)}, nil
}

func savedBody(a conversation.SavedAnswer) SavedAnswerBody {
	rows := a.Rows
	if rows == nil {
		rows = [][]any{}
	}
	return SavedAnswerBody{ID: a.ID, Question: a.Question, SQL: a.SQL, Dialect: string(a.Dialect), Columns: a.Columns, Rows: rows,
		RowCount: a.RowCount, Words: a.Words, Note: a.Note, Created: a.Created, Updated: a.Updated}
}

// listSaved lists the caller's saved answers, newest first.
func (s *service) listSaved(ctx context.Context) (*SavedList, *apiError) {
	st := s.answers()
	if st == nil {
		return nil, &apiError{code: CodeNotConfigured, msg: noSavedAnswers}
	}
	all, err := st.Answers(ctx, principalID(ctx))
	if err != nil {
		return nil, s.storeFailed(ctx, err)
	}
	out := &SavedList{RequestID: requestID(ctx), Saved: []SavedAnswerBody{}}
	for _, a := range all {
		out.Saved = append(out.Saved, savedBody(a))
	}
	return out, nil
}

// deleteSaved deletes the caller's saved answer id.
func (s *service) deleteSaved(ctx context.Context, id string) (*DeletedBody, *apiError) {
	st := s.answers()
	if st == nil {
		return nil, &apiError{code: CodeNotConfigured, msg: noSavedAnswers}
	}
	ok, err := st.DeleteAnswer(ctx, principalID(ctx), id)
	if err != nil {
		return nil, s.storeFailed(ctx, err)
	}
	if !ok {
		return nil, &apiError{code: CodeNotFound, msg: "no such saved answer"}
	}
	return &DeletedBody{RequestID: requestID(ctx), Deleted: true}, nil
}

// askerFunc adapts a function to conversation.Asker.
type askerFunc func(ctx context.Context, q string) (*text2sql.Answer, error)

func (f askerFunc) Ask(ctx context.Context, q string) (*text2sql.Answer, error) { return f(ctx, q) }

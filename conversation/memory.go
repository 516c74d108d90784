package conversation

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/bm25"
	"github.com/text2sql-go/text2sql/knowledge"
	"github.com/text2sql-go/text2sql/summary"
)

// SavedAnswer is an answer a user kept: the question, its SQL, a bounded
// sample of its result, the result in words and a note, with the data
// version it was computed on. It is its owner's alone.
type SavedAnswer struct {
	ID    string `json:"id"`    // "sa-" + 16 hex digits, kept when the owner saves the question again
	Owner string `json:"owner"` // the principal that saved it ("" without callers)
	// Question is the standalone question asked; Normalized is its
	// knowledge.NormalizeQuestion form, the lookup key.
	Question   string           `json:"question"`
	Normalized string           `json:"normalized"`
	SQL        string           `json:"sql"`
	Dialect    text2sql.Dialect `json:"dialect,omitempty"`
	Columns    []string         `json:"columns"`
	// Rows are the first rows of the result, at most MaxSavedRows and
	// MaxSavedRowBytes of JSON; RowCount is the result's row count.
	Rows     [][]any `json:"rows"`
	RowCount int     `json:"row_count"`
	Words    string  `json:"words,omitempty"` // the result in words
	Note     string  `json:"note,omitempty"`
	// DataVersion is the executor's data version when the answer was
	// computed ("" when unknown: it is never reused without running its
	// SQL again).
	DataVersion string    `json:"data_version,omitempty"`
	Created     time.Time `json:"created"`
	Updated     time.Time `json:"updated"` // when it was saved again or refreshed
}

// Bounds of a saved answer.
const (
	// MaxSavedRows bounds the rows a saved answer keeps: a screen of a
	// table, enough to answer again; the full result is its SQL's.
	MaxSavedRows = 100
	// MaxSavedRowBytes bounds the JSON of those rows (64 KiB), so wide
	// cells cannot make one saved answer the store's size.
	MaxSavedRowBytes = 64 << 10
	// MaxNoteBytes bounds a note, as feedback.MaxNote does.
	MaxNoteBytes = 2000
	// DefaultRelated is how many related saved answers a reply lists.
	DefaultRelated = 3
)

// Errors of saving.
var (
	// ErrNothingToSave: the conversation has no answered data question
	// (with a result) to save.
	ErrNothingToSave = errors.New("conversation: no answer to save")
	// ErrInvalidNote: the note is over MaxNoteBytes or not UTF-8.
	ErrInvalidNote = errors.New("conversation: invalid note")
	// ErrQuotaExceeded: the owner keeps as many saved answers as one
	// owner may (an AnswerStore's per-owner quota); saving the answer of
	// a question already saved, which replaces it, is always allowed.
	ErrQuotaExceeded = errors.New("conversation: the owner's saved-answer quota is reached")
)

// AnswerStore keeps saved answers (package conversation/sqlite is one).
// Every method is scoped to an owner: no call returns or removes another
// owner's answer. Implementations must be safe for concurrent use.
type AnswerStore interface {
	// SaveAnswer stores a, replacing the owner's saved answer of the same
	// Normalized question (whose ID and Created it keeps), and returns the
	// stored answer. An error wrapping ErrQuotaExceeded: a new question
	// over the owner's quota, nothing stored.
	SaveAnswer(ctx context.Context, a SavedAnswer) (*SavedAnswer, error)
	// Answers returns the owner's saved answers, newest first.
	Answers(ctx context.Context, owner string) ([]SavedAnswer, error)
	// FindAnswer returns the owner's saved answer of the normalised
	// question, or nil.
	FindAnswer(ctx context.Context, owner, normalized string) (*SavedAnswer, error)
	// DeleteAnswer removes the owner's saved answer id and reports
	// whether there was one.
	DeleteAnswer(ctx context.Context, owner, id string) (bool, error)
}

// Memory configures saved answers for a Conversation (Options.Memory).
type Memory struct {
	// Store keeps the saved answers (required).
	Store AnswerStore
	// Owner is the principal whose answers these are.
	Owner string
	// Dialect is recorded with each saved answer.
	Dialect text2sql.Dialect
	// DataVersion returns the data's current version (usually the
	// executor's DataVersion); nil or an error: unknown. A saved answer is
	// answered from its rows only when its version equals the current one.
	DataVersion func(ctx context.Context) (string, error)
	// Execute runs a saved answer's SQL again when the version differs or
	// is unknown: no model call, fresh rows, and the saved answer is
	// refreshed (usually (*text2sql.Pipeline).Execute, through the guard).
	// Nil, or a statement that no longer runs: the pipeline answers.
	Execute func(ctx context.Context, sql string) (*text2sql.Result, error)
	// Related is how many of the owner's saved answers with similar
	// questions a reply lists (BM25 over their questions); 0 means
	// DefaultRelated, negative none.
	Related int
}

// Related is a saved answer a reply mentions because its question is
// similar.
type Related struct {
	ID       string  `json:"id"`
	Question string  `json:"question"`
	Score    float64 `json:"score"` // BM25, > 0
}

// Sample is the last answered data question's result, bounded as a saved
// answer's rows, with the data version it was computed on: what SaveLast
// saves.
type Sample struct {
	Columns     []string `json:"columns"`
	Rows        [][]any  `json:"rows"`
	RowCount    int      `json:"row_count"`
	DataVersion string   `json:"data_version,omitempty"`
}

// sample bounds res's rows.
func sample(res *text2sql.Result, version string) *Sample {
	rows := res.Rows
	if len(rows) > MaxSavedRows {
		rows = rows[:MaxSavedRows]
	}
	for len(rows) > 0 {
		b, err := json.Marshal(rows)
		if err == nil && len(b) <= MaxSavedRowBytes {
			break
		}
		rows = rows[:len(rows)/2]
	}
	return &Sample{Columns: append([]string(nil), res.Columns...), Rows: append([][]any{}, rows...), RowCount: res.RowCount, DataVersion: version}
}

// version is the current data version, "" when unknown.
func (m *Memory) version(ctx context.Context) string {
	if m.DataVersion == nil {
		return ""
	}
	v, err := m.DataVersion(ctx)
	if err != nil {
		return ""
	}
	return v
}

// SaveLast saves the last answered data question (its standalone
// question, SQL, result sample and words) with note for the Memory's
// owner, and returns it. Errors: text2sql.ErrInvalidConfig without
// Options.Memory; ErrNothingToSave; ErrInvalidNote; the store's.
func (c *Conversation) SaveLast(ctx context.Context, note string) (*SavedAnswer, error) {
	m := c.opts.Memory
	if m == nil || m.Store == nil {
		return nil, fmt.Errorf("%w: conversation: saving needs Options.Memory with a Store", text2sql.ErrInvalidConfig)
	}
	note = strings.TrimSpace(note)
	if len(note) > MaxNoteBytes || !utf8.ValidString(note) {
		return nil, fmt.Errorf("%w: over %d bytes or not UTF-8", ErrInvalidNote, MaxNoteBytes)
	}
	c.mu.Lock()
	last, s := c.lastData(), c.sample
	c.mu.Unlock()
	if last == nil || s == nil {
		return nil, ErrNothingToSave
	}
	now := c.opts.Now()
	return m.Store.SaveAnswer(ctx, SavedAnswer{
		ID: newID(), Owner: m.Owner, Question: last.Standalone, Normalized: knowledge.NormalizeQuestion(last.Standalone),
		SQL: last.SQL, Dialect: m.Dialect, Columns: s.Columns, Rows: s.Rows, RowCount: s.RowCount, Words: last.Words,
		Note: note, DataVersion: s.DataVersion, Created: now, Updated: now,
	})
}

// lastData is the newest turn answered by the pipeline (or from a saved
// answer), or nil.
func (c *Conversation) lastData() *Turn {
	for i := len(c.turns) - 1; i >= 0; i-- {
		if c.turns[i].Route == RouteData {
			return &c.turns[i]
		}
	}
	return nil
}

func newID() string {
	var b [8]byte
	rand.Read(b[:])
	return "sa-" + hex.EncodeToString(b[:])
}

// recall answers r from the owner's saved answer of r.Standalone when
// there is one that is still valid: its rows when its data version is the
// current one, else its SQL run again (Memory.Execute). It reports whether
// r is answered; when not, the steps say why and r.Related lists similar
// saved answers.
func (c *Conversation) recall(ctx context.Context, r *Reply, version string) bool {
	m := c.opts.Memory
	hit, err := m.Store.FindAnswer(ctx, m.Owner, knowledge.NormalizeQuestion(r.Standalone))
	if err != nil {
		r.Steps = append(r.Steps, Step{Name: "memory", Outcome: "the saved answers could not be read: " + err.Error()})
		return false
	}
	if hit == nil {
		if m.Related >= 0 {
			all, err := m.Store.Answers(ctx, m.Owner)
			if err != nil {
				r.Steps = append(r.Steps, Step{Name: "memory", Outcome: "the saved answers could not be read: " + err.Error()})
				return false
			}
			r.Related = related(all, r.Standalone, m.Related)
		}
		return false
	}
	if version != "" && hit.DataVersion == version {
		c.answerSaved(r, hit, &text2sql.Result{Columns: hit.Columns, Rows: hit.Rows, RowCount: hit.RowCount, Truncated: hit.RowCount > len(hit.Rows)}, hit.Words, hit.DataVersion)
		r.Steps = append(r.Steps, Step{Name: "memory", Outcome: fmt.Sprintf("saved answer %s, data version unchanged", hit.ID), Saved: "no model call, no SQL run"})
		r.Replayed = true
		return true
	}
	why := "the data changed since it was saved"
	if version == "" || hit.DataVersion == "" {
		why = "the data version is unknown"
	}
	if m.Execute == nil {
		r.Steps = append(r.Steps, Step{Name: "memory", Outcome: fmt.Sprintf("saved answer %s not reused: %s; asked again", hit.ID, why)})
		return false
	}
	res, err := m.Execute(ctx, hit.SQL)
	switch {
	case err == nil && res == nil:
		err = text2sql.ErrNilResult
	case err == nil && res.Error != nil:
		err = res.Error
	}
	if err != nil {
		r.Steps = append(r.Steps, Step{Name: "memory", Outcome: fmt.Sprintf("saved answer %s: %s, and its SQL no longer runs (%v); asked again", hit.ID, why, err)})
		return false
	}
	// New rows, new words: the saved ones describe the old rows.
	c.answerSaved(r, hit, res, "", version)
	if words, werr := c.words(ctx, r.Standalone, r.Answer); werr == nil {
		r.Words, r.Text, r.Answer.Words = words.Text, words.Text, words.Text
	}
	r.Steps = append(r.Steps, Step{Name: "memory", Outcome: fmt.Sprintf("saved answer %s: %s, its SQL run again", hit.ID, why), Saved: "no model call"})
	// The refreshed rows are what the next repeat may reuse.
	s := sample(res, version)
	hit.Rows, hit.RowCount, hit.Columns, hit.DataVersion, hit.Words, hit.Updated = s.Rows, s.RowCount, s.Columns, version, r.Words, c.opts.Now()
	if _, err := m.Store.SaveAnswer(ctx, *hit); err != nil {
		r.Steps = append(r.Steps, Step{Name: "memory", Outcome: "the refreshed answer could not be saved: " + err.Error()})
	}
	return true
}

// answerSaved fills r from the saved answer a and its result res, read at
// data version: with words when they describe res ("" when its rows are
// new: the shape of the result until the caller puts them in words).
func (c *Conversation) answerSaved(r *Reply, a *SavedAnswer, res *text2sql.Result, words, version string) {
	r.SavedAnswer = a.ID
	r.SQL, r.Columns, r.RowCount, r.Words = a.SQL, res.Columns, res.RowCount, words
	if r.Words == "" {
		r.Words = summary.Shape(res)
	}
	r.Text = r.Words
	r.Answer = &text2sql.Answer{Question: r.Standalone, Status: text2sql.StatusAnswered, SQL: a.SQL,
		Explanation: "the saved answer " + a.ID + " of " + a.Created.Format(time.DateOnly), Result: res, Words: words}
	c.sample = sample(res, version)
}

// related ranks the saved answers whose questions are like question
// (BM25, the same normalised question left out), at most n (0:
// DefaultRelated; negative: none).
func related(all []SavedAnswer, question string, n int) []Related {
	if n == 0 {
		n = DefaultRelated
	}
	if n < 0 || len(all) == 0 {
		return nil
	}
	docs := make([]string, len(all))
	for i, a := range all {
		docs[i] = a.Question
	}
	var out []Related
	for _, h := range bm25.New(docs, bm25.DefaultParams()).Search(question, n) {
		a := all[h.Doc]
		out = append(out, Related{ID: a.ID, Question: a.Question, Score: h.Score})
	}
	return out
}

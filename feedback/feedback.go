// Package feedback turns people's verdicts on answers into verified
// examples, as Vanna's and WrenAI's "training from feedback" does, under a
// trust model like the reviewed "trusted answers" of hosted text-to-SQL
// products: an up-voted answer whose SQL passes the guard and the
// deterministic checks becomes an example in a persistent Store (one per
// normalised question), but only a reviewer's vote or approval makes it
// trusted, reused for everyone. An ordinary principal's up-vote makes a
// pending example that serves that principal's own later questions and
// waits for review; it counts toward the review of an example it agrees
// with, and another principal's different SQL flags the example for review
// instead of replacing it. A down-vote is recorded and flags the examples
// whose SQL it names; it takes a trusted example out of use only when a
// reviewer gives it. See review.go for the states, Approve and Reject.
//
// Examples reach retrieval in two ways: Merge adds the store's trusted
// examples to a knowledge base before its index is built (so the index
// fingerprint follows the store), and Retriever reuses an example recorded
// or reviewed after the index was built when the same question is asked
// again, and drops indexed examples no longer trusted. The default Store
// is SQLite (package feedback/sqlite).
package feedback

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/sqltext"
	"github.com/text2sql-go/text2sql/knowledge"
)

// Verdict is a person's judgement of an answer.
type Verdict string

// The verdicts.
const (
	Up   Verdict = "up"   // the SQL answers the question
	Down Verdict = "down" // it does not
)

// Limits of a Feedback, in bytes: a question is a sentence or two, SQL a
// statement a person could review, a note a comment.
const (
	MaxQuestion = 2000
	MaxSQL      = 20000
	MaxNote     = 2000
)

// ErrInvalid is wrapped by the error of a Feedback that is not usable: an
// empty question or SQL, an unknown verdict, text over the limits or not
// UTF-8.
var ErrInvalid = errors.New("feedback: invalid feedback")

// Feedback is one verdict on an answer.
type Feedback struct {
	Question string
	SQL      string
	Verdict  Verdict
	Note     string
	// Principal is who gave it; "" is the host (a program or the CLI with
	// no callers), which reviews as a reviewer does.
	Principal string
	// Reviewer is set when Principal may make examples trusted for
	// everyone (a reviewer role; the caller decides who has it).
	Reviewer bool
}

// Example is a verified example made from feedback.
type Example struct {
	ID       string    `json:"id"` // "fb-" + 8 hex digits of the normalised question
	Question string    `json:"question"`
	SQL      string    `json:"sql"`
	Note     string    `json:"note,omitempty"`
	By       string    `json:"by,omitempty"` // the principal who proposed its SQL ("" the host)
	Created  time.Time `json:"created"`
	Updated  time.Time `json:"updated"`
	Up       int       `json:"up"`   // up-votes
	Down     int       `json:"down"` // down-votes of its SQL
	// Status is who it serves: StatusPending (its author only, until
	// reviewed), StatusTrusted (everyone) or StatusRejected (nobody).
	Status Status `json:"status"`
	// Review flags it for a reviewer: set by a down-vote of its SQL or by
	// another principal's different SQL, cleared by a review or, on a
	// pending example, by its author's up-vote. A flagged pending example
	// is not reused; a flagged trusted one stays in use until a reviewer
	// decides.
	Review bool `json:"review"`
	// Reviewer is who last approved or rejected it ("" the host), at
	// Reviewed; empty and zero before any review.
	Reviewer string    `json:"reviewer,omitempty"`
	Reviewed time.Time `json:"reviewed,omitzero"`
}

// Vote is one recorded Feedback, with what it did.
type Vote struct {
	Time      time.Time
	Principal string
	Question  string
	SQL       string
	Verdict   Verdict // Up, Down, or a review: Approved or Rejected
	Note      string
	// Example is the ID of the example an up-vote added or updated, or
	// that a review decided.
	Example string
	// Flagged are the IDs of the examples a down-vote flagged ("example:"
	// IDs of the knowledge file's examples included).
	Flagged []string
}

// Store keeps examples and votes. Implementations must be safe for
// concurrent use; Version changes on every write, so a cache or an index
// built from the store can tell it is stale.
type Store interface {
	// Examples returns every example, ordered by ID.
	Examples(ctx context.Context) ([]Example, error)
	// Example returns the example with that ID, or nil.
	Example(ctx context.Context, id string) (*Example, error)
	// ExamplesOf returns the examples whose SQL has that StatementKey.
	ExamplesOf(ctx context.Context, statementKey string) ([]Example, error)
	// Save inserts ex or replaces the example with its ID.
	Save(ctx context.Context, ex Example) error
	// Remove deletes the example with that ID and reports whether there was one.
	Remove(ctx context.Context, id string) (bool, error)
	// Record appends a vote to the log.
	Record(ctx context.Context, v Vote) error
	// Version is an opaque token that differs after any write.
	Version(ctx context.Context) (string, error)
	// CountBy returns how many votes principal logged at or after since,
	// and how many pending examples it proposed, for the quotas.
	CountBy(ctx context.Context, principal string, since time.Time) (votes, pending int, err error)
}

// Recorder applies feedback to a Store.
type Recorder struct {
	Store Store
	// Guard checks an up-voted statement as the executor would (required):
	// a refusal keeps it out of the store.
	Guard text2sql.Guard
	// Checker, when set, runs the deterministic checks (unknown tables or
	// columns, another dialect's syntax) on an up-voted statement.
	Checker text2sql.Checker
	// Known are the knowledge file's examples, which a down-vote can flag
	// but not change.
	Known []knowledge.Example
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// Quota bounds what one principal who is not a reviewer may add; the
	// zero value means the defaults (see Quota).
	Quota Quota
}

// Outcome is what Record did.
type Outcome struct {
	Verdict Verdict
	// Example is the example an up-vote added or updated.
	Example *Example
	// Added is true when the up-vote created the example.
	Added bool
	// Conflict is true when the question's example is another
	// principal's with other SQL: it is kept, flagged for review, and this
	// vote's SQL is in the vote log for the reviewer.
	Conflict bool
	// Flagged are the IDs of the examples a down-vote flagged.
	Flagged []string
}

// Record applies fb. An up-vote's SQL (terminators and trailing comments
// removed) must pass Guard and Checker; it then becomes or counts toward
// the example of its normalised question (see vote). A down-vote flags
// every example (stored or known) whose SQL is the same statement, white
// space and case of keywords aside; a reviewer's takes the stored ones
// out of use. Every vote is logged.
//
// Errors: ErrInvalid (wrapped) for unusable feedback; ErrQuota (wrapped)
// when a principal who is not a reviewer is past its Quota; the guard's or
// checker's *text2sql.SQLError (errors.Is(err, text2sql.ErrRefused) for a
// refusal) when an up-voted statement does not pass; text2sql.ErrInvalidConfig
// without a Store or Guard; the store's errors; ctx.Err().
func (r *Recorder) Record(ctx context.Context, fb Feedback) (*Outcome, error) {
	if r.Store == nil || r.Guard == nil {
		return nil, fmt.Errorf("%w: feedback: a Recorder needs a Store and a Guard", text2sql.ErrInvalidConfig)
	}
	fb.Question = strings.TrimSpace(fb.Question)
	fb.SQL = sqltext.TrimTerminators(fb.SQL)
	fb.Note = strings.TrimSpace(fb.Note)
	if err := fb.validate(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	now := r.now()
	fb.Reviewer = fb.Reviewer || fb.Principal == ""
	if !fb.Reviewer {
		if err := r.checkQuota(ctx, fb, now); err != nil {
			return nil, err
		}
	}
	vote := Vote{Time: now, Principal: fb.Principal, Question: fb.Question, SQL: fb.SQL, Verdict: fb.Verdict, Note: fb.Note}
	out := &Outcome{Verdict: fb.Verdict}
	if fb.Verdict == Up {
		ex, added, conflict, err := r.up(ctx, fb, now)
		if err != nil {
			return nil, err
		}
		out.Example, out.Added, out.Conflict, vote.Example = &ex, added, conflict, ex.ID
	} else {
		flagged, err := r.down(ctx, fb, now)
		if err != nil {
			return nil, err
		}
		out.Flagged, vote.Flagged = flagged, flagged
	}
	if err := r.Store.Record(ctx, vote); err != nil {
		return nil, err
	}
	return out, nil
}

func (fb Feedback) validate() error {
	switch {
	case fb.Verdict != Up && fb.Verdict != Down:
		return fmt.Errorf("%w: verdict %q is not %q or %q", ErrInvalid, fb.Verdict, Up, Down)
	case fb.Question == "":
		return fmt.Errorf("%w: the question is empty", ErrInvalid)
	case fb.SQL == "":
		return fmt.Errorf("%w: the SQL is empty", ErrInvalid)
	case len(fb.Question) > MaxQuestion || len(fb.SQL) > MaxSQL || len(fb.Note) > MaxNote:
		return fmt.Errorf("%w: question, SQL or note over %d, %d or %d bytes", ErrInvalid, MaxQuestion, MaxSQL, MaxNote)
	case !utf8.ValidString(fb.Question + fb.SQL + fb.Note):
		return fmt.Errorf("%w: not UTF-8", ErrInvalid)
	}
	return nil
}

// up checks the statement and applies it to the example of its question
// (vote). conflict is set when the example keeps other SQL and is flagged.
func (r *Recorder) up(ctx context.Context, fb Feedback, now time.Time) (ex Example, added, conflict bool, err error) {
	if err := r.Guard.Check(ctx, fb.SQL); err != nil {
		return ex, false, false, err
	}
	if r.Checker != nil {
		if serr := r.Checker.Failure(fb.SQL); serr != nil {
			return ex, false, false, serr
		}
	}
	id := ExampleID(fb.Question)
	old, err := r.Store.Example(ctx, id)
	if err != nil {
		return ex, false, false, err
	}
	if old == nil {
		ex = Example{ID: id, Question: fb.Question, SQL: fb.SQL, Note: fb.Note, By: fb.Principal, Created: now, Updated: now, Status: StatusPending}
		if fb.Reviewer {
			ex.Status, ex.Reviewer, ex.Reviewed = StatusTrusted, fb.Principal, now
		}
	} else {
		ex = *old
		conflict = vote(&ex, fb, now)
	}
	ex.Up++
	if err := r.Store.Save(ctx, ex); err != nil {
		return ex, false, false, err
	}
	return ex, old == nil, conflict, nil
}

// down flags the stored examples whose SQL is fb's (a reviewer's
// down-vote also withdraws a trusted one) and names the knowledge file's.
func (r *Recorder) down(ctx context.Context, fb Feedback, now time.Time) ([]string, error) {
	exs, err := r.Store.ExamplesOf(ctx, StatementKey(fb.SQL))
	if err != nil {
		return nil, err
	}
	var flagged []string
	for _, ex := range exs {
		ex.Down++
		ex.Review, ex.Updated = true, now
		if fb.Reviewer && ex.Status == StatusTrusted {
			// Back in the review queue, reused by nobody.
			ex.Status, ex.Reviewer, ex.Reviewed = StatusPending, fb.Principal, now
		}
		if err := r.Store.Save(ctx, ex); err != nil {
			return nil, err
		}
		flagged = append(flagged, ex.ID)
	}
	for _, ex := range r.Known {
		if sameStatement(ex.SQL, fb.SQL) {
			flagged = append(flagged, "example:"+ex.ID)
		}
	}
	return flagged, nil
}

// ExampleID is the ID of the example of question: "fb-" and 8 hex digits
// of its normalised form, so paraphrases differing only in case,
// punctuation and spacing share one example.
func ExampleID(question string) string {
	return knowledge.AutoID(strings.TrimSuffix(idPrefix, "-"), knowledge.NormalizeQuestion(question))
}

// idPrefix starts the ID of every example made from feedback.
const idPrefix = "fb-"

// StatementKey is the form in which two statements count as the same:
// terminators and trailing comments removed, runs of white space folded,
// lower-cased.
func StatementKey(sql string) string {
	return strings.ToLower(strings.Join(strings.Fields(sqltext.TrimTerminators(sql)), " "))
}

func sameStatement(a, b string) bool { return StatementKey(a) == StatementKey(b) }

// Merge returns a copy of kb with the store's trusted examples (flagged
// or not: a reviewer decides) whose question is not already a known
// example's, each
// checked by guard (an example the guard now refuses — the schema
// changed — is left out and named in skipped). The copy's fingerprint
// therefore follows the store.
func Merge(ctx context.Context, kb *knowledge.Base, exs []Example, guard text2sql.Guard) (merged *knowledge.Base, skipped []string, err error) {
	out := *kb
	out.Examples = append([]knowledge.Example(nil), kb.Examples...)
	known := make(map[string]bool, len(kb.Examples))
	for _, ex := range kb.Examples {
		known[knowledge.NormalizeQuestion(ex.Question)] = true
	}
	for _, ex := range exs {
		key := knowledge.NormalizeQuestion(ex.Question)
		if ex.Status != StatusTrusted || known[key] {
			continue
		}
		if err := out.AddExample(ctx, guard, knowledge.Example{ID: ex.ID, Question: ex.Question, SQL: ex.SQL}); err != nil {
			if cerr := ctx.Err(); cerr != nil {
				return nil, nil, cerr
			}
			skipped = append(skipped, ex.ID)
			continue
		}
		known[key] = true
	}
	return &out, skipped, nil
}

// Retriever applies the trust model to retrieval. Examples recorded or
// reviewed after the base retriever's index was built are reused: when
// the base finds no example to reuse and the store holds one for the
// question as written (NormalizeQuestion) that serves the caller
// (Example.Serves, for the principal in the context), it is the
// retrieval's Match (similarity 1). Indexed store examples no longer
// trusted are dropped from the items and the match. Every other field is
// the base's.
type Retriever struct {
	Base  text2sql.Retriever
	Store Store
}

// Retrieve calls Base, then checks and completes it from Store. Errors:
// the base's, or the store's.
func (r *Retriever) Retrieve(ctx context.Context, req text2sql.RetrieveRequest) (*text2sql.Retrieval, error) {
	res, err := r.Base.Retrieve(ctx, req)
	if err != nil || res == nil {
		return res, err
	}
	if err := r.dropUntrusted(ctx, res); err != nil {
		return nil, fmt.Errorf("feedback: %w", err)
	}
	if res.Match != nil || len(req.Terms) > 0 {
		return res, nil
	}
	ex, err := r.Store.Example(ctx, ExampleID(req.Question))
	if err != nil {
		return nil, fmt.Errorf("feedback: %w", err)
	}
	if ex != nil && ex.Serves(principalID(ctx)) && knowledge.NormalizeQuestion(ex.Question) == knowledge.NormalizeQuestion(req.Question) {
		res.Match = &text2sql.ExampleMatch{ID: ex.ID, Question: ex.Question, SQL: ex.SQL, Similarity: 1}
	}
	return res, nil
}

// dropUntrusted removes the indexed store examples that a review or a
// reviewer's down-vote took out of use since the index was built.
func (r *Retriever) dropUntrusted(ctx context.Context, res *text2sql.Retrieval) error {
	trusted := map[string]bool{}
	check := func(id string) (bool, error) {
		if !strings.HasPrefix(id, idPrefix) {
			return true, nil // the knowledge file's
		}
		if ok, seen := trusted[id]; seen {
			return ok, nil
		}
		ex, err := r.Store.Example(ctx, id)
		if err != nil {
			return false, err
		}
		trusted[id] = ex != nil && ex.Status == StatusTrusted
		return trusted[id], nil
	}
	items := make([]text2sql.Item, 0, len(res.Items))
	for _, it := range res.Items {
		ok := true
		if it.Kind == text2sql.ItemExample {
			var err error
			if ok, err = check(strings.TrimPrefix(it.ID, "example:")); err != nil {
				return err
			}
		}
		if ok {
			items = append(items, it)
		}
	}
	res.Items = items
	if res.Match != nil {
		ok, err := check(res.Match.ID)
		if err != nil {
			return err
		}
		if !ok {
			res.Match = nil
		}
	}
	return nil
}

package feedback

import (
	"context"
	"errors"
	"fmt"
	"time"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/identity"
)

// Status is who an example serves.
type Status string

// The statuses.
const (
	// StatusPending: proposed by a principal who is not a reviewer; it
	// serves only that principal's own questions until a reviewer
	// approves it.
	StatusPending Status = "pending"
	// StatusTrusted: a reviewer made or approved it; it serves everyone
	// and is indexed with the knowledge file's examples.
	StatusTrusted Status = "trusted"
	// StatusRejected: a reviewer rejected it; it serves nobody, and only
	// another SQL proposed for its question reopens it.
	StatusRejected Status = "rejected"
)

// The verdicts of a review, in the vote log (not Feedback verdicts).
const (
	Approved Verdict = "approve"
	Rejected Verdict = "reject"
)

// Serves reports whether ex may be reused for the principal with that ID
// ("" the host): a trusted example for everyone, a pending one only for
// its author while it is not flagged.
func (ex *Example) Serves(principal string) bool {
	switch ex.Status {
	case StatusTrusted:
		return true
	case StatusPending:
		return ex.By == principal && !ex.Review
	}
	return false
}

// InQueue reports whether ex waits for a reviewer: pending, or flagged.
func (ex *Example) InQueue() bool {
	return ex.Status == StatusPending || ex.Review
}

// vote applies an up-vote of fb to ex, the existing example of its
// question, and reports a conflict: other SQL than ex's that does not
// replace it. A reviewer's vote is a review: its SQL becomes trusted. A
// proposal that no reviewer has decided stays its author's (their new
// SQL replaces it); another principal's different SQL flags it, and a
// rejected example's question is reopened by new SQL.
func vote(ex *Example, fb Feedback, now time.Time) (conflict bool) {
	ex.Updated = now
	same := sameStatement(ex.SQL, fb.SQL)
	switch {
	case fb.Reviewer:
		if !same {
			ex.SQL, ex.By, ex.Down = fb.SQL, fb.Principal, 0
		}
		ex.Status, ex.Review, ex.Reviewer, ex.Reviewed = StatusTrusted, false, fb.Principal, now
	case same && ex.Status == StatusPending && ex.By == fb.Principal:
		ex.Review = false // the author confirms it after a down-vote
	case same:
		// One more vote toward the review.
	case ex.Status == StatusRejected || (ex.Status == StatusPending && ex.By == fb.Principal):
		// A new proposal: the author's own new answer, or new SQL for a
		// rejected question.
		ex.SQL, ex.By, ex.Down = fb.SQL, fb.Principal, 0
		ex.Status, ex.Review = StatusPending, false
	default:
		ex.Review = true
		return true
	}
	if fb.Note != "" && ex.By == fb.Principal {
		ex.Note = fb.Note
	}
	return false
}

// ErrNotFound is returned by Approve and Reject for an unknown example.
var ErrNotFound = errors.New("feedback: no such example")

// Approve makes the example with that ID trusted: reused for everyone
// from the next question on (by Retriever; indexed by the next Merge). Its
// SQL is checked by Guard and Checker again with the host's rights (the
// schema may have changed since the vote). The review is logged as a
// Vote with verdict Approved by reviewer ("" the host).
//
// Errors: ErrNotFound; the guard's or checker's *text2sql.SQLError; the
// store's; text2sql.ErrInvalidConfig without a Store or Guard.
func (r *Recorder) Approve(ctx context.Context, id, reviewer string) (*Example, error) {
	return r.review(ctx, id, reviewer, Approved)
}

// Reject takes the example with that ID out of use for everyone, its
// author included; it stays in the store so that a repeat of the same
// SQL does not reopen it. The review is logged as a Vote with verdict
// Rejected. Errors: as Approve's, without the checks.
func (r *Recorder) Reject(ctx context.Context, id, reviewer string) (*Example, error) {
	return r.review(ctx, id, reviewer, Rejected)
}

func (r *Recorder) review(ctx context.Context, id, reviewer string, v Verdict) (*Example, error) {
	if r.Store == nil || r.Guard == nil {
		return nil, fmt.Errorf("%w: feedback: a Recorder needs a Store and a Guard", text2sql.ErrInvalidConfig)
	}
	ex, err := r.Store.Example(ctx, id)
	if err != nil {
		return nil, err
	}
	if ex == nil {
		return nil, fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	now := r.now()
	ex.Status, ex.Review, ex.Reviewer, ex.Reviewed, ex.Updated = StatusRejected, false, reviewer, now, now
	if v == Approved {
		host := identity.WithPrincipal(ctx, nil)
		if err := r.Guard.Check(host, ex.SQL); err != nil {
			return nil, err
		}
		if r.Checker != nil {
			if serr := r.Checker.Failure(ex.SQL); serr != nil {
				return nil, serr
			}
		}
		ex.Status = StatusTrusted
	}
	if err := r.Store.Save(ctx, *ex); err != nil {
		return nil, err
	}
	log := Vote{Time: now, Principal: reviewer, Question: ex.Question, SQL: ex.SQL, Verdict: v, Example: ex.ID,
		Note: fmt.Sprintf("proposed by %s; %d up, %d down", Who(ex.By), ex.Up, ex.Down)}
	if err := r.Store.Record(ctx, log); err != nil {
		return nil, err
	}
	return ex, nil
}

// Who names a principal ID for people: "the host" for "".
func Who(principal string) string {
	if principal == "" {
		return "the host"
	}
	return principal
}

// Quota bounds what one principal who is not a reviewer adds to the
// store; the store's own caps (feedback/sqlite's MaxExamples, MaxVotes)
// stay the backstop for everyone together. Zero values mean the defaults.
type Quota struct {
	// Votes is the most votes a principal may record per Window.
	Votes int
	// Window is the period of Votes.
	Window time.Duration
	// Pending is the most examples a principal may have waiting for
	// review (pending, proposed by it); its up-votes are refused beyond.
	Pending int
}

// Defaults of Quota: a person reviewing answers all day casts a few
// hundred votes; fifty open proposals is more than a reviewer goes
// through at once.
const (
	DefaultQuotaVotes   = 500
	DefaultQuotaWindow  = 24 * time.Hour
	DefaultQuotaPending = 50
)

// ErrQuota is wrapped by Record's error when the principal is past its
// Quota.
var ErrQuota = errors.New("feedback: quota reached")

// checkQuota refuses fb when its principal is past the quota. Concurrent
// votes of one principal may overshoot it by their number.
func (r *Recorder) checkQuota(ctx context.Context, fb Feedback, now time.Time) error {
	q := r.Quota
	if q.Votes <= 0 {
		q.Votes = DefaultQuotaVotes
	}
	if q.Window <= 0 {
		q.Window = DefaultQuotaWindow
	}
	if q.Pending <= 0 {
		q.Pending = DefaultQuotaPending
	}
	votes, pending, err := r.Store.CountBy(ctx, fb.Principal, now.Add(-q.Window))
	if err != nil {
		return err
	}
	if votes >= q.Votes {
		return fmt.Errorf("%w: at most %d votes per %s", ErrQuota, q.Votes, q.Window)
	}
	if fb.Verdict == Up && pending >= q.Pending {
		return fmt.Errorf("%w: at most %d examples waiting for review", ErrQuota, q.Pending)
	}
	return nil
}

func (r *Recorder) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// principalID is the ID of the principal in ctx; "" (the host) when there
// is none.
func principalID(ctx context.Context) string {
	if p, ok := identity.PrincipalFrom(ctx); ok {
		return p.ID
	}
	return ""
}

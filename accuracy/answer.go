package accuracy

import (
	"context"
	"errors"
	"fmt"

	text2sql "github.com/text2sql-go/text2sql"
)

// ErrAnswerKey is wrapped by CheckAnswer's error when the answer key
// itself is refused or fails: the key, not the candidate, is wrong.
var ErrAnswerKey = errors.New("accuracy: the answer key query failed")

// MaxRows caps the rows read of one query whose result is compared
// (CheckAnswer's, and the evaluation harness's default): a result beyond
// it cannot be compared.
const MaxRows = 100000

// AnswerKeyMaxRows caps the rows CheckAnswer reads of each query.
const AnswerKeyMaxRows = MaxRows

// AnswerKeyDigits is the numeric tolerance of CheckAnswer: numbers equal
// to 12 significant digits match (so an AVG and a SUM/COUNT of the same
// values agree), see Comparison.Digits.
const AnswerKeyDigits = 12

// AnswerCheck is the outcome of CheckAnswer.
type AnswerCheck struct {
	Matched bool `json:"matched"` // the candidate's result matches the answer key's
	Mode    Mode `json:"mode"`    // the comparison mode used
	// Ordered: the rows were compared in sequence, because the answer key
	// has a top-level ORDER BY (ModeSpider) or the mode is ModeStrict.
	Ordered bool `json:"ordered"`
	// Summary is a one-line diff: "match", "2 missing rows, 1 extra row
	// (…)", "column mismatch: …", or why the candidate failed.
	Summary string `json:"summary"`
	// Diff is the comparison (nil when the candidate failed).
	Diff *Diff `json:"diff,omitempty"`
	// Candidate and AnswerKey are the two results. Candidate.Error holds
	// the candidate's refusal or failure.
	Candidate *text2sql.Result `json:"candidate"`
	AnswerKey *text2sql.Result `json:"answer_key"` // the answer key's result
	// Order is what OrderCheck found about the answer key: a
	// nondeterministic key (a LIMIT cutting through a tie) matches only
	// by luck, and Summary says so.
	Order *OrderReport `json:"order,omitempty"`
}

// CheckAnswer runs candidateSQL and answerKeySQL through exec (a guarded
// executor: both are untrusted) and compares their results in mode
// ("" means ModeSpider): rows as a multiset with any column order in
// ModeSpider (in sequence when the answer key has a top-level ORDER BY),
// as a set with the column order fixed in ModeBIRD, in sequence in
// ModeStrict. Numbers match to AnswerKeyDigits significant digits; text
// matches exactly. No SQL is rewritten.
//
// A candidate that is refused or fails does not match; its error is in
// Candidate.Error and Summary. The error return is for an answer key that
// is refused or fails (wrapping ErrAnswerKey), a result beyond
// AnswerKeyMaxRows (ErrAnswerKey too: it cannot be compared), an unknown
// mode, or an executor that cannot work (its error, or ctx's).
func CheckAnswer(ctx context.Context, exec text2sql.Executor, candidateSQL, answerKeySQL string, mode Mode) (*AnswerCheck, error) {
	if mode == "" {
		mode = ModeSpider
	}
	if _, err := ParseMode(string(mode)); err != nil {
		return nil, err
	}
	if exec == nil {
		return nil, fmt.Errorf("%w: eval: CheckAnswer needs an executor", text2sql.ErrInvalidConfig)
	}
	key, err := exec.Execute(ctx, text2sql.ExecuteRequest{SQL: answerKeySQL, MaxRows: AnswerKeyMaxRows})
	if err != nil {
		return nil, err
	}
	if key == nil {
		return nil, fmt.Errorf("%w: the executor returned no result", ErrAnswerKey)
	}
	if key.Error != nil {
		return nil, fmt.Errorf("%w: %s", ErrAnswerKey, key.Error.Error())
	}
	if key.Truncated {
		return nil, fmt.Errorf("%w: its result has more than %d rows and cannot be compared", ErrAnswerKey, AnswerKeyMaxRows)
	}
	cand, err := exec.Execute(ctx, text2sql.ExecuteRequest{SQL: candidateSQL, MaxRows: AnswerKeyMaxRows})
	if err != nil {
		return nil, err
	}
	if cand == nil {
		return nil, errors.New("accuracy: the executor returned no result for the candidate")
	}
	chk := &AnswerCheck{Mode: mode, Candidate: cand, AnswerKey: key, Ordered: mode == ModeStrict || mode == ModeSpider && TopLevelOrderBy(answerKeySQL)}
	if chk.Order, err = OrderCheck(ctx, exec, answerKeySQL, key); err != nil {
		return nil, err
	}
	if cand.Error != nil {
		chk.Summary = "the candidate failed: " + cand.Error.Error()
		return chk, nil
	}
	if cand.Truncated {
		chk.Summary = fmt.Sprintf("the candidate's result has more than %d rows; the answer key's has %d", AnswerKeyMaxRows, len(key.Rows))
		return chk, nil
	}
	chk.Diff = Compare(key, cand, Comparison{Mode: mode, Ordered: chk.Ordered, Digits: AnswerKeyDigits})
	chk.Matched = chk.Diff.Match
	chk.Summary = chk.Diff.Summary()
	if chk.Order != nil && chk.Order.Nondeterministic {
		chk.Summary += "; note: the answer key is nondeterministic (" + chk.Order.Detail + ")"
	}
	return chk, nil
}

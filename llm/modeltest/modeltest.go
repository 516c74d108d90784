// Package modeltest is a conformance kit for implementations of
// text2sql.Model, in the style of testing/fstest: one entry function,
// TestModel, runs every rule of the Model contract against models from a
// constructor and returns an error naming each rule broken.
//
// Design: TestModel returns an error rather than taking a *testing.T,
// like fstest.TestFS, so the kit has no dependency on package testing or
// on an assertion library, and a test can check that the kit catches a
// broken model. The constructor receives a Backend saying how the model's
// provider must behave (answer a given text, never answer, refuse the
// request); a provider client's test points the client at a local fake
// server scripted accordingly.
//
// A provider client's own time limit (its Options.Timeout, covering
// retries) is not checked here: internal/providertest.Timeout holds every
// client of this module to it.
package modeltest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"time"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/conformance"
)

// Backend is how the provider behind a model under test must behave.
// Exactly one of the three is asked for at a time.
type Backend struct {
	// Answer is the text the provider answers every request with, when
	// neither Hang nor Reject is set.
	Answer string
	// Hang: the provider takes the request and never answers.
	Hang bool
	// Reject: the provider refuses the request permanently, as a provider
	// refuses an invalid API key (HTTP 400 or 401): not worth retrying.
	Reject bool
}

// ErrUnsupported is returned by a constructor that cannot give a model
// the Backend asked for (a scripted model cannot hang); the rules that
// need it are then not checked.
var ErrUnsupported = errors.New("modeltest: backend not supported")

// The rules TestModel checks, as they appear at the start of each
// reported violation.
const (
	RuleAnswer          = "answer"           // a request answers the provider's text, a non-empty Model and non-negative Usage, with a nil error
	RuleRequestKept     = "request-kept"     // Complete does not modify the caller's request
	RuleEmptyRequest    = "empty-request"    // a request with no messages neither panics nor returns both or neither of a response and an error; an error matches ErrModel or ErrInvalidConfig
	RuleCancelledBefore = "cancelled-before" // an already cancelled context fails at once with an error matching context.Canceled and no response
	RuleCancelledDuring = "cancelled-during" // cancelling a call the provider never answers returns promptly with an error matching context.Canceled
	RuleCallerDeadline  = "caller-deadline"  // the caller's deadline ends a call the provider never answers promptly, with an error matching context.DeadlineExceeded that is not a *ModelError with Timeout set
	RuleProviderError   = "provider-error"   // a refused request is a *text2sql.ModelError matching text2sql.ErrModel, naming its Provider, not Retryable
	RuleConstructor     = "constructor"      // the constructor failed
)

// promptly is how long a cancelled call may take to return.
const promptly = 2 * time.Second

// answer is the text the kit asks the provider to answer.
const answer = "SELECT 1 -- modeltest"

// TestModel checks the text2sql.Model contract on models from newModel,
// which is called once per rule (7 times) with the Backend the rule
// needs. It takes under a second on a conforming model and about
// 3 × promptly (2 s) at worst. It returns nil, or an error joining one
// error per violation, each "modeltest: <rule>: <what happened>"
// (Violations lists the rule names). A panic in the model is reported as
// a violation of the rule running.
func TestModel(newModel func(b Backend) (text2sql.Model, error)) error {
	return conformance.Run("modeltest", RuleConstructor, []conformance.Rule[Backend, text2sql.Model]{
		{Name: RuleAnswer, Backend: Backend{Answer: answer}, Check: checkAnswer},
		{Name: RuleRequestKept, Backend: Backend{Answer: answer}, Check: checkRequestKept},
		{Name: RuleEmptyRequest, Backend: Backend{Answer: answer}, Check: checkEmptyRequest},
		{Name: RuleCancelledBefore, Backend: Backend{Answer: answer}, Check: checkCancelledBefore},
		{Name: RuleCancelledDuring, Backend: Backend{Hang: true}, Check: checkCancelledDuring},
		{Name: RuleCallerDeadline, Backend: Backend{Hang: true}, Check: checkCallerDeadline},
		{Name: RuleProviderError, Backend: Backend{Reject: true}, Check: checkProviderError},
	}, newModel, ErrUnsupported)
}

// Violations returns the rule names reported in err, an error from
// TestModel, in order, one per violation.
func Violations(err error) []string { return conformance.Violations("modeltest", err) }

func request() text2sql.ModelRequest {
	t := 0.0
	return text2sql.ModelRequest{
		System:      "You write SQL.",
		Messages:    []text2sql.Message{{Role: text2sql.RoleUser, Content: "How many singers are there?"}},
		Temperature: &t,
		MaxTokens:   64,
	}
}

func checkAnswer(m text2sql.Model) error {
	resp, err := m.Complete(context.Background(), request())
	if err != nil {
		return fmt.Errorf("complete: %w", err)
	}
	if resp == nil {
		return errors.New("complete returned no response and no error")
	}
	if resp.Text != answer {
		return fmt.Errorf("text %q, the provider answered %q", resp.Text, answer)
	}
	if resp.Model == "" {
		return errors.New("response names no Model")
	}
	if resp.Usage.InputTokens < 0 || resp.Usage.OutputTokens < 0 {
		return fmt.Errorf("negative usage %+v", resp.Usage)
	}
	return nil
}

func checkRequestKept(m text2sql.Model) error {
	req := request()
	req.Messages = append(req.Messages,
		text2sql.Message{Role: text2sql.RoleAssistant, Content: "SELECT count(*) FROM singer"},
		text2sql.Message{Role: text2sql.RoleUser, Content: "And by country?"})
	req.Schema = []byte(`{"type": "object", "properties": {"sql": {"type": "string"}}, "required": ["sql"]}`)
	want := request()
	want.Messages = append([]text2sql.Message(nil), req.Messages...)
	want.Schema = append([]byte(nil), req.Schema...)
	if _, err := m.Complete(context.Background(), req); err != nil {
		return fmt.Errorf("complete: %w", err)
	}
	if !reflect.DeepEqual(req, want) {
		return fmt.Errorf("the request changed: %+v, was %+v", req, want)
	}
	return nil
}

func checkEmptyRequest(m text2sql.Model) error {
	resp, err := m.Complete(context.Background(), text2sql.ModelRequest{})
	switch {
	case resp == nil && err == nil:
		return errors.New("complete of an empty request returned no response and no error")
	case resp != nil && err != nil:
		return fmt.Errorf("complete of an empty request returned a response and the error %w", err)
	case err != nil && !errors.Is(err, text2sql.ErrModel) && !errors.Is(err, text2sql.ErrInvalidConfig):
		return fmt.Errorf("complete of an empty request: %w; want an error matching text2sql.ErrModel or text2sql.ErrInvalidConfig", err)
	}
	return nil
}

func checkCancelledBefore(m text2sql.Model) error {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	resp, err := m.Complete(ctx, request())
	if !errors.Is(err, context.Canceled) {
		return fmt.Errorf("complete with a cancelled context: response %+v, error %v; want an error matching context.Canceled", resp, err)
	}
	if resp != nil {
		return errors.New("complete with a cancelled context returned a response with its error")
	}
	if d := time.Since(start); d > promptly {
		return fmt.Errorf("complete with a cancelled context took %v", d)
	}
	return nil
}

func checkCancelledDuring(m text2sql.Model) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	t := time.AfterFunc(50*time.Millisecond, cancel)
	defer t.Stop()
	err, v := conformance.Within(ctx, promptly, "complete cancelled after 50ms", complete(m))
	if v == nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("complete cancelled after 50ms: error %v, want one matching context.Canceled", err)
	}
	return v
}

// complete is one Complete of request() on m, for conformance.Within.
func complete(m text2sql.Model) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		_, err := m.Complete(ctx, request())
		return err
	}
}

func checkCallerDeadline(m text2sql.Model) error {
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	err, v := conformance.Within(ctx, promptly, "complete under a 100ms deadline", complete(m))
	var me *text2sql.ModelError
	switch {
	case v != nil:
		return v
	case !errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("complete under a 100ms deadline: error %v, want one matching context.DeadlineExceeded", err)
	case errors.As(err, &me) && me.Timeout:
		return fmt.Errorf("the caller's deadline reported as the client's own time limit: %w", err)
	}
	return nil
}

func checkProviderError(m text2sql.Model) error {
	var resp *text2sql.ModelResponse
	err, v := conformance.Within(context.Background(), promptly, "complete of a refused request", func(ctx context.Context) error {
		var err error
		resp, err = m.Complete(ctx, request())
		return err
	})
	if v != nil {
		return fmt.Errorf("%w (retried?)", v)
	}
	if err == nil {
		return fmt.Errorf("complete of a refused request: response %+v and no error", resp)
	}
	if resp != nil {
		return errors.New("complete of a refused request returned a response with its error")
	}
	if !errors.Is(err, text2sql.ErrModel) {
		return fmt.Errorf("%w: does not match text2sql.ErrModel", err)
	}
	var me *text2sql.ModelError
	if !errors.As(err, &me) {
		return fmt.Errorf("%w: not a *text2sql.ModelError", err)
	}
	if me.Provider == "" {
		return fmt.Errorf("%w: the *text2sql.ModelError names no Provider", err)
	}
	if me.Retryable {
		return fmt.Errorf("%w: a permanent refusal marked Retryable", err)
	}
	return nil
}

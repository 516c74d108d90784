// Package embedtest is a conformance kit for implementations of
// text2sql.Embedder, in the style of testing/fstest: one entry function,
// TestEmbedder, runs every rule of the Embedder contract against
// embedders from a constructor and returns an error naming each rule
// broken.
//
// Design: TestEmbedder returns an error rather than taking a *testing.T,
// like fstest.TestFS, so the kit has no dependency on package testing or
// on an assertion library, and a test can check that the kit catches a
// broken embedder. The constructor receives a Backend saying how the
// embedder's provider must behave (answer, never answer, refuse); a
// provider client's test points the client at a local fake server
// scripted accordingly.
//
// A provider client's own time limit (its Options.Timeout, covering
// retries) is not checked here: internal/providertest.Timeout holds every
// client of this module to it.
package embedtest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/conformance"
)

// Backend is how the provider behind an embedder under test must behave.
// The zero value: it answers every text, the same text always with the
// same vector.
type Backend struct {
	// Hang: the provider takes the request and never answers.
	Hang bool
	// Reject: the provider refuses every request permanently, as it
	// refuses an invalid API key (HTTP 400 or 401): not worth retrying.
	Reject bool
}

// Options say what the embedder under test promises beyond the contract.
type Options struct {
	// Deterministic: the same text always embeds to the same vector,
	// whatever batch it is in (the hashing embedder; a remote client over
	// a deterministic fake). Enables RuleDeterministic and RuleOrder.
	Deterministic bool
}

// ErrUnsupported is returned by a constructor that cannot give an
// embedder the Backend asked for (a local embedder cannot hang or be
// refused); the rules that need it are then not checked.
var ErrUnsupported = errors.New("embedtest: backend not supported")

// The rules TestEmbedder checks, as they appear at the start of each
// reported violation.
const (
	RuleIdentity        = "identity"         // Name is non-empty, Dimension positive, both the same on every call
	RuleDocuments       = "documents"        // EmbedDocuments returns one finite vector of Dimension values per text
	RuleQuery           = "query"            // EmbedQuery returns one finite vector of Dimension values
	RuleEmptyBatch      = "empty-batch"      // EmbedDocuments of no texts (nil or empty) returns no vectors and no error
	RuleLargeBatch      = "large-batch"      // EmbedDocuments of 250 texts returns 250 vectors of Dimension values
	RuleInputKept       = "input-kept"       // EmbedDocuments does not modify the caller's texts
	RuleDeterministic   = "deterministic"    // with Options.Deterministic: the same texts give the same vectors on every call
	RuleOrder           = "order"            // with Options.Deterministic: vector i of a batch is that of text i embedded alone
	RuleCancelledBefore = "cancelled-before" // an already cancelled context fails both calls at once with an error matching context.Canceled and no vectors
	RuleCancelledDuring = "cancelled-during" // cancelling a call the provider never answers returns promptly with an error matching context.Canceled
	RuleCallerDeadline  = "caller-deadline"  // the caller's deadline ends a call the provider never answers promptly, with an error matching context.DeadlineExceeded that is not a *ModelError with Timeout set
	RuleProviderError   = "provider-error"   // a refused request is a *text2sql.ModelError matching text2sql.ErrModel, naming its Provider, not Retryable, with no vectors
	RuleConstructor     = "constructor"      // the constructor failed
)

// promptly is how long a cancelled call may take to return.
const promptly = 2 * time.Second

// sample returns texts that are distinct, of distinct lengths: a new
// slice on each call, so an embedder that changes its input cannot change
// what later rules use.
func sample() []string { return slices.Clone(sampleTexts) }

var sampleTexts = []string{
	"singer: name, country, age",
	"concert: the concerts, their stadium and year",
	"stadium",
	"How many singers do we have?",
	"the average age of French singers",
}

// TestEmbedder checks the text2sql.Embedder contract on embedders from
// newEmbedder, which is called once per rule (12 times) with the Backend
// the rule needs. It takes under a second on a conforming embedder and
// about 3 × promptly (2 s) at worst. It returns nil, or an error joining
// one error per violation, each "embedtest: <rule>: <what happened>"
// (Violations lists the rule names). A panic in the embedder is reported
// as a violation of the rule running.
func TestEmbedder(newEmbedder func(b Backend) (text2sql.Embedder, error), opts Options) error {
	type rule = conformance.Rule[Backend, text2sql.Embedder]
	rules := []rule{
		{Name: RuleIdentity, Check: checkIdentity},
		{Name: RuleDocuments, Check: checkDocuments},
		{Name: RuleQuery, Check: checkQuery},
		{Name: RuleEmptyBatch, Check: checkEmptyBatch},
		{Name: RuleLargeBatch, Check: checkLargeBatch},
		{Name: RuleInputKept, Check: checkInputKept},
	}
	if opts.Deterministic {
		rules = append(rules,
			rule{Name: RuleDeterministic, Check: checkDeterministic},
			rule{Name: RuleOrder, Check: checkOrder})
	}
	rules = append(rules,
		rule{Name: RuleCancelledBefore, Check: checkCancelledBefore},
		rule{Name: RuleCancelledDuring, Backend: Backend{Hang: true}, Check: checkCancelledDuring},
		rule{Name: RuleCallerDeadline, Backend: Backend{Hang: true}, Check: checkCallerDeadline},
		rule{Name: RuleProviderError, Backend: Backend{Reject: true}, Check: checkProviderError})
	return conformance.Run("embedtest", RuleConstructor, rules, newEmbedder, ErrUnsupported)
}

// Violations returns the rule names reported in err, an error from
// TestEmbedder, in order, one per violation.
func Violations(err error) []string { return conformance.Violations("embedtest", err) }

// checkVector reports a vector of the wrong length or with a NaN or
// infinite value.
func checkVector(what string, v []float32, dim int) error {
	if len(v) != dim {
		return fmt.Errorf("%s has %d values, Dimension() is %d", what, len(v), dim)
	}
	for i, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return fmt.Errorf("%s: value %d is %v", what, i, x)
		}
	}
	return nil
}

func documents(e text2sql.Embedder, in []string) ([][]float32, error) {
	vs, err := e.EmbedDocuments(context.Background(), in)
	if err != nil {
		return nil, fmt.Errorf("embedDocuments of %d texts: %w", len(in), err)
	}
	if len(vs) != len(in) {
		return nil, fmt.Errorf("embedDocuments of %d texts returned %d vectors", len(in), len(vs))
	}
	for i, v := range vs {
		if err := checkVector(fmt.Sprintf("vector %d of %d", i, len(in)), v, e.Dimension()); err != nil {
			return nil, err
		}
	}
	return vs, nil
}

func checkIdentity(e text2sql.Embedder) error {
	name, dim := e.Name(), e.Dimension()
	if name == "" {
		return errors.New("empty Name")
	}
	if dim <= 0 {
		return fmt.Errorf("Dimension() = %d, want > 0", dim)
	}
	if _, err := documents(e, sample()); err != nil {
		return err
	}
	if e.Name() != name || e.Dimension() != dim {
		return fmt.Errorf("name and Dimension changed from %q, %d to %q, %d after a call", name, dim, e.Name(), e.Dimension())
	}
	return nil
}

func checkDocuments(e text2sql.Embedder) error {
	_, err := documents(e, sample())
	return err
}

func checkQuery(e text2sql.Embedder) error {
	v, err := e.EmbedQuery(context.Background(), sample()[3])
	if err != nil {
		return fmt.Errorf("embedQuery: %w", err)
	}
	return checkVector("query vector", v, e.Dimension())
}

func checkEmptyBatch(e text2sql.Embedder) error {
	for _, in := range [][]string{nil, {}} {
		vs, err := e.EmbedDocuments(context.Background(), in)
		if err != nil {
			return fmt.Errorf("embedDocuments(%#v): %w", in, err)
		}
		if len(vs) != 0 {
			return fmt.Errorf("embedDocuments(%#v) returned %d vectors", in, len(vs))
		}
	}
	return nil
}

func large() []string {
	in := make([]string, 250)
	for i := range in {
		in[i] = fmt.Sprintf("table_%d: %s", i, strings.Repeat("x", i))
	}
	return in
}

func checkLargeBatch(e text2sql.Embedder) error {
	_, err := documents(e, large())
	return err
}

func checkInputKept(e text2sql.Embedder) error {
	in := sample()
	if _, err := e.EmbedDocuments(context.Background(), in); err != nil {
		return fmt.Errorf("embedDocuments: %w", err)
	}
	if !slices.Equal(in, sampleTexts) {
		return fmt.Errorf("the texts changed: %q, were %q", in, sampleTexts)
	}
	return nil
}

func equal(a, b [][]float32) bool {
	return slices.EqualFunc(a, b, func(x, y []float32) bool { return slices.Equal(x, y) })
}

func checkDeterministic(e text2sql.Embedder) error {
	a, err := documents(e, sample())
	if err != nil {
		return err
	}
	b, err := documents(e, sample())
	if err != nil {
		return err
	}
	if !equal(a, b) {
		return errors.New("embedDocuments of the same texts twice gave different vectors")
	}
	q1, err1 := e.EmbedQuery(context.Background(), sample()[0])
	q2, err2 := e.EmbedQuery(context.Background(), sample()[0])
	if err := errors.Join(err1, err2); err != nil {
		return fmt.Errorf("embedQuery: %w", err)
	}
	if !slices.Equal(q1, q2) {
		return errors.New("embedQuery of the same text twice gave different vectors")
	}
	return nil
}

func checkOrder(e text2sql.Embedder) error {
	in := large()
	all, err := documents(e, in)
	if err != nil {
		return err
	}
	for _, i := range []int{0, 1, 99, 100, 101, 199, 200, 249} {
		one, err := documents(e, in[i:i+1])
		if err != nil {
			return err
		}
		if !slices.Equal(one[0], all[i]) {
			return fmt.Errorf("vector %d of a batch of %d differs from that of text %d embedded alone", i, len(in), i)
		}
	}
	return nil
}

func checkCancelledBefore(e text2sql.Embedder) error {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	vs, err := e.EmbedDocuments(ctx, sample())
	if !errors.Is(err, context.Canceled) {
		return fmt.Errorf("embedDocuments with a cancelled context: %d vectors, error %v; want an error matching context.Canceled", len(vs), err)
	}
	if vs != nil {
		return errors.New("embedDocuments with a cancelled context returned vectors with its error")
	}
	v, err := e.EmbedQuery(ctx, sample()[0])
	if !errors.Is(err, context.Canceled) {
		return fmt.Errorf("embedQuery with a cancelled context: error %v; want one matching context.Canceled", err)
	}
	if v != nil {
		return errors.New("embedQuery with a cancelled context returned a vector with its error")
	}
	if d := time.Since(start); d > promptly {
		return fmt.Errorf("two calls with a cancelled context took %v", d)
	}
	return nil
}

// hung runs call under ctx and returns its error, or a violation when it
// is still running after promptly.
func hung(ctx context.Context, what string, call func(ctx context.Context) error) (error, error) {
	return conformance.Within(ctx, promptly, what, call)
}

func calls(e text2sql.Embedder) map[string]func(ctx context.Context) error {
	return map[string]func(ctx context.Context) error{
		"embedDocuments": func(ctx context.Context) error { _, err := e.EmbedDocuments(ctx, sample()); return err },
		"embedQuery":     func(ctx context.Context) error { _, err := e.EmbedQuery(ctx, sample()[0]); return err },
	}
}

func checkCancelledDuring(e text2sql.Embedder) error {
	var errs []error
	for _, name := range []string{"embedDocuments", "embedQuery"} {
		ctx, cancel := context.WithCancel(context.Background())
		t := time.AfterFunc(50*time.Millisecond, cancel)
		err, v := hung(ctx, name+" cancelled after 50ms", calls(e)[name])
		t.Stop()
		cancel()
		switch {
		case v != nil:
			errs = append(errs, v)
		case !errors.Is(err, context.Canceled):
			errs = append(errs, fmt.Errorf("%s cancelled after 50ms: error %v, want one matching context.Canceled", name, err))
		}
	}
	return errors.Join(errs...)
}

func checkCallerDeadline(e text2sql.Embedder) error {
	var errs []error
	for _, name := range []string{"embedDocuments", "embedQuery"} {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		err, v := hung(ctx, name+" under a 100ms deadline", calls(e)[name])
		cancel()
		var me *text2sql.ModelError
		switch {
		case v != nil:
			errs = append(errs, v)
		case !errors.Is(err, context.DeadlineExceeded):
			errs = append(errs, fmt.Errorf("%s under a 100ms deadline: error %v, want one matching context.DeadlineExceeded", name, err))
		case errors.As(err, &me) && me.Timeout:
			errs = append(errs, fmt.Errorf("%s: the caller's deadline reported as the client's own time limit: %w", name, err))
		}
	}
	return errors.Join(errs...)
}

func checkProviderError(e text2sql.Embedder) error {
	var errs []error
	for _, name := range []string{"embedDocuments", "embedQuery"} {
		err, v := hung(context.Background(), name+" of a refused request (retried?)", calls(e)[name])
		var me *text2sql.ModelError
		switch {
		case v != nil:
			errs = append(errs, v)
		case err == nil:
			errs = append(errs, fmt.Errorf("%s of a refused request: no error", name))
		case !errors.Is(err, text2sql.ErrModel):
			errs = append(errs, fmt.Errorf("%s: %w: does not match text2sql.ErrModel", name, err))
		case !errors.As(err, &me):
			errs = append(errs, fmt.Errorf("%s: %w: not a *text2sql.ModelError", name, err))
		case me.Provider == "":
			errs = append(errs, fmt.Errorf("%s: %w: the *text2sql.ModelError names no Provider", name, err))
		case me.Retryable:
			errs = append(errs, fmt.Errorf("%s: %w: a permanent refusal marked Retryable", name, err))
		}
	}
	vs, err := e.EmbedDocuments(context.Background(), sample())
	if err != nil && vs != nil {
		errs = append(errs, errors.New("embedDocuments of a refused request returned vectors with its error"))
	}
	return errors.Join(errs...)
}

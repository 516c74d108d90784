// Package storetest is a conformance kit for implementations of
// retriever.Store, in the style of testing/fstest: one entry function,
// TestStore, runs every rule of the Store contract against fresh stores
// from a constructor and returns an error naming each rule broken.
//
// Design: TestStore returns an error rather than taking a *testing.T, like
// fstest.TestFS, so the kit has no dependency on package testing or on an
// assertion library, and a test can check that the kit itself catches a
// broken store. Callers write
//
//	if err := storetest.TestStore(func() (retriever.Store, error) {
//		return retriever.OpenChromem(t.TempDir())
//	}); err != nil {
//		t.Fatal(err)
//	}
package storetest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/conformance"
	"github.com/text2sql-go/text2sql/retriever"
)

// The rules TestStore checks, as they appear at the start of each
// reported violation.
const (
	RuleEmpty           = "empty"              // a new store counts 0, has no fingerprint and answers no hits
	RuleAddQuery        = "add-query"          // an added record is found, best first, with its kind and a cosine similarity
	RuleSimilarity      = "similarity"         // Similarity is the cosine, in [-1, 1]
	RuleOrder           = "order"              // hits come best first, at most k of them
	RuleKind            = "kind-filter"        // a kind returns only records of that kind; "" returns all
	RuleReplace         = "replace"            // Add with an existing ID replaces the record (count unchanged, new vector and kind)
	RuleBatchDuplicates = "batch-duplicates"   // an ID repeated within one Add is stored once, as its last record
	RuleEmptyAdd        = "empty-add"          // Add of no records is no error and changes nothing
	RuleEmptyID         = "empty-id"           // a record with an empty ID is an error
	RuleNaN             = "nan"                // a NaN or infinite coordinate (record or query) is an error
	RuleWrongLength     = "wrong-length"       // a record or query vector of another length is an error
	RuleZeroVector      = "zero-vector"        // an all-zero record is skipped; an all-zero query gives no hits
	RuleNonPositiveK    = "k-nonpositive"      // k ≤ 0 gives no hits
	RuleTies            = "ties"               // equal similarities come back in the same order on every query
	RuleFingerprint     = "fingerprint"        // SetFingerprint then Fingerprint returns it
	RuleReset           = "reset"              // Reset removes every record and the fingerprint
	RuleCancelled       = "cancelled"          // a cancelled context makes Add and Query fail with the context's error
	RuleConcurrentQuery = "concurrent-queries" // concurrent Query calls agree with a lone Query
)

// TestStore checks the retriever.Store contract on stores from newStore,
// which must return a new, empty store on each call (it is called once per
// rule, about 18 times). It returns nil, or an error joining one error per
// violation, each "storetest: <rule>: <what happened>" (Violations lists
// the rule names). Vectors used are 3- and 4-dimensional.
func TestStore(newStore func() (retriever.Store, error)) error {
	var errs []error
	for _, c := range checks {
		s, err := newStore()
		if err != nil {
			errs = append(errs, fmt.Errorf("storetest: %s: constructor: %w", c.rule, err))
			continue
		}
		if err := c.fn(context.Background(), s); err != nil {
			errs = append(errs, fmt.Errorf("storetest: %s: %w", c.rule, err))
		}
	}
	return errors.Join(errs...)
}

// Violations returns the rule names reported in err, an error from
// TestStore, in order, one per violation.
func Violations(err error) []string { return conformance.Violations("storetest", err) }

type check struct {
	rule string
	fn   func(ctx context.Context, s retriever.Store) error
}

var checks = []check{
	{RuleEmpty, checkEmpty},
	{RuleAddQuery, checkAddQuery},
	{RuleSimilarity, checkSimilarity},
	{RuleOrder, checkOrder},
	{RuleKind, checkKind},
	{RuleReplace, checkReplace},
	{RuleBatchDuplicates, checkBatchDuplicates},
	{RuleEmptyAdd, checkEmptyAdd},
	{RuleEmptyID, checkEmptyID},
	{RuleNaN, checkNaN},
	{RuleWrongLength, checkWrongLength},
	{RuleZeroVector, checkZeroVector},
	{RuleNonPositiveK, checkNonPositiveK},
	{RuleTies, checkTies},
	{RuleFingerprint, checkFingerprint},
	{RuleReset, checkReset},
	{RuleCancelled, checkCancelled},
	{RuleConcurrentQuery, checkConcurrent},
}

const (
	kt = text2sql.ItemTable
	kc = text2sql.ItemColumn
)

// base is a small corpus: distinct directions, two kinds.
var base = []retriever.Record{
	{ID: "a", Kind: kt, Text: "a", Vector: []float32{1, 0, 0}},
	{ID: "b", Kind: kt, Text: "b", Vector: []float32{1, 1, 0}},
	{ID: "c", Kind: kc, Text: "c", Vector: []float32{0, 1, 0}},
	{ID: "d", Kind: kc, Text: "d", Vector: []float32{0, 0, 2}},
	{ID: "e", Kind: kt, Text: "e", Vector: []float32{-1, 0, 0}},
}

func clone(rs []retriever.Record) []retriever.Record {
	out := make([]retriever.Record, len(rs))
	for i, r := range rs {
		r.Vector = slices.Clone(r.Vector)
		out[i] = r
	}
	return out
}

func ids(hits []retriever.Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.ID
	}
	return out
}

func addBase(ctx context.Context, s retriever.Store) error {
	if err := s.Add(ctx, clone(base)); err != nil {
		return fmt.Errorf("store.Add of 5 valid records: %w", err)
	}
	return nil
}

func count(ctx context.Context, s retriever.Store, want int) error {
	n, err := s.Count(ctx)
	return result("store.Count", n, err, want)
}

// result checks what a store call, named call, returned: got and err,
// where want is the right answer.
func result[T comparable](call string, got T, err error, want T) error {
	if err != nil {
		return fmt.Errorf("%s: %w", call, err)
	}
	if got != want {
		return fmt.Errorf("%s = %v, want %v", call, got, want)
	}
	return nil
}

func checkEmpty(ctx context.Context, s retriever.Store) error {
	if err := count(ctx, s, 0); err != nil {
		return err
	}
	fp, err := s.Fingerprint(ctx)
	if err := result("store.Fingerprint of a new store", fp, err, ""); err != nil {
		return err
	}
	return noHits(ctx, s, []float32{1, 0, 0}, 3, "of an empty store")
}

func checkAddQuery(ctx context.Context, s retriever.Store) error {
	if err := addBase(ctx, s); err != nil {
		return err
	}
	if err := count(ctx, s, len(base)); err != nil {
		return err
	}
	hits, err := s.Query(ctx, []float32{0, 0, 5}, 1, "")
	if err != nil {
		return fmt.Errorf("store.Query: %w", err)
	}
	if len(hits) != 1 || hits[0].ID != "d" || hits[0].Kind != kc {
		return fmt.Errorf("store.Query(0,0,5; k=1) = %+v, want [d column]", hits)
	}
	if math.Abs(hits[0].Similarity-1) > 1e-5 {
		return fmt.Errorf("similarity of an identical direction = %v, want 1", hits[0].Similarity)
	}
	return nil
}

func checkSimilarity(ctx context.Context, s retriever.Store) error {
	if err := addBase(ctx, s); err != nil {
		return err
	}
	hits, err := s.Query(ctx, []float32{1, 0, 0}, len(base), "")
	if err != nil {
		return fmt.Errorf("store.Query: %w", err)
	}
	want := map[string]float64{"a": 1, "b": 1 / math.Sqrt2, "c": 0, "d": 0, "e": -1}
	if len(hits) != len(base) {
		return fmt.Errorf("store.Query(k=%d) of %d records returned %d hits", len(base), len(base), len(hits))
	}
	for _, h := range hits {
		if h.Similarity < -1 || h.Similarity > 1 || math.IsNaN(h.Similarity) {
			return fmt.Errorf("hit %s: Similarity %v outside [-1, 1]", h.ID, h.Similarity)
		}
		if w, ok := want[h.ID]; !ok || math.Abs(h.Similarity-w) > 1e-5 {
			return fmt.Errorf("hit %s: Similarity %v, want cosine %v", h.ID, h.Similarity, w)
		}
	}
	return nil
}

func checkOrder(ctx context.Context, s retriever.Store) error {
	if err := addBase(ctx, s); err != nil {
		return err
	}
	q := []float32{1, 0.2, 0.1}
	hits, err := s.Query(ctx, q, 10, "")
	if err != nil {
		return fmt.Errorf("store.Query: %w", err)
	}
	if len(hits) != len(base) {
		return fmt.Errorf("store.Query(k=10) of %d records returned %d hits", len(base), len(hits))
	}
	for i := 1; i < len(hits); i++ {
		if hits[i].Similarity > hits[i-1].Similarity {
			return fmt.Errorf("hits not best first: %s (%v) after %s (%v)", hits[i].ID, hits[i].Similarity, hits[i-1].ID, hits[i-1].Similarity)
		}
	}
	if got := ids(hits); got[0] != "a" || got[1] != "b" || got[len(got)-1] != "e" {
		return fmt.Errorf("order = %v, want a, b first and e last", got)
	}
	top2, err := s.Query(ctx, q, 2, "")
	if err != nil {
		return fmt.Errorf("store.Query(k=2): %w", err)
	}
	if !slices.Equal(ids(top2), []string{"a", "b"}) {
		return fmt.Errorf("store.Query(k=2) = %v, want [a b]", ids(top2))
	}
	return nil
}

func checkKind(ctx context.Context, s retriever.Store) error {
	if err := addBase(ctx, s); err != nil {
		return err
	}
	hits, err := s.Query(ctx, []float32{1, 0, 0}, 10, kc)
	if err != nil {
		return fmt.Errorf("store.Query(kind=column): %w", err)
	}
	got := ids(hits)
	slices.Sort(got)
	if !slices.Equal(got, []string{"c", "d"}) {
		return fmt.Errorf("store.Query(kind=column) = %v, want c and d", got)
	}
	for _, h := range hits {
		if h.Kind != kc {
			return fmt.Errorf("store.Query(kind=column) hit %s has kind %q", h.ID, h.Kind)
		}
	}
	none, err := s.Query(ctx, []float32{1, 0, 0}, 10, text2sql.ItemRule)
	if err != nil {
		return fmt.Errorf("store.Query(kind=rule): %w", err)
	}
	if len(none) != 0 {
		return fmt.Errorf("store.Query(kind=rule) with no rules = %v, want none", ids(none))
	}
	return nil
}

func checkReplace(ctx context.Context, s retriever.Store) error {
	if err := addBase(ctx, s); err != nil {
		return err
	}
	if err := s.Add(ctx, []retriever.Record{{ID: "a", Kind: kc, Text: "a2", Vector: []float32{0, 0, -1}}}); err != nil {
		return fmt.Errorf("store.Add replacing a: %w", err)
	}
	if err := count(ctx, s, len(base)); err != nil {
		return fmt.Errorf("after replacing a: %w", err)
	}
	hits, err := s.Query(ctx, []float32{0, 0, -1}, 1, "")
	if err != nil {
		return fmt.Errorf("store.Query: %w", err)
	}
	if len(hits) != 1 || hits[0].ID != "a" || hits[0].Kind != kc {
		return fmt.Errorf("store.Query(0,0,-1) after replacing a = %+v, want [a column]", hits)
	}
	old, err := s.Query(ctx, []float32{1, 0, 0}, 10, kt)
	if err != nil {
		return fmt.Errorf("store.Query(kind=table): %w", err)
	}
	if slices.Contains(ids(old), "a") {
		return fmt.Errorf("replaced record a still found under its old kind: %v", ids(old))
	}
	return nil
}

func checkBatchDuplicates(ctx context.Context, s retriever.Store) error {
	// Many copies, so a store that adds a batch's records concurrently is
	// caught out whichever order its goroutines run in.
	var rs []retriever.Record
	for i := range 64 {
		rs = append(rs, retriever.Record{ID: "dup", Kind: kt, Vector: []float32{1, float32(i), 0}})
	}
	rs = append(rs, retriever.Record{ID: "dup", Kind: kc, Vector: []float32{0, 0, 1}})
	if err := s.Add(ctx, rs); err != nil {
		return fmt.Errorf("store.Add: %w", err)
	}
	if err := count(ctx, s, 1); err != nil {
		return fmt.Errorf("after adding 65 records of one ID: %w", err)
	}
	hits, err := s.Query(ctx, []float32{0, 0, 1}, 1, "")
	if err != nil {
		return fmt.Errorf("store.Query: %w", err)
	}
	if len(hits) != 1 || hits[0].Kind != kc || math.Abs(hits[0].Similarity-1) > 1e-5 {
		return fmt.Errorf("store.Query(0,0,1) = %+v, want the batch's last record of ID dup (column, similarity 1)", hits)
	}
	return nil
}

func checkEmptyAdd(ctx context.Context, s retriever.Store) error {
	if err := addBase(ctx, s); err != nil {
		return err
	}
	for _, rs := range [][]retriever.Record{nil, {}} {
		if err := s.Add(ctx, rs); err != nil {
			return fmt.Errorf("store.Add(%#v): %w", rs, err)
		}
	}
	return count(ctx, s, len(base))
}

func checkEmptyID(ctx context.Context, s retriever.Store) error {
	if err := s.Add(ctx, []retriever.Record{{ID: "", Kind: kt, Vector: []float32{1, 0, 0}}}); err == nil {
		return errors.New("store.Add of a record with an empty ID returned nil")
	}
	return nil
}

func checkNaN(ctx context.Context, s retriever.Store) error {
	var errs []error
	bad := map[string]float32{"NaN": float32(math.NaN()), "+Inf": float32(math.Inf(1)), "-Inf": float32(math.Inf(-1))}
	for name, x := range bad {
		if err := s.Add(ctx, []retriever.Record{{ID: "bad", Kind: kt, Vector: []float32{1, x, 0}}}); err == nil {
			errs = append(errs, fmt.Errorf("store.Add of a vector with %s returned nil", name))
		}
	}
	if err := s.Reset(ctx); err != nil {
		return fmt.Errorf("store.Reset: %w", err)
	}
	if err := addBase(ctx, s); err != nil {
		return err
	}
	for name, x := range bad {
		if _, err := s.Query(ctx, []float32{1, x, 0}, 3, ""); err == nil {
			errs = append(errs, fmt.Errorf("store.Query with %s returned nil error", name))
		}
	}
	return errors.Join(errs...)
}

func checkWrongLength(ctx context.Context, s retriever.Store) error {
	if err := addBase(ctx, s); err != nil {
		return err
	}
	var errs []error
	if err := s.Add(ctx, []retriever.Record{{ID: "long", Kind: kt, Vector: []float32{1, 0, 0, 0}}}); err == nil {
		errs = append(errs, errors.New("store.Add of a 4-dimensional record to a 3-dimensional store returned nil"))
	}
	for _, q := range [][]float32{{1, 0}, {1, 0, 0, 0}} {
		if _, err := s.Query(ctx, q, 3, ""); err == nil {
			errs = append(errs, fmt.Errorf("store.Query with a %d-dimensional vector on a 3-dimensional store returned nil error", len(q)))
		}
	}
	return errors.Join(errs...)
}

func checkZeroVector(ctx context.Context, s retriever.Store) error {
	if err := addBase(ctx, s); err != nil {
		return err
	}
	if err := s.Add(ctx, []retriever.Record{{ID: "zero", Kind: kt, Vector: []float32{0, 0, 0}}}); err != nil {
		return fmt.Errorf("store.Add of an all-zero record: %w (want it skipped)", err)
	}
	if err := count(ctx, s, len(base)); err != nil {
		return fmt.Errorf("after adding an all-zero record: %w (want it skipped)", err)
	}
	return noHits(ctx, s, []float32{0, 0, 0}, 3, "with an all-zero vector")
}

func checkNonPositiveK(ctx context.Context, s retriever.Store) error {
	if err := addBase(ctx, s); err != nil {
		return err
	}
	for _, k := range []int{0, -1} {
		if err := noHits(ctx, s, []float32{1, 0, 0}, k, fmt.Sprintf("with k=%d", k)); err != nil {
			return err
		}
	}
	return nil
}

// noHits checks that s answers the query vector v, k hits wanted, with
// neither hits nor an error; what tells the query apart in the error, e.g.
// "of an empty store".
func noHits(ctx context.Context, s retriever.Store, v []float32, k int, what string) error {
	hits, err := s.Query(ctx, v, k, "")
	if err != nil {
		return fmt.Errorf("store.Query %s: %w (want no hits, no error)", what, err)
	}
	if len(hits) != 0 {
		return fmt.Errorf("store.Query %s = %v, want no hits", what, ids(hits))
	}
	return nil
}

func checkTies(ctx context.Context, s retriever.Store) error {
	// Twelve records at the same angle to the query: every order is a
	// tie, and the store must pick the same one every time.
	var rs []retriever.Record
	for i := range 12 {
		rs = append(rs, retriever.Record{ID: fmt.Sprintf("t%02d", (i*7)%12), Kind: kt, Vector: []float32{1, 1, float32(i%2*2 - 1)}})
	}
	if err := s.Add(ctx, rs); err != nil {
		return fmt.Errorf("store.Add: %w", err)
	}
	var first []string
	for i := range 20 {
		hits, err := s.Query(ctx, []float32{1, 1, 0}, 5, "")
		if err != nil {
			return fmt.Errorf("store.Query: %w", err)
		}
		got := ids(hits)
		if len(got) != 5 {
			return fmt.Errorf("store.Query(k=5) of 12 tied records returned %d hits", len(got))
		}
		if i == 0 {
			first = got
		} else if !slices.Equal(got, first) {
			return fmt.Errorf("tied hits changed order between queries: %v then %v", first, got)
		}
	}
	return nil
}

func checkFingerprint(ctx context.Context, s retriever.Store) error {
	if err := addBase(ctx, s); err != nil {
		return err
	}
	for _, fp := range []string{"fp-1", "fp-2"} {
		if err := s.SetFingerprint(ctx, fp); err != nil {
			return fmt.Errorf("store.SetFingerprint: %w", err)
		}
		got, err := s.Fingerprint(ctx)
		if err := result(fmt.Sprintf("store.Fingerprint after SetFingerprint(%q)", fp), got, err, fp); err != nil {
			return err
		}
	}
	return nil
}

func checkReset(ctx context.Context, s retriever.Store) error {
	if err := addBase(ctx, s); err != nil {
		return err
	}
	if err := s.SetFingerprint(ctx, "fp"); err != nil {
		return fmt.Errorf("store.SetFingerprint: %w", err)
	}
	if err := s.Reset(ctx); err != nil {
		return fmt.Errorf("store.Reset: %w", err)
	}
	if err := checkEmpty(ctx, s); err != nil {
		return fmt.Errorf("after Reset: %w", err)
	}
	// After a Reset the vector length may change.
	if err := s.Add(ctx, []retriever.Record{{ID: "x", Kind: kt, Vector: []float32{0, 0, 0, 1}}}); err != nil {
		return fmt.Errorf("store.Add of a 4-dimensional record after Reset of a 3-dimensional store: %w", err)
	}
	hits, err := s.Query(ctx, []float32{0, 0, 0, 1}, 1, "")
	if err != nil {
		return fmt.Errorf("store.Query after Reset: %w", err)
	}
	if !slices.Equal(ids(hits), []string{"x"}) {
		return fmt.Errorf("store.Query after Reset and Add = %v, want [x]", ids(hits))
	}
	return nil
}

func checkCancelled(ctx context.Context, s retriever.Store) error {
	if err := addBase(ctx, s); err != nil {
		return err
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	var errs []error
	if err := s.Add(cctx, []retriever.Record{{ID: "late", Kind: kt, Vector: []float32{1, 2, 3}}}); !errors.Is(err, context.Canceled) {
		errs = append(errs, fmt.Errorf("store.Add with a cancelled context: error %v, want one matching context.Canceled", err))
	}
	if _, err := s.Query(cctx, []float32{1, 0, 0}, 3, ""); !errors.Is(err, context.Canceled) {
		errs = append(errs, fmt.Errorf("store.Query with a cancelled context: error %v, want one matching context.Canceled", err))
	}
	if err := count(ctx, s, len(base)); err != nil {
		errs = append(errs, fmt.Errorf("after a cancelled Add: %w", err))
	}
	return errors.Join(errs...)
}

func checkConcurrent(ctx context.Context, s retriever.Store) error {
	if err := addBase(ctx, s); err != nil {
		return err
	}
	q := []float32{0.3, 1, 0.2}
	want, err := s.Query(ctx, q, 3, "")
	if err != nil {
		return fmt.Errorf("store.Query: %w", err)
	}
	const n = 8
	errc := make(chan error, n)
	for range n {
		go func() {
			got, err := s.Query(ctx, slices.Clone(q), 3, "")
			switch {
			case err != nil:
				errc <- fmt.Errorf("concurrent Query: %w", err)
			case !slices.Equal(ids(got), ids(want)):
				errc <- fmt.Errorf("concurrent Query = %v, a lone one %v", ids(got), ids(want))
			default:
				errc <- nil
			}
		}()
	}
	var errs []error
	for range n {
		if err := <-errc; err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

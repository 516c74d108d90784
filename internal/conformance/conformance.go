// Package conformance holds what the public conformance kits
// (retriever/storetest, executor/executortest, llm/modeltest,
// embed/embedtest) share: running each rule on a fresh implementation,
// reporting a panic as a violation of the rule that ran, and reading the
// rule names back from a kit's error. Like testing/fstest, a kit reports
// violations as one error, each line "<kit>: <rule>: <what happened>".
package conformance

import (
	"errors"
	"fmt"
	"strings"
)

// Rule is one rule of a kit: its name, what the implementation under test
// must be built on (a kit's Backend), and the check, which returns nil
// when the rule holds.
type Rule[B, T any] struct {
	Name    string
	Backend B
	Check   func(T) error
}

// Run builds an implementation with newT for each rule and checks the
// rule on it. A rule whose backend newT cannot provide (an error matching
// unsupported) is skipped; any other constructor error, or a nil
// implementation with a nil error, is a violation of constructorRule. It
// returns nil or the violations joined, each "<kit>: <rule>: …".
func Run[B, T any](kit, constructorRule string, rules []Rule[B, T], newT func(B) (T, error), unsupported error) error {
	var errs []error
	for _, r := range rules {
		impl, err := newT(r.Backend)
		if errors.Is(err, unsupported) {
			continue
		}
		if err == nil && any(impl) == nil {
			err = errors.New("nil implementation and nil error")
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %s: %s: %+v: %w", kit, r.Name, constructorRule, r.Backend, err))
			continue
		}
		if err := Protect(func() error { return r.Check(impl) }); err != nil {
			errs = append(errs, fmt.Errorf("%s: %s: %w", kit, r.Name, err))
		}
	}
	return errors.Join(errs...)
}

// Protect runs fn and turns a panic into an error.
func Protect(fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return fn()
}

// Violations returns the rule names reported in err, an error of the kit
// named kit, in order, one per violation; nil when err is nil.
func Violations(kit string, err error) []string {
	if err == nil {
		return nil
	}
	var out []string
	for _, line := range strings.Split(err.Error(), "\n") {
		if rest, ok := strings.CutPrefix(line, kit+": "); ok {
			if rule, _, ok := strings.Cut(rest, ":"); ok {
				out = append(out, rule)
			}
		}
	}
	return out
}

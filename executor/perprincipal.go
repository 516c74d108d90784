package executor

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/identity"
)

// PerPrincipal runs each call on the executor of the caller the context
// carries (identity.PrincipalFrom): the way to let the database's grants
// decide per caller where it has no row-level security (MySQL, MariaDB),
// with one login, and so one executor, per principal. It implements
// text2sql.Executor and text2sql.Guard; it is safe for concurrent use as
// long as its executors are.
type PerPrincipal struct {
	def  text2sql.Executor
	byID map[string]text2sql.Executor
}

// NewPerPrincipal returns a PerPrincipal routing principal IDs to the
// executors of byID (copied). Calls without a principal, such as a host
// validating its knowledge file, go to def; a principal byID does not
// name is refused with an error wrapping text2sql.ErrForbidden. A nil def
// is an error wrapping text2sql.ErrInvalidConfig.
func NewPerPrincipal(def text2sql.Executor, byID map[string]text2sql.Executor) (*PerPrincipal, error) {
	if def == nil {
		return nil, fmt.Errorf("%w: executor: PerPrincipal needs a default executor", text2sql.ErrInvalidConfig)
	}
	for id, e := range byID {
		if e == nil {
			return nil, fmt.Errorf("%w: executor: principal %q has no executor", text2sql.ErrInvalidConfig, id)
		}
	}
	return &PerPrincipal{def: def, byID: maps.Clone(byID)}, nil
}

// For returns the executor of the call ctx carries, or an error wrapping
// text2sql.ErrForbidden.
func (p *PerPrincipal) For(ctx context.Context) (text2sql.Executor, error) {
	pr, ok := identity.PrincipalFrom(ctx)
	if !ok {
		return p.def, nil
	}
	if e, ok := p.byID[pr.ID]; ok {
		return e, nil
	}
	return nil, fmt.Errorf("%w: executor: no login is mapped to principal %q", text2sql.ErrForbidden, pr.ID)
}

// Execute runs req on the caller's executor.
func (p *PerPrincipal) Execute(ctx context.Context, req text2sql.ExecuteRequest) (*text2sql.Result, error) {
	e, err := p.For(ctx)
	if err != nil {
		return nil, err
	}
	return e.Execute(ctx, req)
}

// Check checks sql with the caller's executor when it is a
// text2sql.Guard (every guarded executor is), else with the default's;
// it returns ErrForbidden for an unmapped principal, and nil when neither
// can check.
func (p *PerPrincipal) Check(ctx context.Context, sql string) error {
	e, err := p.For(ctx)
	if err != nil {
		return err
	}
	for _, x := range []text2sql.Executor{e, p.def} {
		if g, ok := x.(text2sql.Guard); ok {
			return g.Check(ctx, sql)
		}
	}
	return nil
}

// Close closes every executor that has a Close method, once each (an
// executor of an incomparable type named for several principals is
// closed once per name).
func (p *PerPrincipal) Close() error {
	seen := map[text2sql.Executor]bool{}
	var errs []error
	for _, e := range append([]text2sql.Executor{p.def}, slices.Collect(maps.Values(p.byID))...) {
		c, ok := e.(interface{ Close() error })
		if !ok {
			continue
		}
		if reflect.TypeOf(e).Comparable() {
			if seen[e] {
				continue
			}
			seen[e] = true
		}
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}

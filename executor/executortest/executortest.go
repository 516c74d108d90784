// Package executortest is a conformance kit for implementations of
// text2sql.Executor, in the style of testing/fstest: one entry function,
// TestExecutor, runs every rule of the Executor contract against an
// executor and a table the caller prepared, and returns an error naming
// each rule broken.
//
// Design: TestExecutor returns an error rather than taking a *testing.T,
// like fstest.TestFS, so the kit has no dependency on package testing or
// on an assertion library, and a test can check that the kit catches a
// broken executor. The caller creates the fixture table in its own
// dialect and passes what the kit cannot write portably (a forbidden
// function call and a statement that runs for a long time):
//
//	err := executortest.TestExecutor(ex, executortest.Fixture{
//		Table: "t", Rows: 20,
//		ForbiddenFunction: "SELECT load_extension('x')",
//		Slow: "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) SELECT count(*) FROM c",
//	})
package executortest

import (
	"context"
	"errors"
	"fmt"
	"time"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/conformance"
)

// Fixture describes what the caller prepared for the kit.
type Fixture struct {
	// Table names a table the executor may read, holding exactly Rows
	// rows; it is written into statements as is (quote it if needed).
	Table string
	// Rows is the table's row count; at least 3.
	Rows int
	// ForbiddenFunction is a single read-only SELECT calling a function
	// the executor refuses with KindForbiddenFunction, e.g.
	// "SELECT pg_read_file('/etc/passwd')". Leave it empty only for an
	// executor that promises no function allow-list (the generic
	// executor.Executor); RuleRefuseFunction is then not checked.
	ForbiddenFunction string
	// Slow is a single read-only SELECT the executor allows that runs for
	// at least 10 seconds, e.g. an unbounded recursive count.
	Slow string
}

// The rules TestExecutor checks, as they appear at the start of each
// reported violation.
const (
	RuleRead              = "read"             // SELECT * of the table returns every row, as data, untruncated, with a positive Duration
	RuleRowCap            = "row-cap"          // MaxRows below the row count gives exactly MaxRows rows and Truncated
	RuleRowCapExact       = "row-cap-exact"    // MaxRows equal to the row count gives every row, not Truncated
	RuleRefuseWrite       = "refuse-write"     // a DELETE is a KindNotReadOnly result (matching ErrRefused) and changes nothing
	RuleRefuseMultiple    = "refuse-multiple"  // two statements are a KindMultipleStatements result; a SELECT followed by a DELETE is refused (either kind) and changes nothing
	RuleRefuseFunction    = "refuse-function"  // Fixture.ForbiddenFunction is a KindForbiddenFunction result
	RuleRefuseEmpty       = "refuse-empty"     // an empty or blank statement is a KindEmpty result
	RuleSyntax            = "syntax"           // a syntax error is a KindSyntax result, not a Go error
	RuleUnknownTable      = "unknown-table"    // a missing table is a KindUnknownTable result
	RuleCancelledBefore   = "cancelled-before" // an already cancelled context returns at once with an error matching context.Canceled
	RuleCancelledDuring   = "cancelled-during" // cancelling during Fixture.Slow returns promptly with an error matching context.Canceled
	RuleTimeout           = "timeout"          // ExecuteRequest.Timeout stops Fixture.Slow promptly with a KindTimeout result
	RuleWorksAfterwards   = "works-afterwards" // after every refusal, error and cancellation the executor still reads the table
	RuleFixture           = "fixture"          // the Fixture itself is incomplete
	promptly              = 3 * time.Second    // how long a cancelled or timed-out call may take to return
	timeoutLimit          = 200 * time.Millisecond
	unknownTable          = "executortest_no_such_table"
	defaultRowCapHeadroom = 10
)

// TestExecutor checks the text2sql.Executor contract on ex with the
// caller's fixture. It takes about promptly × 2 at worst (two slow
// statements that must be stopped) and under a second on a conforming
// executor. It returns nil, or an error joining one error per violation,
// each "executortest: <rule>: <what happened>" (Violations lists the rule
// names). A panic in ex is reported as a violation of the rule running.
func TestExecutor(ex text2sql.Executor, fx Fixture) error {
	if fx.Table == "" || fx.Rows < 3 || fx.Slow == "" {
		return fmt.Errorf("executortest: %s: Fixture needs Table, Rows ≥ 3 and Slow: %+v", RuleFixture, fx)
	}
	k := &kit{ex: ex, fx: fx}
	refuseFunction := k.refuse(fx.ForbiddenFunction, text2sql.KindForbiddenFunction)
	if fx.ForbiddenFunction == "" {
		refuseFunction = func() error { return nil }
	}
	var errs []error
	for _, c := range []struct {
		rule string
		fn   func() error
	}{
		{RuleRead, k.read},
		{RuleRowCap, k.rowCap},
		{RuleRowCapExact, k.rowCapExact},
		{RuleRefuseWrite, k.refuseWrite},
		{RuleRefuseMultiple, k.refuseMultiple},
		{RuleRefuseFunction, refuseFunction},
		{RuleRefuseEmpty, k.refuseEmpty},
		{RuleSyntax, k.kind("SELEC 1 FROM", text2sql.KindSyntax)},
		{RuleUnknownTable, k.kind("SELECT * FROM "+unknownTable, text2sql.KindUnknownTable)},
		{RuleCancelledBefore, k.cancelledBefore},
		{RuleCancelledDuring, k.cancelledDuring},
		{RuleTimeout, k.timeout},
		{RuleWorksAfterwards, k.read},
	} {
		if err := conformance.Protect(c.fn); err != nil {
			errs = append(errs, fmt.Errorf("executortest: %s: %w", c.rule, err))
		}
	}
	return errors.Join(errs...)
}

// Violations returns the rule names reported in err, an error from
// TestExecutor, in order, one per violation.
func Violations(err error) []string { return conformance.Violations("executortest", err) }

type kit struct {
	ex text2sql.Executor
	fx Fixture
}

// run executes req and insists on a result: a Go error or a nil result
// is a violation here.
func (k *kit) run(req text2sql.ExecuteRequest) (*text2sql.Result, error) {
	res, err := k.ex.Execute(context.Background(), req)
	if err != nil {
		return nil, fmt.Errorf("execute(%q) returned a Go error, want a result: %w", req.SQL, err)
	}
	if res == nil {
		return nil, fmt.Errorf("execute(%q) returned no result and no error", req.SQL)
	}
	if res.RowCount != len(res.Rows) {
		return nil, fmt.Errorf("execute(%q): RowCount %d, len(Rows) %d", req.SQL, res.RowCount, len(res.Rows))
	}
	return res, nil
}

func (k *kit) selectAll(maxRows int) (*text2sql.Result, error) {
	res, err := k.run(text2sql.ExecuteRequest{SQL: "SELECT * FROM " + k.fx.Table, MaxRows: maxRows})
	if err != nil {
		return nil, err
	}
	if res.Error != nil {
		return nil, fmt.Errorf("SELECT * FROM %s: %v", k.fx.Table, res.Error)
	}
	if len(res.Columns) == 0 {
		return nil, errors.New("result has no columns")
	}
	for i, row := range res.Rows {
		if len(row) != len(res.Columns) {
			return nil, fmt.Errorf("row %d has %d values for %d columns", i, len(row), len(res.Columns))
		}
	}
	return res, nil
}

func (k *kit) read() error {
	res, err := k.selectAll(k.fx.Rows + defaultRowCapHeadroom)
	if err != nil {
		return err
	}
	if res.RowCount != k.fx.Rows || res.Truncated {
		return fmt.Errorf("SELECT * of a %d-row table with MaxRows %d: %d rows, Truncated %v", k.fx.Rows, k.fx.Rows+defaultRowCapHeadroom, res.RowCount, res.Truncated)
	}
	if res.Duration <= 0 {
		return fmt.Errorf("duration %v, want the execution's wall time", res.Duration)
	}
	return nil
}

func (k *kit) rowCap() error {
	limit := k.fx.Rows - 1
	res, err := k.selectAll(limit)
	if err != nil {
		return err
	}
	if res.RowCount != limit || !res.Truncated {
		return fmt.Errorf("SELECT * of a %d-row table with MaxRows %d: %d rows, Truncated %v; want %d rows, Truncated", k.fx.Rows, limit, res.RowCount, res.Truncated, limit)
	}
	return nil
}

func (k *kit) rowCapExact() error {
	res, err := k.selectAll(k.fx.Rows)
	if err != nil {
		return err
	}
	if res.RowCount != k.fx.Rows || res.Truncated {
		return fmt.Errorf("SELECT * of a %d-row table with MaxRows %d: %d rows, Truncated %v; want every row, not Truncated", k.fx.Rows, k.fx.Rows, res.RowCount, res.Truncated)
	}
	return nil
}

// refusal checks that res is a refusal of kind want.
func refusal(sql string, res *text2sql.Result, want text2sql.ErrorKind) error {
	if res.Error == nil {
		return fmt.Errorf("%q ran (%d rows), want a %s refusal", sql, res.RowCount, want)
	}
	if res.Error.Kind != want {
		return fmt.Errorf("%q: error kind %q (%v), want %q", sql, res.Error.Kind, res.Error, want)
	}
	if !errors.Is(res.Error, text2sql.ErrRefused) {
		return fmt.Errorf("%q: %v does not match text2sql.ErrRefused", sql, res.Error)
	}
	if len(res.Rows) != 0 {
		return fmt.Errorf("%q: a refusal with %d rows", sql, len(res.Rows))
	}
	return nil
}

func (k *kit) refuse(sql string, want text2sql.ErrorKind) func() error {
	return func() error {
		res, err := k.run(text2sql.ExecuteRequest{SQL: sql})
		if err != nil {
			return err
		}
		return refusal(sql, res, want)
	}
}

func (k *kit) refuseWrite() error {
	sql := "DELETE FROM " + k.fx.Table
	if err := k.refuse(sql, text2sql.KindNotReadOnly)(); err != nil {
		return err
	}
	res, err := k.selectAll(k.fx.Rows + defaultRowCapHeadroom)
	if err != nil {
		return fmt.Errorf("after the refused DELETE: %w", err)
	}
	if res.RowCount != k.fx.Rows {
		return fmt.Errorf("after the refused DELETE the table has %d rows, not %d", res.RowCount, k.fx.Rows)
	}
	return nil
}

func (k *kit) refuseMultiple() error {
	if err := k.refuse("SELECT 1; SELECT 2", text2sql.KindMultipleStatements)(); err != nil {
		return err
	}
	sql := "SELECT * FROM " + k.fx.Table + "; DELETE FROM " + k.fx.Table
	res, err := k.run(text2sql.ExecuteRequest{SQL: sql})
	if err != nil {
		return err
	}
	want := text2sql.KindMultipleStatements
	if res.Error != nil && res.Error.Kind == text2sql.KindNotReadOnly {
		want = text2sql.KindNotReadOnly
	}
	if err := refusal(sql, res, want); err != nil {
		return err
	}
	after, err := k.selectAll(k.fx.Rows + defaultRowCapHeadroom)
	if err != nil {
		return fmt.Errorf("after the refused %q: %w", sql, err)
	}
	if after.RowCount != k.fx.Rows {
		return fmt.Errorf("after the refused %q the table has %d rows, not %d", sql, after.RowCount, k.fx.Rows)
	}
	return nil
}

func (k *kit) refuseEmpty() error {
	var errs []error
	for _, sql := range []string{"", " \n\t", ";"} {
		if err := k.refuse(sql, text2sql.KindEmpty)(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (k *kit) kind(sql string, want text2sql.ErrorKind) func() error {
	return func() error {
		res, err := k.run(text2sql.ExecuteRequest{SQL: sql})
		if err != nil {
			return err
		}
		if res.Error == nil {
			return fmt.Errorf("%q ran (%d rows), want a %s error", sql, res.RowCount, want)
		}
		if res.Error.Kind != want {
			return fmt.Errorf("%q: error kind %q (%v), want %q", sql, res.Error.Kind, res.Error, want)
		}
		return nil
	}
}

// timed runs req under ctx and reports how long it took.
func (k *kit) timed(ctx context.Context, req text2sql.ExecuteRequest) (*text2sql.Result, time.Duration, error) {
	start := time.Now()
	res, err := k.ex.Execute(ctx, req)
	return res, time.Since(start), err
}

func (k *kit) cancelledBefore() error {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return k.wantCancelled(ctx, text2sql.ExecuteRequest{SQL: k.fx.Slow}, "execute with a cancelled context")
}

func (k *kit) cancelledDuring() error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	t := time.AfterFunc(100*time.Millisecond, cancel)
	defer t.Stop()
	return k.wantCancelled(ctx, text2sql.ExecuteRequest{SQL: k.fx.Slow, Timeout: time.Minute}, "execute of Fixture.Slow cancelled after 100ms")
}

// wantCancelled runs req under ctx, which is or will be cancelled: the
// call must fail with an error matching context.Canceled, promptly.
func (k *kit) wantCancelled(ctx context.Context, req text2sql.ExecuteRequest, what string) error {
	res, d, err := k.timed(ctx, req)
	if !errors.Is(err, context.Canceled) {
		return fmt.Errorf("%s: result %+v, error %v; want an error matching context.Canceled", what, res, err)
	}
	if d > promptly {
		return fmt.Errorf("%s returned after %v", what, d)
	}
	return nil
}

func (k *kit) timeout() error {
	res, d, err := k.timed(context.Background(), text2sql.ExecuteRequest{SQL: k.fx.Slow, Timeout: timeoutLimit})
	if err != nil {
		return fmt.Errorf("execute of Fixture.Slow with Timeout %v: Go error %v, want a %s result", timeoutLimit, err, text2sql.KindTimeout)
	}
	if res == nil || res.Error == nil || res.Error.Kind != text2sql.KindTimeout {
		return fmt.Errorf("execute of Fixture.Slow with Timeout %v: result %+v, want a %s error", timeoutLimit, res, text2sql.KindTimeout)
	}
	if d > promptly {
		return fmt.Errorf("execute of Fixture.Slow with Timeout %v returned after %v", timeoutLimit, d)
	}
	return nil
}

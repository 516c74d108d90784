package executortest_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/executor/executortest"
)

var fixture = executortest.Fixture{Table: "t", Rows: 5, ForbiddenFunction: "SELECT f()", Slow: "SELECT slow()"}

// A broken executor: it answers every statement with all five rows, caps
// nothing, returns Go errors for syntax, panics on an empty statement,
// reports no duration and ignores its context.
func broken(_ context.Context, req text2sql.ExecuteRequest) (*text2sql.Result, error) {
	if req.SQL == "SELEC 1 FROM" {
		return nil, errors.New("syntax error")
	}
	if req.SQL == "" {
		panic("empty statement")
	}
	rows := [][]any{{1}, {2}, {3}, {4}, {5}}
	return &text2sql.Result{Columns: []string{"n"}, Rows: rows, RowCount: len(rows)}, nil
}

func TestBrokenExecutorFails(t *testing.T) {
	err := executortest.TestExecutor(text2sql.ExecutorFunc(broken), fixture)
	require.Error(t, err)
	got := executortest.Violations(err)
	assert.Equal(t, []string{
		executortest.RuleRead, executortest.RuleRowCap, executortest.RuleRefuseWrite, executortest.RuleRefuseMultiple,
		executortest.RuleRefuseFunction, executortest.RuleRefuseEmpty, executortest.RuleSyntax,
		executortest.RuleUnknownTable, executortest.RuleCancelledBefore, executortest.RuleCancelledDuring,
		executortest.RuleTimeout, executortest.RuleWorksAfterwards,
	}, got)
	assert.Contains(t, err.Error(), "panic: empty statement")
	t.Log(err)
}

func TestIncompleteFixture(t *testing.T) {
	err := executortest.TestExecutor(text2sql.ExecutorFunc(broken), executortest.Fixture{Table: "t", Rows: 2})
	assert.Equal(t, []string{executortest.RuleFixture}, executortest.Violations(err))
}

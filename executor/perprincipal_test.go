package executor_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/executor"
	"github.com/text2sql-go/text2sql/identity"
)

// closer is an executor that answers with its name and counts Close.
type closer struct {
	name   string
	closed int
}

func (c *closer) Execute(context.Context, text2sql.ExecuteRequest) (*text2sql.Result, error) {
	return &text2sql.Result{Columns: []string{"who"}, Rows: [][]any{{c.name}}, RowCount: 1}, nil
}

func (c *closer) Close() error { c.closed++; return nil }

// Each call runs on its principal's executor, calls without one on the
// default, an unmapped principal is ErrForbidden; Close closes each once.
func TestPerPrincipal(t *testing.T) {
	def, a, b := &closer{name: "default"}, &closer{name: "a"}, &closer{name: "b"}
	p, err := executor.NewPerPrincipal(def, map[string]text2sql.Executor{"alice": a, "bob": b, "bob2": b})
	require.NoError(t, err)
	who := func(ctx context.Context) any {
		res, err := p.Execute(ctx, text2sql.ExecuteRequest{SQL: "SELECT 1"})
		require.NoError(t, err)
		return res.Rows[0][0]
	}
	as := func(id string) context.Context {
		return identity.WithPrincipal(context.Background(), &identity.Principal{ID: id})
	}
	assert.Equal(t, "default", who(context.Background()))
	assert.Equal(t, "a", who(as("alice")))
	assert.Equal(t, "b", who(as("bob2")))
	_, err = p.Execute(as("mallory"), text2sql.ExecuteRequest{SQL: "SELECT 1"})
	assert.ErrorIs(t, err, text2sql.ErrForbidden)
	assert.ErrorIs(t, p.Check(as("mallory"), "SELECT 1"), text2sql.ErrForbidden)
	require.NoError(t, p.Close())
	assert.Equal(t, []int{1, 1, 1}, []int{def.closed, a.closed, b.closed})

	_, err = executor.NewPerPrincipal(nil, nil)
	assert.ErrorIs(t, err, text2sql.ErrInvalidConfig)
	_, err = executor.NewPerPrincipal(def, map[string]text2sql.Executor{"x": nil})
	assert.ErrorIs(t, err, text2sql.ErrInvalidConfig)
}

package retry

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/text2sql-go/text2sql"
)

func TestBound(t *testing.T) {
	hang := func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }

	err := Bound(context.Background(), "p", 20*time.Millisecond, hang)
	var me *text2sql.ModelError
	require.ErrorAs(t, err, &me)
	assert.True(t, me.Timeout)
	assert.Equal(t, "p", me.Provider)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.ErrorIs(t, err, text2sql.ErrModel)

	// The caller's cancellation is the caller's error.
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(10 * time.Millisecond); cancel() }()
	err = Bound(ctx, "p", time.Hour, hang)
	assert.ErrorIs(t, err, context.Canceled)
	assert.False(t, errors.As(err, &me))

	// Other errors pass unchanged; no limit means no deadline.
	plain := errors.New("x")
	assert.Same(t, plain, Bound(context.Background(), "p", time.Hour, func(context.Context) error { return plain }))
	require.NoError(t, Bound(context.Background(), "p", 0, func(ctx context.Context) error {
		_, ok := ctx.Deadline()
		assert.False(t, ok)
		return nil
	}))
}

func TestTimeout(t *testing.T) {
	assert.Equal(t, DefaultTimeout, Timeout(0))
	assert.Equal(t, time.Duration(0), Timeout(-time.Second))
	assert.Equal(t, time.Second, Timeout(time.Second))
}

package openai

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/httpfake"
)

// A server that takes the request and never answers: Options.Timeout ends
// the call with a typed timeout error naming the provider and the limit.
func TestTimeoutNeverAnswers(t *testing.T) {
	srv := httpfake.New(t, httpfake.Reply{Block: true})
	m, _ := newModel(t, srv, Options{Timeout: 300 * time.Millisecond})
	start := time.Now()
	_, err := m.Complete(context.Background(), q)
	el := time.Since(start)
	var me *text2sql.ModelError
	require.ErrorAs(t, err, &me)
	assert.True(t, me.Timeout)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.ErrorIs(t, err, text2sql.ErrModel)
	assert.Equal(t, "openai: no answer within 300ms, the time limit of one model call (Options.Timeout)", err.Error())
	assert.GreaterOrEqual(t, el, 300*time.Millisecond)
	assert.Less(t, el, time.Second)
}

// The limit covers the whole call: a retried 503 and a second attempt
// that hangs end together within it.
func TestTimeoutCoversRetries(t *testing.T) {
	srv := httpfake.New(t, httpfake.Reply{Status: 503, Body: serverErrorBody}, httpfake.Reply{Block: true})
	m, _ := newModel(t, srv, Options{Timeout: 300 * time.Millisecond})
	m.client.Policy.Sleep = nil // real waits: RetryBaseDelay is 1ms
	start := time.Now()
	_, err := m.Complete(context.Background(), q)
	el := time.Since(start)
	var me *text2sql.ModelError
	require.ErrorAs(t, err, &me)
	assert.True(t, me.Timeout, "err = %v", err)
	assert.Len(t, srv.Requests(), 2)
	assert.Less(t, el, time.Second)
}

// A shorter deadline of the caller's wins: its own error, not the limit.
func TestTimeoutCallerDeadlineWins(t *testing.T) {
	srv := httpfake.New(t, httpfake.Reply{Block: true})
	m, _ := newModel(t, srv, Options{Timeout: 10 * time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := m.Complete(ctx, q)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	var me *text2sql.ModelError
	assert.False(t, errors.As(err, &me) && me.Timeout, "err = %v", err)
}

// Package providertest holds the tests every provider client (llm/…,
// embed/…) must pass against a local HTTP server, so each client is held
// to the same contract.
package providertest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/httpfake"
)

// Call makes one call of the client under test (a completion, an
// embedding) against srv, with limit as the client's Options.Timeout and
// real waits between retries.
type Call func(ctx context.Context, srv *httpfake.Server, limit time.Duration) error

// limit is the time limit the tests give the client: long enough to be
// measured, short enough for a test.
const limit = 300 * time.Millisecond

// Timeout checks a client's time limit: a server that takes the request
// and never answers ends the call within the limit with a
// *text2sql.ModelError whose Timeout is set, matching text2sql.ErrModel
// and context.DeadlineExceeded, worded "<provider>: no answer within
// 300ms, …"; the limit covers the whole call, so a retried reply (retry,
// e.g. the provider's 503) and a second attempt that hangs end within it
// after two requests; and a caller's shorter deadline wins with its own
// error.
func Timeout(t *testing.T, provider string, retry httpfake.Reply, call Call) {
	t.Run("never answers", func(t *testing.T) {
		srv := httpfake.New(t, httpfake.Reply{Block: true})
		start := time.Now()
		err := call(context.Background(), srv, limit)
		el := time.Since(start)
		var me *text2sql.ModelError
		require.ErrorAs(t, err, &me)
		assert.True(t, me.Timeout)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.ErrorIs(t, err, text2sql.ErrModel)
		assert.Equal(t, provider+": no answer within 300ms, the time limit of one model call (Options.Timeout)", err.Error())
		assert.GreaterOrEqual(t, el, limit)
		assert.Less(t, el, time.Second)
	})
	t.Run("covers retries", func(t *testing.T) {
		srv := httpfake.New(t, retry, httpfake.Reply{Block: true})
		start := time.Now()
		err := call(context.Background(), srv, limit)
		var me *text2sql.ModelError
		require.ErrorAs(t, err, &me)
		assert.True(t, me.Timeout, "err = %v", err)
		assert.Len(t, srv.Requests(), 2)
		assert.Less(t, time.Since(start), time.Second)
	})
	t.Run("caller deadline wins", func(t *testing.T) {
		srv := httpfake.New(t, httpfake.Reply{Block: true})
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		err := call(ctx, srv, 10*time.Second)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		var me *text2sql.ModelError
		assert.False(t, errors.As(err, &me) && me.Timeout, "err = %v", err)
	})
}

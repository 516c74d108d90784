package gemini

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/httpfake"
)

// A server that takes the request and never answers: Options.Timeout ends
// the request with a typed timeout error naming the provider and the limit.
func TestTimeoutNeverAnswers(t *testing.T) {
	srv := httpfake.New(t, httpfake.Reply{Block: true})
	e, _ := newEmbedder(t, srv, Options{Timeout: 300 * time.Millisecond})
	start := time.Now()
	_, err := e.EmbedQuery(context.Background(), "q")
	var me *text2sql.ModelError
	require.ErrorAs(t, err, &me)
	assert.True(t, me.Timeout)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Equal(t, "gemini: no answer within 300ms, the time limit of one model call (Options.Timeout)", err.Error())
	assert.Less(t, time.Since(start), time.Second)
}

package openai

import (
	"context"
	"testing"
	"time"

	"github.com/text2sql-go/text2sql/internal/httpfake"
	"github.com/text2sql-go/text2sql/internal/providertest"
)

// The time limit of a call (Options.Timeout), as every provider client
// keeps it: see providertest.Timeout.
func TestTimeout(t *testing.T) {
	providertest.Timeout(t, "openai", httpfake.Reply{Status: 503, Body: `{"error": {"message": "overloaded", "type": "server_error"}}`}, func(ctx context.Context, srv *httpfake.Server, limit time.Duration) error {
		e, _ := newEmbedder(t, srv, Options{Timeout: limit})
		e.client.Policy.Sleep = nil // real waits: RetryBaseDelay is 1ms
		_, err := e.EmbedQuery(ctx, "q")
		return err
	})
}

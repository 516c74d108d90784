package gemini

import (
	"context"
	"testing"
	"time"

	"github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/httpfake"
	"github.com/text2sql-go/text2sql/internal/providertest"
)

// The time limit of a call (Options.Timeout), as every provider client
// keeps it: see providertest.Timeout.
func TestTimeout(t *testing.T) {
	providertest.Timeout(t, "gemini", httpfake.Reply{Status: 503, Body: unavailableBody}, func(ctx context.Context, srv *httpfake.Server, limit time.Duration) error {
		m, _ := newModel(t, srv, Options{Timeout: limit})
		m.client.Policy.Sleep = nil // real waits: RetryBaseDelay is 1ms
		_, err := m.Complete(ctx, q)
		return err
	})
}

var q = text2sql.ModelRequest{Messages: []text2sql.Message{{Role: text2sql.RoleUser, Content: "q"}}}

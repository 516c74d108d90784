package identity_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/text2sql-go/text2sql/identity"
)

func TestPrincipal(t *testing.T) {
	ctx := context.Background()
	_, ok := identity.PrincipalFrom(ctx)
	assert.False(t, ok)
	_, ok = identity.PrincipalFrom(identity.WithPrincipal(ctx, nil))
	assert.False(t, ok, "a nil principal is none")
	p := &identity.Principal{ID: "alice", Method: "jwt"}
	got, ok := identity.PrincipalFrom(identity.WithPrincipal(ctx, p))
	assert.True(t, ok)
	assert.Same(t, p, got)
}

func TestBearerToken(t *testing.T) {
	ctx := context.Background()
	_, ok := identity.BearerTokenFrom(identity.WithBearerToken(ctx, ""))
	assert.False(t, ok, "an empty token is none")
	tok, ok := identity.BearerTokenFrom(identity.WithBearerToken(ctx, "t0k"))
	assert.True(t, ok)
	assert.Equal(t, "t0k", tok)
}

package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/text2sql-go/text2sql/executor/postgres"
)

// The rights version serve gives the server covers the --run-as map as
// loaded: another role for alice is another version (her saved answers
// and cached answers run again), the same map written otherwise is not,
// and so do --rls-claims and --run-as itself.
func TestRightsVersionCoversTheLoadedMap(t *testing.T) {
	roles := filepath.Join(t.TempDir(), "roles.yaml")
	version := func(content string, claims bool) string {
		require.NoError(t, os.WriteFile(roles, []byte(content), 0o600))
		c := &callerFlags{runAs: "map:" + roles, rlsClaims: claims, loaded: new([]string)}
		require.NoError(t, c.apply(&postgres.Options{}))
		return c.rightsVersion()
	}
	admin := version("alice: admin\nbob: reader\n", true)
	assert.Equal(t, admin, version("bob:   reader\nalice: admin\n", true), "the map, not its bytes")
	assert.NotEqual(t, admin, version("alice: reader\nbob: reader\n", true), "alice's role changed")
	assert.NotEqual(t, admin, version("alice: admin\nbob: reader\n", false), "--rls-claims")
	one := &callerFlags{runAs: "reader", loaded: new([]string)}
	assert.NotEqual(t, one.rightsVersion(), (&callerFlags{runAs: "admin", loaded: new([]string)}).rightsVersion(), "--run-as ROLE")
}

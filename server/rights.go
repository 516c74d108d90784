package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"

	"github.com/text2sql-go/text2sql/identity"
)

// rightsScope is what decides what the caller in ctx may read, as 64 hex
// digits: Config.RightsVersion (the service's side: who statements run
// as, the maps choosing it) and the caller's side (Cache.Scope, by
// default PrincipalScope: method, id and claims). It is the one key of
// everything the service reuses of an answer: the answer cache's entries
// and the rows of saved answers, which a conversation's last answer is
// saved with. A change of either side misses them, so the SQL runs again
// under the caller's current rights.
func (s *service) rightsScope(ctx context.Context) string {
	p, _ := identity.PrincipalFrom(ctx)
	scope := PrincipalScope(p)
	if s.cfg.Cache.Scope != nil {
		scope = s.cfg.Cache.Scope(p)
	}
	h := sha256.New()
	for _, part := range []string{s.cfg.RightsVersion, scope} {
		// Length-prefixed, so no two different pairs hash alike.
		h.Write([]byte{byte(len(part) >> 24), byte(len(part) >> 16), byte(len(part) >> 8), byte(len(part))})
		h.Write([]byte(part))
	}
	return hex.EncodeToString(h.Sum(nil))
}

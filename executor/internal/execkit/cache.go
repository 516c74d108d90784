package execkit

import lru "github.com/hashicorp/golang-lru/v2"

// The bounds of a Passed cache: what it holds stays below
// passedEntries × passedTextLen bytes of text (2 MiB).
const (
	passedEntries = 512
	passedTextLen = 4 << 10
)

// Passed remembers, by exact text, what a statement check that depends
// on the text alone concluded of the statements it accepted, so that a
// statement run again (Check then Execute, a retry, a dashboard's query)
// is not lexed and parsed again. Refusals are not kept, nor texts longer
// than passedTextLen bytes. A check whose decision also depends on other
// state (a server's catalog) keeps a Passed beside that state and drops
// both together. It is safe for concurrent use; a nil *Passed remembers
// nothing.
type Passed[V any] struct{ c *lru.Cache[string, V] }

// NewPassed returns an empty Passed.
func NewPassed[V any]() *Passed[V] {
	c, err := lru.New[string, V](passedEntries)
	if err != nil {
		panic(err) // only for a size below 1
	}
	return &Passed[V]{c}
}

// Get returns what was kept for text, if anything.
func (p *Passed[V]) Get(text string) (V, bool) {
	if p == nil || len(text) > passedTextLen {
		var zero V
		return zero, false
	}
	return p.c.Get(text)
}

// Put keeps v for text, an accepted statement's.
func (p *Passed[V]) Put(text string, v V) {
	if p != nil && len(text) <= passedTextLen {
		p.c.Add(text, v)
	}
}

package execkit

import (
	"hash/maphash"
	"sync"
)

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
// than passedTextLen bytes. Each text has one place, chosen by its hash,
// where it replaces the text that was there: a text seen once (every new
// question) costs a hash and one place written. A least-recently-used
// list kept the texts that came back longer, but its upkeep on every new
// text cost more than lexing the text (the SQLite executor's 1-row query,
// a new text on every call, CPU time guarded/plain: 1.21 with the list,
// 1.16 with places, 1.13 without a cache). A check whose
// decision also depends on other state (a server's catalog) keeps a
// Passed beside that state and drops both together. It is safe for
// concurrent use; a nil *Passed remembers nothing.
type Passed[V any] struct {
	seed maphash.Seed
	mu   sync.Mutex
	kept []passed[V] // passedEntries places
}

// passed is a place of a Passed; text "" marks it empty (no statement
// is the empty text).
type passed[V any] struct {
	text string
	v    V
}

// NewPassed returns an empty Passed.
func NewPassed[V any]() *Passed[V] {
	return &Passed[V]{seed: maphash.MakeSeed(), kept: make([]passed[V], passedEntries)}
}

// place returns the index of text's place.
func (p *Passed[V]) place(text string) uint64 {
	return maphash.String(p.seed, text) % passedEntries
}

// Get returns what was kept for text, if anything.
func (p *Passed[V]) Get(text string) (V, bool) {
	var zero V
	if p == nil || text == "" || len(text) > passedTextLen {
		return zero, false
	}
	i := p.place(text)
	p.mu.Lock()
	e := p.kept[i]
	p.mu.Unlock()
	if e.text != text {
		return zero, false
	}
	return e.v, true
}

// Put keeps v for text, an accepted statement's.
func (p *Passed[V]) Put(text string, v V) {
	if p == nil || text == "" || len(text) > passedTextLen {
		return
	}
	i := p.place(text)
	p.mu.Lock()
	p.kept[i] = passed[V]{text, v}
	p.mu.Unlock()
}

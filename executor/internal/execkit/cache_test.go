package execkit

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A Passed keeps texts up to passedTextLen bytes and at most
// passedEntries of them, the least recently used going first; a nil one
// keeps nothing.
func TestPassed(t *testing.T) {
	p := NewPassed[int]()
	p.Put("SELECT 1", 1)
	v, ok := p.Get("SELECT 1")
	require.True(t, ok)
	require.Equal(t, 1, v)

	long := "SELECT '" + strings.Repeat("x", passedTextLen) + "'"
	p.Put(long, 2)
	_, ok = p.Get(long)
	require.False(t, ok, "a text longer than the bound is not kept")

	for i := range passedEntries {
		p.Put("SELECT "+strconv.Itoa(i+2), i)
	}
	_, ok = p.Get("SELECT 1")
	require.False(t, ok, "the oldest entry went first")
	_, ok = p.Get("SELECT 2")
	require.True(t, ok)

	var none *Passed[int]
	none.Put("SELECT 1", 1)
	_, ok = none.Get("SELECT 1")
	require.False(t, ok)
}

package execkit

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A Passed keeps texts up to passedTextLen bytes, at most passedEntries
// of them, a text put last always, and a text until one of the same
// place replaces it; a nil one keeps nothing.
func TestPassed(t *testing.T) {
	p := NewPassed[int]()
	p.Put("SELECT 1", 1)
	v, ok := p.Get("SELECT 1")
	require.True(t, ok)
	require.Equal(t, 1, v)
	_, ok = p.Get("SELECT 2")
	require.False(t, ok)

	long := "SELECT '" + strings.Repeat("x", passedTextLen) + "'"
	p.Put(long, 2)
	_, ok = p.Get(long)
	require.False(t, ok, "a text longer than the bound is not kept")
	p.Put("", 3)
	_, ok = p.Get("")
	require.False(t, ok, "the empty text is not kept")

	kept := 0
	for i := range 4 * passedEntries {
		q := "SELECT " + strconv.Itoa(i)
		p.Put(q, i)
		v, ok := p.Get(q)
		require.True(t, ok, "the text put last is kept")
		require.Equal(t, i, v)
	}
	for i := range 4 * passedEntries {
		if v, ok := p.Get("SELECT " + strconv.Itoa(i)); ok {
			require.Equal(t, i, v)
			kept++
		}
	}
	require.LessOrEqual(t, kept, passedEntries)
	require.Greater(t, kept, passedEntries/2, "most places hold a text")

	a := "SELECT 'a'"
	p.Put(a, 1)
	for i := 0; ; i++ {
		b := "SELECT " + strconv.Itoa(i) + " AS b"
		if p.place(b) == p.place(a) {
			p.Put(b, 2)
			_, ok = p.Get(a)
			require.False(t, ok, "a text of the same place replaced it")
			break
		}
	}

	var none *Passed[int]
	none.Put("SELECT 1", 1)
	_, ok = none.Get("SELECT 1")
	require.False(t, ok)
}

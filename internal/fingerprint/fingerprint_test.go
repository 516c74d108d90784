package fingerprint

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The encoding is fixed: stored indexes are keyed by it.
func TestEncoding(t *testing.T) {
	w := New()
	w.Str("ab")
	w.List([]string{"c"})
	w.Int(258)
	want := sha256.Sum256([]byte("\x00\x00\x00\x00\x00\x00\x00\x02ab" +
		"\x00\x00\x00\x00\x00\x00\x00\x01" + "\x00\x00\x00\x00\x00\x00\x00\x01c" +
		"\x00\x00\x00\x00\x00\x00\x01\x02"))
	assert.Equal(t, hex.EncodeToString(want[:]), w.Hex())
}

// Different sequences of strings never encode alike.
func TestPrefixFree(t *testing.T) {
	a, b := New(), New()
	a.Str("ab", "c")
	b.Str("a", "bc")
	assert.NotEqual(t, a.Hex(), b.Hex())
	c, d := New(), New()
	c.List([]string{"a"})
	c.Str("b")
	d.List([]string{"a", "b"})
	assert.NotEqual(t, c.Hex(), d.Hex())
}

func TestProgram(t *testing.T) {
	id, ok := Program()
	assert.True(t, ok)
	exe, err := os.Executable()
	assert.NoError(t, err)
	assert.Contains(t, id, exe)
	again, _ := Program()
	assert.Equal(t, id, again)
}

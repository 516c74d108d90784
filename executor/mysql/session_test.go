package mysql

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// packets frames payloads as the server's packets of one response,
// sequence 1 on.
func packets(payloads ...string) *bytes.Reader {
	var b []byte
	for i, p := range payloads {
		b = append(b, byte(len(p)), byte(len(p)>>8), byte(len(p)>>16), byte(i+1))
		b = append(b, p...)
	}
	return bytes.NewReader(b)
}

// The reset's identity row is read strictly: exactly the columns asked
// for, each value whole, nothing after the last, then the closing EOF.
func TestResponseRow(t *testing.T) {
	const eof = "\xfe\x00\x00\x02\x00"
	row, err := (&response{r: packets("\x03", "def1", "def2", "def3", "\x0217\xfb\x054-abc", eof)}).row(3)
	require.NoError(t, err)
	assert.Equal(t, [][]byte{[]byte("17"), nil, []byte("4-abc")}, row)
	row, err = (&response{r: packets("\x03\x01", "def1", "def2", "def3", eof, "\x0217\xfb\x054-abc", eof)}).row(3)
	require.NoError(t, err, "metadata flag and an EOF after the column definitions")
	assert.Equal(t, [][]byte{[]byte("17"), nil, []byte("4-abc")}, row)
	for name, r := range map[string]*bytes.Reader{
		"two columns":       packets("\x02", "def1", "def2", "\x0217\xfb", eof),
		"a value missing":   packets("\x03", "def1", "def2", "def3", "\x0217\xfb", eof),
		"a value too long":  packets("\x03", "def1", "def2", "def3", "\x0217\xfb\x094-abc", eof),
		"bytes after":       packets("\x03", "def1", "def2", "def3", "\x0217\xfb\x054-abcX", eof),
		"a second row":      packets("\x03", "def1", "def2", "def3", "\x0217\xfb\x054-abc", "\x0217\xfb\x054-abc", eof),
		"out of sequence":   bytes.NewReader([]byte{1, 0, 0, 2, 3}),
		"an error for rows": packets("\xff\x15\x04#28000denied"),
	} {
		_, err := (&response{r: r}).row(3)
		assert.Error(t, err, name)
	}
}

package mysql

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
)

// packets frames payloads as the server's packets of one response,
// sequence 1 on.
func packets(payloads ...string) *bufio.Reader {
	var b []byte
	for i, p := range payloads {
		b = append(b, byte(len(p)), byte(len(p)>>8), byte(len(p)>>16), byte(i+1))
		b = append(b, p...)
	}
	return bufio.NewReader(bytes.NewReader(b))
}

// eof closes a result (an EOF, or an OK with 0xfe first).
const eof = "\xfe\x00\x00\x02\x00"

// The reset's identity row is read strictly: exactly the columns asked
// for, each value whole, nothing after the last, then the end.
func TestResponseRow(t *testing.T) {
	want := [][]byte{[]byte("17"), nil}
	row, err := (&response{r: packets("\x02", "def1", "def2", "\x0217\xfb", eof)}).row(2)
	require.NoError(t, err)
	assert.Equal(t, want, row)
	row, err = (&response{r: packets("\x02\x01", "def1", "def2", eof, "\x0217\xfb", eof)}).row(2)
	require.NoError(t, err, "metadata flag and an EOF after the column definitions")
	assert.Equal(t, want, row)
	for name, r := range map[string]*bufio.Reader{
		"three columns":     packets("\x03", "def1", "def2", "def3", "\x0217\xfb\x01x", eof),
		"a value missing":   packets("\x02", "def1", "def2", "\x0217", eof),
		"a value too long":  packets("\x02", "def1", "def2", "\x0217\x05ab", eof),
		"bytes after":       packets("\x02", "def1", "def2", "\x0217\xfbX", eof),
		"a second row":      packets("\x02", "def1", "def2", "\x0217\xfb", "\x0217\xfb", eof),
		"no row":            packets("\x02", "def1", "def2", eof, eof),
		"out of sequence":   bufio.NewReader(bytes.NewReader([]byte{1, 0, 0, 2, 2})),
		"an error for rows": packets("\xff\x15\x04#28000denied"),
	} {
		_, err := (&response{r: r}).row(2)
		assert.Error(t, err, name)
	}
}

// The account's lines are read whole, long ones too, and digested as
// digestAccount does; anything else is an error.
func TestResponseLines(t *testing.T) {
	long := strings.Repeat("g", 300)
	h := sha256.New()
	require.NoError(t, (&response{r: packets("\x01", "def", eof, "\x05GRANT", "\xfc\x2c\x01"+long, eof)}).lines(h))
	want := sha256.New()
	digestValue(want, []byte("GRANT"))
	digestValue(want, []byte(long))
	assert.Equal(t, want.Sum(nil), h.Sum(nil))
	for name, r := range map[string]*bufio.Reader{
		"two columns":  packets("\x02", "def1", "def2", "\x01a\x01b", eof),
		"no row":       packets("\x01", "def", eof, eof),
		"NULL":         packets("\x01", "def", "\xfb", eof),
		"cut short":    packets("\x01", "def", "\xfc\x2c\x01"+long[:200], eof),
		"bytes after":  packets("\x01", "def", "\x01ab", eof),
		"an error":     packets("\xff\x0c\x05#42000There is no such grant"),
		"error in row": packets("\x01", "def", "\x01a", "\xff\x0c\x05#42000x"),
	} {
		assert.Error(t, (&response{r: r}).lines(sha256.New()), name)
	}
}

// A connection is reused until it is MaxConnLifetime old, then closed:
// what the reset cannot see about the login reaches the executor then.
func TestMaxConnLifetime(t *testing.T) {
	const lifetime = 500 * time.Millisecond
	e, _, _ := setupWith(t, Options{MaxOpenConns: 1, MaxConnLifetime: lifetime})
	id := func() any {
		t.Helper()
		res, err := e.Execute(context.Background(), text2sql.ExecuteRequest{SQL: "SELECT CONNECTION_ID()"})
		require.NoError(t, err)
		require.Nil(t, res.Error)
		return res.Rows[0][0]
	}
	first := id()
	time.Sleep(lifetime)
	assert.NotEqual(t, first, id(), "a connection older than MaxConnLifetime was reused")
	assert.Equal(t, int64(2), e.sessions.dialed.Load())

	long, _, _ := setupWith(t, Options{MaxOpenConns: 1, MaxConnLifetime: time.Hour})
	e = long
	first = id()
	time.Sleep(lifetime)
	assert.Equal(t, first, id(), "a young connection is reused")
}

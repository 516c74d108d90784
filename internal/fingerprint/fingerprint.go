// Package fingerprint hashes canonical encodings: a Writer feeds SHA-256
// integers as 8 bytes big-endian and strings prefixed by their length, so
// no two different sequences of values encode alike. The knowledge base
// and the retriever's index fingerprints are written with it; changing the
// encoding changes every fingerprint, and so rebuilds stored indexes.
package fingerprint

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
)

// Writer accumulates an encoding in a SHA-256 hash. The zero Writer is not
// usable; make one with New. A Writer is not safe for concurrent use.
type Writer struct {
	h hash.Hash
	// buf collects small writes: a schema of 10,000 tables is a million
	// writes of a few bytes, each a call through hash.Hash otherwise.
	buf []byte
}

// bufSize is how much a Writer collects before it hashes it.
const bufSize = 16 << 10

// New returns a Writer with nothing written.
func New() *Writer { return &Writer{h: sha256.New(), buf: make([]byte, 0, bufSize)} }

// Int writes n as 8 bytes, big-endian.
func (w *Writer) Int(n int) {
	w.buf = binary.BigEndian.AppendUint64(w.buf, uint64(n))
	w.flush()
}

// Str writes each string as its length (Int) followed by its bytes.
func (w *Writer) Str(ss ...string) {
	for _, s := range ss {
		w.buf = binary.BigEndian.AppendUint64(w.buf, uint64(len(s)))
		w.buf = append(w.buf, s...)
		w.flush()
	}
}

// Bytes writes each byte slice as Str writes a string of the same bytes.
func (w *Writer) Bytes(bs ...[]byte) {
	for _, b := range bs {
		w.buf = binary.BigEndian.AppendUint64(w.buf, uint64(len(b)))
		w.buf = append(w.buf, b...)
		w.flush()
	}
}

// List writes the number of strings (Int) and then each string (Str).
func (w *Writer) List(ss []string) {
	w.Int(len(ss))
	w.Str(ss...)
}

// Hex returns the hex SHA-256 (64 characters) of everything written so
// far; the Writer stays usable.
func (w *Writer) Hex() string {
	w.h.Write(w.buf)
	w.buf = w.buf[:0]
	return hex.EncodeToString(w.h.Sum(nil))
}

// flush hashes the collected bytes once they pass bufSize.
func (w *Writer) flush() {
	if len(w.buf) >= bufSize {
		w.h.Write(w.buf)
		w.buf = w.buf[:0]
	}
}

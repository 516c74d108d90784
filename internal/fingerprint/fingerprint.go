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
type Writer struct{ h hash.Hash }

// New returns a Writer with nothing written.
func New() *Writer { return &Writer{h: sha256.New()} }

// Int writes n as 8 bytes, big-endian.
func (w *Writer) Int(n int) {
	var buf [8]byte
	binary.BigEndian.PutUint64(buf[:], uint64(n))
	w.h.Write(buf[:])
}

// Str writes each string as its length (Int) followed by its bytes.
func (w *Writer) Str(ss ...string) {
	for _, s := range ss {
		w.Int(len(s))
		w.h.Write([]byte(s))
	}
}

// List writes the number of strings (Int) and then each string (Str).
func (w *Writer) List(ss []string) {
	w.Int(len(ss))
	w.Str(ss...)
}

// Hex returns the hex SHA-256 (64 characters) of everything written so
// far; the Writer stays usable.
func (w *Writer) Hex() string { return hex.EncodeToString(w.h.Sum(nil)) }

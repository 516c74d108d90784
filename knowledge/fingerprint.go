package knowledge

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"strings"

	"github.com/text2sql-go/text2sql/internal/sqltext"
)

// fingerprintVersion changes whenever the canonical encoding below or the
// chunking of Documents changes, so indexes built by an older version are
// rebuilt.
const fingerprintVersion = "text2sql/knowledge/v1"

// Fingerprint returns the hex SHA-256 (64 characters) of a canonical
// encoding of the whole base: every field of every item, in order, with
// missing IDs filled in as AutoID does and names and SQL trimmed as Parse
// trims them. Equal bases give equal fingerprints however they were made (a
// YAML file, the same content in JSON, the Add methods); any change to an
// item, or to the order of items, changes it. Runs of white space in prose
// (descriptions, questions, rule texts…) count as one space, as in
// Documents, so re-wrapping a YAML block does not change the fingerprint;
// SQL and values count as written. A nil or empty base has a
// fingerprint too.
func (b *Base) Fingerprint() string {
	h := sha256.New()
	w := fpWriter{h: h}
	w.str(fingerprintVersion)
	if b == nil {
		b = &Base{}
	}
	w.section("tables", len(b.Tables))
	for _, n := range b.Tables {
		w.str(strings.TrimSpace(n.Table), collapse(n.Description))
		w.prose(n.Joins)
		w.prose(n.Questions)
		w.prose(n.Synonyms)
	}
	w.section("columns", len(b.Columns))
	for _, n := range b.Columns {
		w.str(strings.TrimSpace(n.Table), strings.TrimSpace(n.Column), collapse(n.Description), collapse(n.Units), collapse(n.Range))
	}
	w.section("rules", len(b.Rules))
	for _, r := range b.Rules {
		id := strings.TrimSpace(r.ID)
		if id == "" {
			id = AutoID("rule", r.Text)
		}
		w.str(id, collapse(r.Text))
		w.prose(r.Tables)
	}
	w.section("examples", len(b.Examples))
	for _, ex := range b.Examples {
		id := strings.TrimSpace(ex.ID)
		if id == "" {
			id = AutoID("ex", ex.Question)
		}
		w.str(id, collapse(ex.Question), sqltext.TrimTerminators(ex.SQL))
	}
	w.section("values", len(b.Values))
	for _, v := range b.Values {
		w.str(strings.TrimSpace(v.Table), strings.TrimSpace(v.Column))
		w.list(v.Values)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// fpWriter writes length-prefixed strings, so no two different sequences of
// strings encode alike.
type fpWriter struct{ h hash.Hash }

func (w fpWriter) n(n int) {
	var buf [8]byte
	binary.BigEndian.PutUint64(buf[:], uint64(n))
	w.h.Write(buf[:])
}

func (w fpWriter) str(ss ...string) {
	for _, s := range ss {
		w.n(len(s))
		w.h.Write([]byte(s))
	}
}

func (w fpWriter) list(ss []string) {
	w.n(len(ss))
	w.str(ss...)
}

// prose writes a list of prose strings, white space collapsed.
func (w fpWriter) prose(ss []string) {
	w.n(len(ss))
	for _, s := range ss {
		w.str(collapse(s))
	}
}

func (w fpWriter) section(name string, n int) {
	w.str(name)
	w.n(n)
}

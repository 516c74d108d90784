package retriever

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"strconv"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/knowledge"
	"github.com/text2sql-go/text2sql/schema"
)

// indexFingerprint is the hex SHA-256 of everything the stored vectors
// depend on: the index layout, the knowledge base, the schema, the
// documents (IDs, kinds, texts) and the embedder's name and dimension.
func indexFingerprint(kb *knowledge.Base, db *schema.Database, emb text2sql.Embedder, docs []knowledge.Document) string {
	w := fpWriter{sha256.New()}
	w.str(IndexLayout, kb.Fingerprint(), SchemaFingerprint(db), emb.Name(), strconv.Itoa(emb.Dimension()))
	w.n(len(docs))
	for _, d := range docs {
		w.str(d.ID, string(d.Kind), d.Text)
	}
	return hex.EncodeToString(w.h.Sum(nil))
}

// SchemaFingerprint returns the hex SHA-256 (64 characters) of the parts
// of db that documents are built from: for every table in order, its
// schema, name, kind and comment, every column's name, type, NOT NULL and
// comment, the primary key and the foreign keys. The database name and
// dialect are not part of it. A nil db has a fingerprint too.
func SchemaFingerprint(db *schema.Database) string {
	w := fpWriter{sha256.New()}
	w.str("text2sql/retriever/schema/v1")
	if db == nil {
		return hex.EncodeToString(w.h.Sum(nil))
	}
	w.n(len(db.Tables))
	for _, t := range db.Tables {
		if t == nil {
			w.str("<nil>")
			continue
		}
		w.str(t.Schema, t.Name, string(t.Kind), t.Comment)
		w.n(len(t.Columns))
		for _, c := range t.Columns {
			nn := "null"
			if c.NotNull {
				nn = "not null"
			}
			w.str(c.Name, c.Type, nn, c.Comment)
		}
		w.list(t.PrimaryKey)
		w.n(len(t.ForeignKeys))
		for _, fk := range t.ForeignKeys {
			w.list(fk.Columns)
			w.str(fk.RefSchema, fk.RefTable)
			w.list(fk.RefColumns)
		}
	}
	return hex.EncodeToString(w.h.Sum(nil))
}

// fpWriter writes length-prefixed strings, so different sequences of
// strings never encode alike.
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

package retriever

import (
	"strconv"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/fingerprint"
	"github.com/text2sql-go/text2sql/knowledge"
	"github.com/text2sql-go/text2sql/schema"
)

// indexFingerprint is the hex SHA-256 of everything the stored vectors
// depend on: the index layout, the knowledge base, the schema, the
// documents (IDs, kinds, texts) and the embedder's name and dimension.
func indexFingerprint(kb *knowledge.Base, db *schema.Database, emb text2sql.Embedder, docs []knowledge.Document) string {
	w := fingerprint.New()
	w.Str(IndexLayout, kb.Fingerprint(), SchemaFingerprint(db), emb.Name(), strconv.Itoa(emb.Dimension()))
	w.Int(len(docs))
	for _, d := range docs {
		w.Str(d.ID, string(d.Kind), d.Text)
	}
	return w.Hex()
}

// SchemaFingerprint returns the hex SHA-256 (64 characters) of the parts
// of db that documents are built from: for every table in order, its
// schema, name, kind and comment, every column's name, type, NOT NULL and
// comment, the primary key and the foreign keys. The database name and
// dialect are not part of it. A nil db has a fingerprint too.
func SchemaFingerprint(db *schema.Database) string {
	w := fingerprint.New()
	w.Str("text2sql/retriever/schema/v1")
	if db == nil {
		return w.Hex()
	}
	w.Int(len(db.Tables))
	for _, t := range db.Tables {
		if t == nil {
			w.Str("<nil>")
			continue
		}
		w.Str(t.Schema, t.Name, string(t.Kind), t.Comment)
		w.Int(len(t.Columns))
		for _, c := range t.Columns {
			nn := "null"
			if c.NotNull {
				nn = "not null"
			}
			w.Str(c.Name, c.Type, nn, c.Comment)
		}
		w.List(t.PrimaryKey)
		w.Int(len(t.ForeignKeys))
		for _, fk := range t.ForeignKeys {
			w.List(fk.Columns)
			w.Str(fk.RefSchema, fk.RefTable)
			w.List(fk.RefColumns)
		}
	}
	return w.Hex()
}

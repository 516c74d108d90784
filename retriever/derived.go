package retriever

import (
	"encoding/json"
	"errors"
	"strconv"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/bm25"
	"github.com/text2sql-go/text2sql/internal/fingerprint"
	"github.com/text2sql-go/text2sql/internal/gobfile"
	"github.com/text2sql-go/text2sql/internal/stagekit"
	"github.com/text2sql-go/text2sql/knowledge"
	"github.com/text2sql-go/text2sql/schema"
)

// DerivedFile is the file, in HybridOptions.CacheDir, where NewHybrid
// keeps what it derives from the schema and the knowledge base.
const DerivedFile = "derived.gob"

// derivedLayout names the layout of DerivedFile; it enters the key.
const derivedLayout = "text2sql/retriever/derived/v1"

// derived is what NewHybrid derives from the schema, the knowledge base,
// InferJoins and the embedder (the parts of Hybrid that hold no
// pointers, tables by their index in the schema), as DerivedFile keeps
// it under Key.
type derived struct {
	Key string
	// Inferred are the join keys InferForeignKeys added, by table.
	Inferred map[int][]schema.ForeignKey
	// DDLTokens are the estimated tokens of each table's DDL.
	DDLTokens []int
	Docs      []knowledge.Document
	// DocTables are the tables each document is about.
	DocTables [][]int32
	// BM and NSBM are the BM25 indexes over the documents and over the
	// namespaces (bm25.Index.MarshalBinary; NSBM nil without
	// namespaces), NSNames the namespace of each NSBM document.
	BM, NSBM []byte
	NSNames  []string
	// Fingerprint is the index fingerprint (indexFingerprint).
	Fingerprint string
}

// derivedKey returns the key of what NewHybrid derives for db, kb, infer
// and emb by the running program; ok is false when the program is
// unknown (fingerprint.Program), and nothing is then cached. It covers
// everything the derivation reads: the schema (SchemaFingerprint, with
// the dialects DDL is written in and which keys are marked inferred),
// the whole knowledge base as encoded (drafts aside: Documents ignores
// them), the embedder's name and dimension, and the program, whose code
// derives.
func derivedKey(db *schema.Database, kb *knowledge.Base, infer bool, emb text2sql.Embedder) (key string, ok bool) {
	program, ok := fingerprint.Program()
	if !ok {
		return "", false
	}
	plain := *kb
	plain.Drafts = nil
	kbJSON, err := json.Marshal(&plain)
	if err != nil {
		return "", false
	}
	w := fingerprint.New()
	w.Str(derivedLayout, IndexLayout, program, SchemaFingerprint(db), string(db.Dialect), strconv.FormatBool(infer),
		emb.Name(), strconv.Itoa(emb.Dimension()))
	for _, t := range db.Tables {
		w.Str(string(t.Dialect))
		for _, fk := range t.ForeignKeys {
			w.Str(strconv.FormatBool(fk.Inferred)) // DDL writes an inferred key as a comment
		}
	}
	w.Bytes(kbJSON)
	return w.Hex(), true
}

// derive computes d for schema db (before inference) and kb, and sets
// the Hybrid's schema, DDL sizes, documents and BM25 indexes.
func (h *Hybrid) derive(db *schema.Database, infer bool, kb *knowledge.Base) (*derived, error) {
	d := &derived{Inferred: map[int][]schema.ForeignKey{}}
	h.db = db
	if infer {
		h.db = schema.InferForeignKeys(db)
		for i, t := range h.db.Tables {
			if n := len(db.Tables[i].ForeignKeys); len(t.ForeignKeys) > n {
				d.Inferred[i] = t.ForeignKeys[n:]
			}
		}
	}
	h.ddlTokens = make(map[*schema.Table]int, len(h.db.Tables))
	d.DDLTokens = make([]int, len(h.db.Tables))
	for i, t := range h.db.Tables {
		d.DDLTokens[i] = stagekit.EstimateTokens(h.db.DDL([]*schema.Table{t}))
		h.ddlTokens[t] = d.DDLTokens[i]
	}
	h.namespaces = namespaces(h.db)
	h.docs = kb.Documents(h.db)
	tokens := make([][]string, len(h.docs))
	h.docTables = make([][]*schema.Table, len(h.docs))
	ix := h.db.Index()
	inParallel(len(h.docs), func(i int) {
		tokens[i] = docTokens(ix, h.docs[i])
		h.docTables[i] = tablesOf(ix, h.docs[i])
	})
	h.bm = bm25.NewTokens(tokens, bm25.DefaultParams())
	h.nsBM, h.nsNames = namespaceIndex(h.namespaces, h.docTables, tokens)
	d.Docs, d.NSNames, d.Fingerprint = h.docs, h.nsNames, indexFingerprint(kb, h.db, h.emb, h.docs)
	at := make(map[*schema.Table]int32, len(h.db.Tables))
	for i, t := range h.db.Tables {
		at[t] = int32(i)
	}
	d.DocTables = make([][]int32, len(h.docTables))
	for i, ts := range h.docTables {
		for _, t := range ts {
			d.DocTables[i] = append(d.DocTables[i], at[t])
		}
	}
	var err error
	if d.BM, err = h.bm.MarshalBinary(); err != nil {
		return nil, err
	}
	if h.nsBM != nil {
		if d.NSBM, err = h.nsBM.MarshalBinary(); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// restore sets what derive sets from d, derived earlier from db.
func (h *Hybrid) restore(db *schema.Database, d *derived) error {
	n := len(db.Tables)
	if len(d.DDLTokens) != n || len(d.DocTables) != len(d.Docs) {
		return errors.New("retriever: derived data of another schema")
	}
	out := *db
	out.Tables = append([]*schema.Table(nil), db.Tables...)
	for i, fks := range d.Inferred {
		if i < 0 || i >= n {
			return errors.New("retriever: derived data of another schema")
		}
		t := *out.Tables[i]
		t.ForeignKeys = append(append([]schema.ForeignKey(nil), t.ForeignKeys...), fks...)
		out.Tables[i] = &t
	}
	bm, err := bm25.UnmarshalBinary(d.BM)
	if err != nil {
		return err
	}
	var nsBM *bm25.Index
	if d.NSBM != nil {
		if nsBM, err = bm25.UnmarshalBinary(d.NSBM); err != nil {
			return err
		}
	}
	docTables := make([][]*schema.Table, len(d.DocTables))
	for i, ts := range d.DocTables {
		for _, j := range ts {
			if j < 0 || int(j) >= n {
				return errors.New("retriever: derived data of another schema")
			}
			docTables[i] = append(docTables[i], out.Tables[j])
		}
	}
	h.db, h.docs, h.docTables, h.bm, h.nsBM, h.nsNames = &out, d.Docs, docTables, bm, nsBM, d.NSNames
	h.ddlTokens = make(map[*schema.Table]int, n)
	for i, t := range h.db.Tables {
		h.ddlTokens[t] = d.DDLTokens[i]
	}
	h.namespaces = namespaces(h.db)
	return nil
}

// readDerived returns the derived data in the file at path when it is
// key's.
func readDerived(path, key string) (*derived, bool) {
	var d derived
	if err := gobfile.Read(path, &d); err != nil || d.Key != key {
		return nil, false
	}
	return &d, true
}

package knowledge

import (
	"strings"

	"github.com/text2sql-go/text2sql/internal/fingerprint"
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
// SQL and values count as written. Drafts are left out: they are not
// indexed until Accept moves them into the base. A nil or empty base has a
// fingerprint too.
func (b *Base) Fingerprint() string {
	w := fingerprint.New()
	w.Str(fingerprintVersion)
	if b == nil {
		b = &Base{}
	}
	section(w, "tables", len(b.Tables))
	for _, n := range b.Tables {
		w.Str(strings.TrimSpace(n.Table), collapse(n.Description))
		prose(w, n.Joins)
		prose(w, n.Questions)
		prose(w, n.Synonyms)
	}
	section(w, "columns", len(b.Columns))
	for _, n := range b.Columns {
		w.Str(strings.TrimSpace(n.Table), strings.TrimSpace(n.Column), collapse(n.Description), collapse(n.Units), collapse(n.Range))
	}
	section(w, "rules", len(b.Rules))
	for _, r := range b.Rules {
		id := strings.TrimSpace(r.ID)
		if id == "" {
			id = AutoID("rule", r.Text)
		}
		w.Str(id, collapse(r.Text))
		prose(w, r.Tables)
	}
	section(w, "examples", len(b.Examples))
	for _, ex := range b.Examples {
		id := strings.TrimSpace(ex.ID)
		if id == "" {
			id = AutoID("ex", ex.Question)
		}
		w.Str(id, collapse(ex.Question), sqltext.TrimTerminators(ex.SQL))
	}
	section(w, "values", len(b.Values))
	for _, v := range b.Values {
		w.Str(strings.TrimSpace(v.Table), strings.TrimSpace(v.Column))
		w.List(v.Values)
	}
	return w.Hex()
}

// prose writes a list of prose strings, white space collapsed.
func prose(w *fingerprint.Writer, ss []string) {
	w.Int(len(ss))
	for _, s := range ss {
		w.Str(collapse(s))
	}
}

// section writes the name and the item count of a section of the base.
func section(w *fingerprint.Writer, name string, n int) {
	w.Str(name)
	w.Int(n)
}

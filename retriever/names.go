package retriever

import (
	"strings"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/bm25"
	"github.com/text2sql-go/text2sql/knowledge"
	"github.com/text2sql-go/text2sql/schema"
)

// Name tokens let BM25 reward a question that mentions a table or column
// by its whole name, however the name is written: a table document gets
// "=" + its name's stemmed parts concatenated ("singer_in_concert" →
// "=singerinconcert", "Highschooler" → "=highschooler") and the same for
// each of its columns; a column or value document gets its column's. A
// query gets one such token per run of one to maxNameWords adjacent words
// ("high schoolers" → "=high", "=schooler", "=highschooler"), so an exact
// mention outranks documents that merely repeat one of the words.
const (
	namePrefix   = "="
	maxNameWords = 4
)

func nameToken(name string) string {
	parts := bm25.Parts(name)
	if len(parts) == 0 {
		return ""
	}
	return namePrefix + strings.Join(parts, "")
}

// docTokens returns the BM25 terms of a document: its text's terms plus
// name tokens.
func docTokens(db *schema.Index, d knowledge.Document) []string {
	toks := bm25.Tokenize(d.Text)
	add := func(name string) {
		if tok := nameToken(name); tok != "" {
			toks = append(toks, tok)
		}
	}
	switch d.Kind {
	case text2sql.ItemTable:
		t := db.Lookup(d.Table)
		if t == nil {
			add(d.Table[strings.LastIndexByte(d.Table, '.')+1:])
			break
		}
		add(t.Name)
		for _, c := range t.Columns {
			add(c.Name)
		}
	case text2sql.ItemColumn, text2sql.ItemValue:
		add(d.Column)
	}
	return toks
}

// queryTokens returns the BM25 terms of a query: its terms plus the name
// tokens of every run of up to maxNameWords adjacent words.
func queryTokens(q string) []string {
	toks := bm25.Tokenize(q)
	parts := bm25.Parts(q)
	for n := 1; n <= maxNameWords; n++ {
		for i := 0; i+n <= len(parts); i++ {
			toks = append(toks, namePrefix+strings.Join(parts[i:i+n], ""))
		}
	}
	return toks
}

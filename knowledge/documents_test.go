package knowledge_test

import (
	"context"
	"strings"
	"testing"

	_ "github.com/mattn/go-sqlite3"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/knowledge"
	"github.com/text2sql-go/text2sql/schema"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDocumentsConcertSinger(t *testing.T) {
	_, _, sch := concertSinger(t)
	b, err := knowledge.Parse([]byte(concertYAML), "yaml")
	require.NoError(t, err)
	docs := b.Documents(sch)
	var ids []string
	byID := map[string]knowledge.Document{}
	for _, d := range docs {
		ids = append(ids, d.ID)
		byID[d.ID] = d
	}
	exID := knowledge.AutoID("ex", "Show the name and capacity of each stadium.")
	want := []string{
		// One per table of the schema, in schema order, notes or not.
		"table:concert", "table:singer", "table:singer_in_concert", "table:stadium",
		"column:stadium.Capacity", "column:singer.Age",
		"rule:avg-age", "rule:" + knowledge.AutoID("rule", "A concert's year is stored as text."),
		"example:q1", "example:" + exID,
		"value:singer.Country",
	}
	require.Equal(t, want, ids, "ids")
	assert.Equal(t, docs, b.Documents(sch), "Documents is not deterministic")

	// A table with a note: description, synonyms, questions, columns with
	// their names split into words.
	singer := byID["table:singer"]
	for _, s := range []string{"Table singer.", "Performers, with", "Also called: artist, performer, vocalist.",
		"How many singers are there?", "Song_release_year (song release year)", "Singer_ID (singer id)",
		"Referenced by: singer_in_concert (by Singer_ID)"} {
		assert.Contains(t, singer.Text, s, "table:singer")
	}
	assert.Equal(t, text2sql.ItemTable, singer.Kind, "table:singer = %+v", singer)
	assert.Equal(t, "singer", singer.Table, "table:singer = %+v", singer)
	// A table without a note still gets its name, references and columns.
	concert := byID["table:concert"]
	for _, s := range []string{"Table concert.", "References: stadium (by Stadium_ID)", "concert_Name (concert name)", "Theme"} {
		assert.Contains(t, concert.Text, s, "table:concert")
	}
	// A prompt shows the DDL beside the notes: a table's note keeps only
	// what the DDL does not say, and is empty for a table without a note.
	assert.True(t, strings.HasPrefix(singer.Note, "Table singer.\nPerformers, with"), "table:singer note:\n%s", singer.Note)
	assert.Contains(t, singer.Note, "Also called: artist, performer, vocalist.")
	for _, s := range []string{"Columns:", "Referenced by:", "Song_release_year"} {
		assert.NotContains(t, singer.Note, s, "table:singer note repeats the DDL")
	}
	assert.Empty(t, concert.Note, "table:concert has no note")
	for _, d := range docs {
		if d.Kind != text2sql.ItemTable {
			assert.Equal(t, d.Text, d.Note, "%s: the note of a non-table document is its text", d.ID)
		}
	}
	sic := byID["table:singer_in_concert"]
	assert.True(t, strings.HasPrefix(sic.Text, "Table singer_in_concert (singer in concert)."), "table:singer_in_concert:\n%s", sic.Text)
	assert.Contains(t, sic.Text, "Joins: singer_in_concert.Singer_ID = singer.Singer_ID; ", "table:singer_in_concert")

	col := byID["column:singer.Age"]
	assert.Equal(t, text2sql.ItemColumn, col.Kind, "column doc = %+v", col)
	assert.Equal(t, "singer", col.Table, "column doc = %+v", col)
	assert.Equal(t, "Age", col.Column, "column doc = %+v", col)
	assert.Equal(t, "Column singer.Age of table singer, type INT.\nAge in years.\nRange: 18 to 80.", col.Text, "column doc")
	rule := byID["rule:avg-age"]
	assert.Equal(t, text2sql.ItemRule, rule.Kind, "rule doc = %+v", rule)
	assert.Equal(t, []string{"singer"}, rule.Tables, "rule doc = %+v", rule)
	assert.True(t, strings.HasSuffix(rule.Text, "\nTables: singer."), "rule doc = %+v", rule)
	// An example's text is its question only; the SQL travels beside it.
	ex := byID["example:"+exID]
	assert.Equal(t, text2sql.ItemExample, ex.Kind, "example doc = %+v", ex)
	assert.Equal(t, "Show the name and capacity of each stadium.", ex.Text, "example doc")
	assert.Equal(t, "SELECT Name, Capacity\nFROM stadium", ex.SQL, "example doc")
	assert.Equal(t, []string{"stadium"}, ex.Tables, "example doc")
	val := byID["value:singer.Country"]
	assert.Equal(t, text2sql.ItemValue, val.Kind, "value doc = %+v", val)
	assert.Equal(t, "singer", val.Table, "value doc = %+v", val)
	assert.Equal(t, "Country", val.Column, "value doc = %+v", val)
	assert.Equal(t, "Values of singer.Country: 'France', 'Netherlands', 'United States'.", val.Text, "value doc")
}

// Notes spelled differently from the schema get the schema's names, so IDs
// do not depend on how a note is written.
func TestDocumentsCanonicalNames(t *testing.T) {
	_, _, sch := concertSinger(t)
	b := &knowledge.Base{
		Tables:   []knowledge.TableNote{{Table: "SINGER", Description: "People."}, {Table: "nowhere"}},
		Columns:  []knowledge.ColumnNote{{Table: "Stadium", Column: "capacity", Units: "seats"}, {Table: "stadium", Column: "roof", Units: "m"}},
		Values:   []knowledge.ValueList{{Table: "singer", Column: "country", Values: []string{"France"}}},
		Examples: []knowledge.Example{{ID: "x", Question: "q", SQL: "SELECT * FROM Singer s JOIN singer_in_concert USING (Singer_ID)"}},
	}
	var ids []string
	for _, d := range b.Documents(sch) {
		ids = append(ids, d.ID)
		if d.ID == "table:singer" {
			assert.Contains(t, d.Text, "People.", "note not attached")
		}
		if d.ID == "example:x" {
			assert.Equal(t, []string{"singer", "singer_in_concert"}, d.Tables, "example tables")
		}
	}
	want := []string{"table:concert", "table:singer", "table:singer_in_concert", "table:stadium", "column:stadium.Capacity", "example:x", "value:singer.Country"}
	assert.Equal(t, want, ids, "ids")
	// Without a schema, names are used as written and only notes make
	// table documents.
	ids = nil
	for _, d := range b.Documents(nil) {
		ids = append(ids, d.ID)
	}
	want = []string{"table:SINGER", "table:nowhere", "column:Stadium.capacity", "column:stadium.roof", "example:x", "value:singer.country"}
	assert.Equal(t, want, ids, "no schema: ids")
}

func TestDocumentsSchemaQualifiedAndViews(t *testing.T) {
	sch := &schema.Database{Dialect: text2sql.DialectPostgres, Tables: []*schema.Table{
		{Schema: "public", Name: "customers", Columns: []schema.Column{{Name: "id"}, {Name: "fullName"}}},
		{Schema: "sales", Name: "orders", Columns: []schema.Column{{Name: "id"}, {Name: "customer_id"}},
			ForeignKeys: []schema.ForeignKey{{Columns: []string{"customer_id"}, RefSchema: "public", RefTable: "customers"}}},
		{Schema: "sales", Name: "big_orders", Kind: schema.KindView, Columns: []schema.Column{{Name: "id"}}},
	}}
	b := &knowledge.Base{Tables: []knowledge.TableNote{{Table: "orders", Synonyms: []string{"purchases"}}}}
	docs := b.Documents(sch)
	require.Len(t, docs, 3, "docs = %+v", docs)
	require.Equal(t, "table:sales.orders", docs[1].ID, "docs = %+v", docs)
	require.Contains(t, docs[1].Text, "purchases", "docs = %+v", docs)
	require.Contains(t, docs[1].Text, "References: public.customers (by customer_id)", "docs = %+v", docs)
	assert.Contains(t, docs[0].Text, "fullName (full name)", "customers")
	assert.Contains(t, docs[0].Text, "Referenced by: sales.orders (by customer_id)", "customers")
	assert.True(t, strings.HasPrefix(docs[2].Text, "View sales.big_orders (big orders)."), "view: %s", docs[2].Text)
}

func TestFingerprint(t *testing.T) {
	b, err := knowledge.Parse([]byte(concertYAML), "yaml")
	require.NoError(t, err)
	fp := b.Fingerprint()
	require.Len(t, fp, 64, "fingerprint %q", fp)
	require.Empty(t, strings.Trim(fp, "0123456789abcdef"), "fingerprint %q", fp)
	var empty *knowledge.Base
	assert.NotEqual(t, fp, empty.Fingerprint(), "empty fingerprints")
	assert.Equal(t, (&knowledge.Base{}).Fingerprint(), empty.Fingerprint(), "empty fingerprints")
	// Re-wrapping prose keeps it; any change of content changes it.
	rewrapped := strings.Replace(concertYAML, "description: Performers, with their country, best-known song and age.",
		"description: >\n      Performers, with their country,\n      best-known song and age.", 1)
	b2, err := knowledge.Parse([]byte(rewrapped), "yaml")
	require.NoError(t, err)
	assert.Equal(t, fp, b2.Fingerprint(), "re-wrapping a description changed the fingerprint")
	// Filling in the automatic IDs by hand changes nothing.
	b3, _ := knowledge.Parse([]byte(concertYAML), "yaml")
	b3.Rules[1].ID = ""
	b3.Examples[1].ID = ""
	assert.Equal(t, fp, b3.Fingerprint(), "automatic IDs are not part of the canonical form")
	seen := map[string]string{fp: "original"}
	for name, mutate := range map[string]func(b *knowledge.Base){
		"synonym":        func(b *knowledge.Base) { b.Tables[0].Synonyms = append(b.Tables[0].Synonyms, "crooner") },
		"sql":            func(b *knowledge.Base) { b.Examples[0].SQL = "SELECT count(*) FROM singer WHERE 1" },
		"value":          func(b *knowledge.Base) { b.Values[0].Values[0] = "france" },
		"units":          func(b *knowledge.Base) { b.Columns[0].Units = "people" },
		"order":          func(b *knowledge.Base) { b.Rules[0], b.Rules[1] = b.Rules[1], b.Rules[0] },
		"moved string":   func(b *knowledge.Base) { b.Tables[0].Synonyms = []string{"artist", "performervocalist"} },
		"rule table":     func(b *knowledge.Base) { b.Rules[0].Tables = nil },
		"example id":     func(b *knowledge.Base) { b.Examples[0].ID = "q9" },
		"question":       func(b *knowledge.Base) { b.Examples[0].Question += "!" },
		"column note tb": func(b *knowledge.Base) { b.Columns[1].Table = "stadium" },
	} {
		c, _ := knowledge.Parse([]byte(concertYAML), "yaml")
		mutate(c)
		got := c.Fingerprint()
		assert.NotContains(t, seen, got, "%s: same fingerprint as %s", name, seen[got])
		seen[got] = name
	}
}

func TestCollectValuesConcertSinger(t *testing.T) {
	path, db, sch := concertSinger(t)
	lists, err := knowledge.CollectValues(context.Background(), db, sch, knowledge.ValueOptions{})
	require.NoError(t, err)
	got := map[string][]string{}
	var order []string
	for _, l := range lists {
		key := l.Table + "." + l.Column
		got[key] = l.Values
		order = append(order, key)
	}
	// Text columns only, ids and keys skipped (concert.Stadium_ID is TEXT
	// but a key), schema order.
	want := []string{"concert.concert_Name", "concert.Theme", "concert.Year", "singer.Name", "singer.Country",
		"singer.Song_Name", "singer.Song_release_year", "stadium.Location", "stadium.Name"}
	assert.Equal(t, want, order, "columns")
	assert.Equal(t, []string{"France", "Netherlands", "United States"}, got["singer.Country"], "singer.Country")
	assert.Equal(t, []string{"2014", "2015"}, got["concert.Year"], "concert.Year")
	// A lower cap skips columns with more distinct values.
	lists, err = knowledge.CollectValues(context.Background(), db, sch, knowledge.ValueOptions{MaxDistinct: 3, Tables: []string{"SINGER"}})
	require.NoError(t, err)
	if assert.Len(t, lists, 1, "MaxDistinct 3: %+v", lists) {
		assert.Equal(t, "Country", lists[0].Column, "MaxDistinct 3: %+v", lists)
	}
	// The lists feed a base that validates and chunks.
	var b knowledge.Base
	for _, l := range lists {
		require.NoError(t, b.AddValues(l))
	}
	require.NoError(t, b.Validate(context.Background(), sch, guardFor(t, path)))
	_, err = knowledge.CollectValues(context.Background(), db, sch, knowledge.ValueOptions{Tables: []string{"nope"}})
	assert.Error(t, err, "unknown table accepted")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = knowledge.CollectValues(ctx, db, sch, knowledge.ValueOptions{})
	assert.Error(t, err, "cancelled context ignored")
}

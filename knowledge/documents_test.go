package knowledge_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	_ "github.com/mattn/go-sqlite3"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/knowledge"
	"github.com/text2sql-go/text2sql/schema"
)

func TestDocumentsConcertSinger(t *testing.T) {
	_, _, sch := concertSinger(t)
	b, err := knowledge.Parse([]byte(concertYAML), "yaml")
	if err != nil {
		t.Fatal(err)
	}
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
	if !reflect.DeepEqual(ids, want) {
		t.Fatalf("ids:\n%q\nwant\n%q", ids, want)
	}
	if !reflect.DeepEqual(b.Documents(sch), docs) {
		t.Error("Documents is not deterministic")
	}

	// A table with a note: description, synonyms, questions, columns with
	// their names split into words.
	singer := byID["table:singer"]
	for _, s := range []string{"Table singer.", "Performers, with", "Also called: artist, performer, vocalist.",
		"How many singers are there?", "Song_release_year (song release year)", "Singer_ID (singer id)",
		"Referenced by: singer_in_concert (by Singer_ID)"} {
		if !strings.Contains(singer.Text, s) {
			t.Errorf("table:singer lacks %q:\n%s", s, singer.Text)
		}
	}
	if singer.Kind != text2sql.KindTable || singer.Table != "singer" {
		t.Errorf("table:singer = %+v", singer)
	}
	// A table without a note still gets its name, references and columns.
	concert := byID["table:concert"]
	for _, s := range []string{"Table concert.", "References: stadium (by Stadium_ID)", "concert_Name (concert name)", "Theme"} {
		if !strings.Contains(concert.Text, s) {
			t.Errorf("table:concert lacks %q:\n%s", s, concert.Text)
		}
	}
	sic := byID["table:singer_in_concert"]
	if !strings.HasPrefix(sic.Text, "Table singer_in_concert (singer in concert).") || !strings.Contains(sic.Text, "Joins: singer_in_concert.Singer_ID = singer.Singer_ID; ") {
		t.Errorf("table:singer_in_concert:\n%s", sic.Text)
	}

	col := byID["column:singer.Age"]
	if col.Kind != text2sql.KindColumn || col.Table != "singer" || col.Column != "Age" ||
		col.Text != "Column singer.Age of table singer, type INT.\nAge in years.\nRange: 18 to 80." {
		t.Errorf("column doc = %+v", col)
	}
	rule := byID["rule:avg-age"]
	if rule.Kind != text2sql.KindRule || !reflect.DeepEqual(rule.Tables, []string{"singer"}) || !strings.HasSuffix(rule.Text, "\nTables: singer.") {
		t.Errorf("rule doc = %+v", rule)
	}
	// An example's text is its question only; the SQL travels beside it.
	ex := byID["example:"+exID]
	if ex.Kind != text2sql.KindExample || ex.Text != "Show the name and capacity of each stadium." ||
		ex.SQL != "SELECT Name, Capacity\nFROM stadium" || !reflect.DeepEqual(ex.Tables, []string{"stadium"}) {
		t.Errorf("example doc = %+v", ex)
	}
	val := byID["value:singer.Country"]
	if val.Kind != text2sql.KindValue || val.Table != "singer" || val.Column != "Country" ||
		val.Text != "Values of singer.Country: 'France', 'Netherlands', 'United States'." {
		t.Errorf("value doc = %+v", val)
	}
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
		if d.ID == "table:singer" && !strings.Contains(d.Text, "People.") {
			t.Errorf("note not attached: %s", d.Text)
		}
		if d.ID == "example:x" && !reflect.DeepEqual(d.Tables, []string{"singer", "singer_in_concert"}) {
			t.Errorf("example tables %q", d.Tables)
		}
	}
	want := []string{"table:concert", "table:singer", "table:singer_in_concert", "table:stadium", "column:stadium.Capacity", "example:x", "value:singer.Country"}
	if !reflect.DeepEqual(ids, want) {
		t.Errorf("ids %q, want %q", ids, want)
	}
	// Without a schema, names are used as written and only notes make
	// table documents.
	ids = nil
	for _, d := range b.Documents(nil) {
		ids = append(ids, d.ID)
	}
	want = []string{"table:SINGER", "table:nowhere", "column:Stadium.capacity", "column:stadium.roof", "example:x", "value:singer.country"}
	if !reflect.DeepEqual(ids, want) {
		t.Errorf("no schema: ids %q, want %q", ids, want)
	}
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
	if len(docs) != 3 || docs[1].ID != "table:sales.orders" || !strings.Contains(docs[1].Text, "purchases") ||
		!strings.Contains(docs[1].Text, "References: public.customers (by customer_id)") {
		t.Fatalf("docs = %+v", docs)
	}
	if !strings.Contains(docs[0].Text, "fullName (full name)") || !strings.Contains(docs[0].Text, "Referenced by: sales.orders (by customer_id)") {
		t.Errorf("customers: %s", docs[0].Text)
	}
	if !strings.HasPrefix(docs[2].Text, "View sales.big_orders (big orders).") {
		t.Errorf("view: %s", docs[2].Text)
	}
}

func TestFingerprint(t *testing.T) {
	b, err := knowledge.Parse([]byte(concertYAML), "yaml")
	if err != nil {
		t.Fatal(err)
	}
	fp := b.Fingerprint()
	if len(fp) != 64 || strings.Trim(fp, "0123456789abcdef") != "" {
		t.Fatalf("fingerprint %q", fp)
	}
	var empty *knowledge.Base
	if empty.Fingerprint() == fp || empty.Fingerprint() != (&knowledge.Base{}).Fingerprint() {
		t.Error("empty fingerprints")
	}
	// Re-wrapping prose keeps it; any change of content changes it.
	rewrapped := strings.Replace(concertYAML, "description: Performers, with their country, best-known song and age.",
		"description: >\n      Performers, with their country,\n      best-known song and age.", 1)
	b2, err := knowledge.Parse([]byte(rewrapped), "yaml")
	if err != nil {
		t.Fatal(err)
	}
	if b2.Fingerprint() != fp {
		t.Error("re-wrapping a description changed the fingerprint")
	}
	// Filling in the automatic IDs by hand changes nothing.
	b3, _ := knowledge.Parse([]byte(concertYAML), "yaml")
	b3.Rules[1].ID = ""
	b3.Examples[1].ID = ""
	if b3.Fingerprint() != fp {
		t.Error("automatic IDs are not part of the canonical form")
	}
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
		if prev, dup := seen[got]; dup {
			t.Errorf("%s: same fingerprint as %s", name, prev)
		}
		seen[got] = name
	}
}

func TestCollectValuesConcertSinger(t *testing.T) {
	path, db, sch := concertSinger(t)
	lists, err := knowledge.CollectValues(context.Background(), db, sch, knowledge.ValueOptions{})
	if err != nil {
		t.Fatal(err)
	}
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
	if !reflect.DeepEqual(order, want) {
		t.Errorf("columns %q\nwant    %q", order, want)
	}
	if !reflect.DeepEqual(got["singer.Country"], []string{"France", "Netherlands", "United States"}) {
		t.Errorf("singer.Country = %q", got["singer.Country"])
	}
	if !reflect.DeepEqual(got["concert.Year"], []string{"2014", "2015"}) {
		t.Errorf("concert.Year = %q", got["concert.Year"])
	}
	// A lower cap skips columns with more distinct values.
	lists, err = knowledge.CollectValues(context.Background(), db, sch, knowledge.ValueOptions{MaxDistinct: 3, Tables: []string{"SINGER"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(lists) != 1 || lists[0].Column != "Country" {
		t.Errorf("MaxDistinct 3: %+v", lists)
	}
	// The lists feed a base that validates and chunks.
	var b knowledge.Base
	for _, l := range lists {
		if err := b.AddValues(l); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Validate(context.Background(), sch, guardFor(t, path)); err != nil {
		t.Fatal(err)
	}
	if _, err := knowledge.CollectValues(context.Background(), db, sch, knowledge.ValueOptions{Tables: []string{"nope"}}); err == nil {
		t.Error("unknown table accepted")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := knowledge.CollectValues(ctx, db, sch, knowledge.ValueOptions{}); err == nil {
		t.Error("cancelled context ignored")
	}
}

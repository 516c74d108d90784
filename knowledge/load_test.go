package knowledge_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/text2sql-go/text2sql/knowledge"
)

const concertYAML = `# Knowledge about Spider's concert_singer database.
tables:
  - table: singer
    description: Performers, with their country, best-known song and age.
    synonyms: [artist, performer, vocalist]
    questions:
      - How many singers are there?
  - table: singer_in_concert
    description: Which singer performed at which concert.
    joins:
      - singer_in_concert.Singer_ID = singer.Singer_ID
      - singer_in_concert.concert_ID = concert.concert_ID
columns:
  - table: stadium
    column: Capacity
    description: Number of seats.
    units: seats
  - table: singer
    column: Age
    description: Age in years.
    range: 18 to 80
rules:
  - id: avg-age
    text: '"Average age" means AVG(singer.Age) over the singers in question.'
    tables: [singer]
  - text: A concert's year is stored as text.
examples:
  - id: q1
    question: How many singers do we have?
    sql: SELECT count(*) FROM singer;
  - question: Show the name and capacity of each stadium.
    sql: |
      SELECT Name, Capacity
      FROM stadium
values:
  - table: singer
    column: Country
    values: [France, Netherlands, United States]
`

func TestParseYAML(t *testing.T) {
	b, err := knowledge.Parse([]byte(concertYAML), "yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Tables) != 2 || len(b.Columns) != 2 || len(b.Rules) != 2 || len(b.Examples) != 2 || len(b.Values) != 1 {
		t.Fatalf("counts: %d tables, %d columns, %d rules, %d examples, %d values", len(b.Tables), len(b.Columns), len(b.Rules), len(b.Examples), len(b.Values))
	}
	if got := b.Tables[0].Synonyms; !reflect.DeepEqual(got, []string{"artist", "performer", "vocalist"}) {
		t.Errorf("synonyms = %q", got)
	}
	if b.Examples[0].SQL != "SELECT count(*) FROM singer" {
		t.Errorf("trailing semicolon kept: %q", b.Examples[0].SQL)
	}
	if b.Examples[1].SQL != "SELECT Name, Capacity\nFROM stadium" {
		t.Errorf("block SQL = %q", b.Examples[1].SQL)
	}
	// Missing IDs are filled in deterministically from the text.
	if id := b.Rules[1].ID; id != knowledge.AutoID("rule", "A concert's year is stored as text.") || !strings.HasPrefix(id, "rule-") || len(id) != len("rule-")+8 {
		t.Errorf("rule id = %q", id)
	}
	if id := b.Examples[1].ID; id != knowledge.AutoID("ex", "Show the name and capacity of each stadium.") {
		t.Errorf("example id = %q", id)
	}
	again, err := knowledge.Parse([]byte(concertYAML), "yml")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(b, again) {
		t.Error("two parses differ")
	}
}

func TestRoundTrip(t *testing.T) {
	b, err := knowledge.Parse([]byte(concertYAML), "yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, name := range []string{"k.yaml", "k.yml", "k.json"} {
		path := filepath.Join(dir, name)
		if err := b.Save(path); err != nil {
			t.Fatal(err)
		}
		got, err := knowledge.Load(path)
		if err != nil {
			data, _ := os.ReadFile(path)
			t.Fatalf("%s: %v\n%s", name, err, data)
		}
		if !reflect.DeepEqual(b, got) {
			t.Errorf("%s: round trip differs:\n%+v\n%+v", name, b, got)
		}
		if got.Fingerprint() != b.Fingerprint() {
			t.Errorf("%s: fingerprint changed", name)
		}
	}
	// The same content written by hand in JSON loads to the same base.
	js := `{"tables":[{"table":"singer","synonyms":["artist"]}],
	        "examples":[{"question":"How many singers do we have?","sql":"SELECT count(*) FROM singer;"}]}`
	y := "tables:\n- table: singer\n  synonyms: [artist]\nexamples:\n- question: How many singers do we have?\n  sql: SELECT count(*) FROM singer\n"
	bj, err := knowledge.Parse([]byte(js), "JSON")
	if err != nil {
		t.Fatal(err)
	}
	by, err := knowledge.Parse([]byte(y), "yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(bj, by) || bj.Fingerprint() != by.Fingerprint() {
		t.Errorf("JSON and YAML differ:\n%+v\n%+v", bj, by)
	}
}

func TestParseErrors(t *testing.T) {
	cases := []struct {
		name, format, in string
		line             int
		msg              string
	}{
		{"unknown field", "yaml", "tables:\n  - table: singer\n    synonym: [artist]\n", 3, "synonym"},
		{"typo at top level", "yaml", "tables: []\nexampels: []\n", 2, "exampels"},
		{"syntax", "yaml", "tables:\n  - table: singer\n   description: [unclosed\n", 3, ""},
		{"wrong type", "yaml", "tables:\n  - table: singer\n    synonyms: artist\n", 3, ""},
		{"duplicate key", "yaml", "tables:\n  - table: a\n    table: b\n", 3, "table"},
		{"two documents", "yaml", "tables: []\n---\ntables: []\n", 3, "more than one"},
		{"not a mapping", "yaml", "- a\n- b\n", 1, ""},
		{"tab indent", "yaml", "tables:\n\t- table: a\n", 2, ""},
		{"json syntax", "json", "{\n  \"tables\": [\n    {\"table\": \"a\",}\n  ]\n}", 3, ""},
		{"json unknown field", "json", "{\n  \"tables\": [\n    {\"table\": \"a\", \"synonym\": [\"x\"]}\n  ]\n}", 3, "synonym"},
		{"json wrong type", "json", "{\n  \"examples\": [\n    {\"question\": 3}\n  ]\n}", 3, "question"},
		{"json truncated", "json", "{\n  \"tables\": [\n", 3, ""},
		{"json trailing", "json", "{}\n{}", 2, "after"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := knowledge.Parse([]byte(c.in), c.format)
			var pe *knowledge.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v (%T), want *ParseError", err, err)
			}
			if pe.Line != c.line {
				t.Errorf("line = %d, want %d (%v)", pe.Line, c.line, err)
			}
			if pe.Column <= 0 {
				t.Errorf("column = %d (%v)", pe.Column, err)
			}
			if !strings.Contains(err.Error(), c.msg) {
				t.Errorf("error %q does not mention %q", err, c.msg)
			}
		})
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("tables:\n  - table: singer\n    colour: red\n"), 0o644)
	_, err := knowledge.Load(bad)
	var pe *knowledge.ParseError
	if !errors.As(err, &pe) || pe.Path != bad || pe.Line != 3 {
		t.Fatalf("err = %#v", err)
	}
	if !strings.Contains(err.Error(), bad+":3:") {
		t.Errorf("error %q lacks path:line", err)
	}
	if _, err := knowledge.Load(filepath.Join(dir, "k.toml")); err == nil || !strings.Contains(err.Error(), "extension") {
		t.Errorf("toml: %v", err)
	}
	if _, err := knowledge.Load(filepath.Join(dir, "missing.yaml")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
	if _, err := knowledge.Parse([]byte("{}"), "toml"); err == nil {
		t.Error("unknown format accepted")
	}
	// Empty files are empty bases.
	for _, f := range []string{"yaml", "json"} {
		b, err := knowledge.Parse([]byte("  \n"), f)
		if err != nil || len(b.Tables)+len(b.Examples) != 0 {
			t.Errorf("%s empty: %v %+v", f, err, b)
		}
	}
}

func TestParseStructureErrors(t *testing.T) {
	in := `tables:
  - table: singer
  - table: SINGER
  - description: no table
rules:
  - id: r1
    text: one
  - id: r1
    text: two
  - id: "has space"
    text: three
examples:
  - id: q1
    question: How many?
    sql: SELECT 1
  - id: q1
    question: Again?
    sql: SELECT 2
  - id: q2
    question: ""
    sql: ""
`
	_, err := knowledge.Parse([]byte(in), "yaml")
	var ve *knowledge.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("err = %v", err)
	}
	want := []string{
		`table:SINGER: duplicate note`,
		`tables[2]: table is required`,
		`rule:r1: duplicate rule id "r1"`,
		`rules[2]: id "has space"`,
		`example:q1: duplicate example id "q1"`,
		`example:q2: question is required`,
		`example:q2: sql is required`,
	}
	msg := err.Error()
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("error lacks %q:\n%s", w, msg)
		}
	}
	if len(ve.Problems) != len(want) {
		t.Errorf("%d problems, want %d:\n%s", len(ve.Problems), len(want), msg)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(concertYAML), "yaml")
	f.Add([]byte(`{"tables":[{"table":"a"}]}`), "json")
	f.Add([]byte("a: &a [*a]\n"), "yaml")
	f.Add([]byte("tables:\n  - table: [\n"), "yaml")
	f.Add([]byte("{\"tables\": [1, 2"), "json")
	f.Fuzz(func(t *testing.T, data []byte, format string) {
		b, err := knowledge.Parse(data, format)
		if err == nil {
			b.Documents(nil)
			b.Fingerprint()
		}
	})
}

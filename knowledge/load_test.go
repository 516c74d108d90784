package knowledge_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/text2sql-go/text2sql/knowledge"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
	require.NoError(t, err)
	require.Equal(t, [5]int{2, 2, 2, 2, 1}, [5]int{len(b.Tables), len(b.Columns), len(b.Rules), len(b.Examples), len(b.Values)},
		"counts: tables, columns, rules, examples, values")
	assert.Equal(t, []string{"artist", "performer", "vocalist"}, b.Tables[0].Synonyms, "synonyms")
	assert.Equal(t, "SELECT count(*) FROM singer", b.Examples[0].SQL, "trailing semicolon kept")
	assert.Equal(t, "SELECT Name, Capacity\nFROM stadium", b.Examples[1].SQL, "block SQL")
	// Missing IDs are filled in deterministically from the text.
	id := b.Rules[1].ID
	assert.Equal(t, knowledge.AutoID("rule", "A concert's year is stored as text."), id, "rule id")
	assert.True(t, strings.HasPrefix(id, "rule-"), "rule id = %q", id)
	assert.Len(t, id, len("rule-")+8, "rule id")
	assert.Equal(t, knowledge.AutoID("ex", "Show the name and capacity of each stadium."), b.Examples[1].ID, "example id")
	again, err := knowledge.Parse([]byte(concertYAML), "yml")
	require.NoError(t, err)
	assert.Equal(t, b, again, "two parses differ")
}

func TestRoundTrip(t *testing.T) {
	b, err := knowledge.Parse([]byte(concertYAML), "yaml")
	require.NoError(t, err)
	dir := t.TempDir()
	for _, name := range []string{"k.yaml", "k.yml", "k.json"} {
		path := filepath.Join(dir, name)
		require.NoError(t, b.Save(path))
		got, err := knowledge.Load(path)
		if err != nil {
			data, _ := os.ReadFile(path)
			require.NoError(t, err, "%s:\n%s", name, data)
		}
		assert.Equal(t, b, got, "%s: round trip differs", name)
		assert.Equal(t, b.Fingerprint(), got.Fingerprint(), "%s: fingerprint changed", name)
	}
	// The same content written by hand in JSON loads to the same base.
	js := `{"tables":[{"table":"singer","synonyms":["artist"]}],
	        "examples":[{"question":"How many singers do we have?","sql":"SELECT count(*) FROM singer;"}]}`
	y := "tables:\n- table: singer\n  synonyms: [artist]\nexamples:\n- question: How many singers do we have?\n  sql: SELECT count(*) FROM singer\n"
	bj, err := knowledge.Parse([]byte(js), "JSON")
	require.NoError(t, err)
	by, err := knowledge.Parse([]byte(y), "yaml")
	require.NoError(t, err)
	assert.Equal(t, by, bj, "JSON and YAML differ")
	assert.Equal(t, by.Fingerprint(), bj.Fingerprint(), "JSON and YAML differ")
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
			require.ErrorAs(t, err, &pe, "err = %v (%T), want *ParseError", err, err)
			assert.Equal(t, c.line, pe.Line, "line (%v)", err)
			assert.Positive(t, pe.Column, "column (%v)", err)
			assert.ErrorContains(t, err, c.msg)
		})
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("tables:\n  - table: singer\n    colour: red\n"), 0o644)
	_, err := knowledge.Load(bad)
	var pe *knowledge.ParseError
	require.ErrorAs(t, err, &pe, "err = %#v", err)
	require.Equal(t, bad, pe.Path, "err = %#v", err)
	require.Equal(t, 3, pe.Line, "err = %#v", err)
	assert.ErrorContains(t, err, bad+":3:", "error lacks path:line")
	_, err = knowledge.Load(filepath.Join(dir, "k.toml"))
	assert.ErrorContains(t, err, "extension", "toml")
	_, err = knowledge.Load(filepath.Join(dir, "missing.yaml"))
	assert.ErrorIs(t, err, os.ErrNotExist, "missing")
	_, err = knowledge.Parse([]byte("{}"), "toml")
	assert.Error(t, err, "unknown format accepted")
	// Empty files are empty bases.
	for _, f := range []string{"yaml", "json"} {
		b, err := knowledge.Parse([]byte("  \n"), f)
		if assert.NoError(t, err, "%s empty", f) {
			assert.Zero(t, len(b.Tables)+len(b.Examples), "%s empty: %+v", f, b)
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
	require.ErrorAs(t, err, &ve)
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
		assert.Contains(t, msg, w, "error lacks %q", w)
	}
	assert.Len(t, ve.Problems, len(want), msg)
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

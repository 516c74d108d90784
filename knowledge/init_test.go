package knowledge_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/demo"
	"github.com/text2sql-go/text2sql/executor/sqlite"
	"github.com/text2sql-go/text2sql/internal/shareddata"
	"github.com/text2sql-go/text2sql/knowledge"
	"github.com/text2sql-go/text2sql/lint"
	"github.com/text2sql-go/text2sql/llm/llmtest"
	"github.com/text2sql-go/text2sql/schema"
)

// starterRoundTrip runs Init on the SQLite file at path, writes the starter
// file, loads it back and validates it against the schema with the
// executor as guard. It returns the loaded base and the file's text.
func starterRoundTrip(t *testing.T, path string) (*sqlite.Executor, *knowledge.Base, string) {
	t.Helper()
	ctx := context.Background()
	ex, err := sqlite.Open(path, sqlite.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { ex.Close() })
	sch := ex.Schema()

	b, skipped, err := knowledge.Init(ctx, ex, sch, knowledge.InitOptions{})
	require.NoError(t, err)
	assert.Empty(t, skipped)
	got, data := reload(t, b, sch, ex)
	assert.Equal(t, b, got, "the file decodes to what Init built")

	// Every table and column has a stub note; drafts are not indexed.
	require.NotNil(t, got.Drafts)
	cols := 0
	for _, tb := range sch.Tables {
		cols += len(tb.Columns)
	}
	assert.Len(t, got.Drafts.Tables, len(sch.Tables))
	assert.Len(t, got.Drafts.Columns, cols)
	for _, d := range got.Documents(sch) {
		if d.Kind != text2sql.ItemTable {
			assert.True(t, strings.HasPrefix(d.ID, "value:"), "only schema tables and values are indexed: %s", d.ID)
		}
	}
	return ex, got, data
}

// reload writes b as a starter file (EncodeStarter), loads it back and
// validates it against sch with guard. It returns the loaded base and the
// file's text.
func reload(t *testing.T, b *knowledge.Base, sch *schema.Database, guard text2sql.Guard) (*knowledge.Base, string) {
	t.Helper()
	data, err := b.EncodeStarter(sch)
	require.NoError(t, err)
	file := filepath.Join(t.TempDir(), "starter.yaml")
	require.NoError(t, os.WriteFile(file, data, 0o644))
	got, err := knowledge.Load(file)
	require.NoError(t, err)
	require.NoError(t, got.Validate(context.Background(), sch, guard))
	return got, string(data)
}

func TestInitConcertSinger(t *testing.T) {
	path := shareddata.Path(t, "spider", "database", "concert_singer", "concert_singer.sqlite")
	_, b, text := starterRoundTrip(t, path)

	joins := map[string][]string{}
	for _, n := range b.Drafts.Tables {
		joins[n.Table] = n.Joins
	}
	// Declared foreign keys, and none marked inferred.
	assert.Equal(t, []string{"concert.Stadium_ID = stadium.Stadium_ID"}, joins["concert"])
	assert.ElementsMatch(t, []string{
		"singer_in_concert.Singer_ID = singer.Singer_ID",
		"singer_in_concert.concert_ID = concert.concert_ID",
	}, joins["singer_in_concert"])

	// Type and key role beside each column, the instructions on top.
	assert.Contains(t, text, "column: Singer_ID # INT, primary key\n")
	assert.Contains(t, text, "column: Stadium_ID # TEXT, references stadium.Stadium_ID (declared)\n")
	assert.Contains(t, text, "column: Singer_ID # TEXT, part of the primary key (concert_ID, Singer_ID), references singer.Singer_ID (declared)\n")
	assert.Contains(t, text, "text2sql knowledge accept FILE")

	// Low-cardinality text values: singer.Country has 3, read verbatim.
	var country []string
	for _, v := range b.Values {
		if v.Table == "singer" && v.Column == "Country" {
			country = v.Values
		}
		assert.LessOrEqual(t, len(v.Values), knowledge.DefaultMaxDistinct, "%s.%s", v.Table, v.Column)
	}
	assert.Equal(t, []string{"France", "Netherlands", "United States"}, country)
}

func TestInitDemo(t *testing.T) {
	path, err := demo.Ensure(t.TempDir())
	require.NoError(t, err)
	_, b, _ := starterRoundTrip(t, path)
	assert.NotEmpty(t, b.Values)
}

func TestInitInfersKeys(t *testing.T) {
	path := tempDB(t, `
		CREATE TABLE customer (customer_id INTEGER PRIMARY KEY, name TEXT);
		CREATE TABLE product (code TEXT PRIMARY KEY, label TEXT);
		CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER, productid TEXT, status TEXT);
		INSERT INTO orders VALUES (1, 1, 'a', 'open'), (2, 1, 'a', 'shipped'), (3, 1, 'a', 'open');`)
	ex, b, text := starterRoundTrip(t, path)
	var orders []string
	for _, n := range b.Drafts.Tables {
		if n.Table == "orders" {
			orders = n.Joins
		}
	}
	require.Len(t, orders, 2)
	assert.True(t, strings.HasPrefix(orders[0], "orders.customer_id = customer.customer_id (inferred"), orders[0])
	assert.True(t, strings.HasPrefix(orders[1], "orders.productid = product.code (inferred"), orders[1])
	assert.Contains(t, text, "column: customer_id # INTEGER, probably references customer.customer_id (inferred)\n")
	assert.Equal(t, []knowledge.ValueList{{Table: "orders", Column: "status", Values: []string{"open", "shipped"}}}, b.Values)

	// A column with more distinct values than the bound is not listed.
	small, _, err := knowledge.Init(context.Background(), ex, ex.Schema(), knowledge.InitOptions{Values: knowledge.ValueOptions{MaxDistinct: 1}})
	require.NoError(t, err)
	assert.Empty(t, small.Values)
}

func TestAccept(t *testing.T) {
	b := &knowledge.Base{
		Columns: []knowledge.ColumnNote{{Table: "t", Column: "a", Description: "kept"}},
		Drafts: &knowledge.Drafts{
			Tables:   []knowledge.TableNote{{Table: "t"}, {Table: "u", Description: "Users."}},
			Columns:  []knowledge.ColumnNote{{Table: "t", Column: "b"}, {Table: "u", Column: "c", Units: "kg"}},
			Examples: []knowledge.Example{{ID: "q1", Question: "How many?", SQL: "SELECT 1"}},
		},
	}
	st, err := b.Accept()
	require.NoError(t, err)
	assert.Equal(t, knowledge.AcceptStats{Tables: 1, Columns: 1, Examples: 1, Dropped: 2}, st)
	assert.Nil(t, b.Drafts)
	assert.Equal(t, []knowledge.TableNote{{Table: "u", Description: "Users."}}, b.Tables)
	assert.Len(t, b.Columns, 2)
	assert.Len(t, b.Examples, 1)

	// A draft note for a column the base already notes is refused; the
	// base is unchanged.
	dup := &knowledge.Base{
		Columns: []knowledge.ColumnNote{{Table: "t", Column: "a", Description: "kept"}},
		Drafts:  &knowledge.Drafts{Columns: []knowledge.ColumnNote{{Table: "t", Column: "a", Description: "again"}}},
	}
	_, err = dup.Accept()
	var ve *knowledge.ValidationError
	require.ErrorAs(t, err, &ve)
	assert.NotNil(t, dup.Drafts)
}

func TestDraftsValidated(t *testing.T) {
	_, _, sch := concertSinger(t)
	guard := guardFor(t, shareddata.Path(t, "spider", "database", "concert_singer", "concert_singer.sqlite"))
	b, err := knowledge.Parse([]byte(`
drafts:
  columns:
    - table: singer
      column: nope
      description: ""
  examples:
    - id: w
      question: Drop it
      sql: DELETE FROM singer
`), knowledge.FormatYAML)
	require.NoError(t, err, "an empty draft column note is well-formed")
	err = b.Validate(context.Background(), sch, guard)
	var ve *knowledge.ValidationError
	require.ErrorAs(t, err, &ve)
	require.Len(t, ve.Problems, 2)
	assert.Equal(t, "drafts.column:singer.nope", ve.Problems[0].Item)
	assert.Equal(t, "drafts.example:w", ve.Problems[1].Item)
	assert.ErrorIs(t, err, text2sql.ErrRefused)
}

// singerDraft is the scripted model's answer about table singer: notes and
// four candidate examples, of which only the first is sound.
const singerDraft = "Here it is:\n```json\n" + `{
  "description": "One row per singer.",
  "synonyms": ["artist", "performer"],
  "columns": [{"name": "age", "meaning": "Age in years."}, {"name": "Country", "meaning": "Country of origin."}],
  "examples": [
    {"question": "How many singers are there?", "sql": "SELECT count(*) FROM singer;"},
    {"question": "Remove the singers", "sql": "DELETE FROM singer"},
    {"question": "Which singers have a nickname?", "sql": "SELECT Name AS nickname FROM singer"},
    {"question": "What is the biggest age?", "sql": "SELECT abs(-9223372036854775808) FROM singer"}
  ]
}` + "\n```"

// strictChecker is the deterministic checks of package lint plus one
// failure the SQLite guard cannot see: any SQL naming "nickname" (on
// SQLite, whatever package lint refuses the guard's prepare refuses too).
type strictChecker struct{ *lint.Checker }

func (c strictChecker) Failure(sql string) *text2sql.SQLError {
	if strings.Contains(sql, "nickname") {
		return &text2sql.SQLError{Kind: text2sql.KindUnknownColumn, Message: "no nicknames here"}
	}
	return c.Checker.Failure(sql)
}

func TestInitDraftsWithScriptedModel(t *testing.T) {
	ctx := context.Background()
	path := shareddata.Path(t, "spider", "database", "concert_singer", "concert_singer.sqlite")
	ex, err := sqlite.Open(path, sqlite.Options{})
	require.NoError(t, err)
	defer ex.Close()
	sch := ex.Schema()
	model := llmtest.Func(func(req text2sql.ModelRequest) (string, error) {
		msg := req.Messages[0].Content
		switch {
		case strings.Contains(msg, "Table to document: singer "):
			return singerDraft, nil
		case strings.Contains(msg, "Table to document: stadium "):
			return "I cannot help with that.", nil
		}
		return `{"description": "", "columns": [], "examples": []}`, nil
	})

	b, left, err := knowledge.Init(ctx, ex, sch, knowledge.InitOptions{
		Model: model, Checker: strictChecker{lint.New(sch, sch.Dialect)}, DraftExamples: 4,
	})
	require.NoError(t, err)
	assert.Equal(t, len(sch.Tables), model.CallCount(), "one call per table")
	assert.Contains(t, model.Calls()[1].Messages[0].Content, "'United States'", "values go to the model as literals")

	// Only the sound example is kept, as a draft; the others are listed.
	require.Len(t, b.Drafts.Examples, 1)
	assert.Equal(t, "SELECT count(*) FROM singer", b.Drafts.Examples[0].SQL)
	assert.Empty(t, b.Examples)
	var msgs []string
	for _, p := range left {
		msgs = append(msgs, p.String())
	}
	require.Len(t, left, 4, strings.Join(msgs, "\n"))
	assert.Contains(t, msgs[0], `"Remove the singers"): sql does not pass the guard`)
	assert.ErrorIs(t, left[0].Err, text2sql.ErrRefused)
	assert.Contains(t, msgs[1], `"Which singers have a nickname?"): sql fails the deterministic checks`)
	assert.Contains(t, msgs[2], `"What is the biggest age?"): sql does not run`)
	assert.Equal(t, "drafts.table:stadium", left[3].Item)

	// The notes are drafted where they were empty.
	for _, n := range b.Drafts.Tables {
		if n.Table == "singer" {
			assert.Equal(t, "One row per singer.", n.Description)
			assert.Equal(t, []string{"artist", "performer"}, n.Synonyms)
		}
	}
	meanings := map[string]string{}
	for _, n := range b.Drafts.Columns {
		meanings[n.Table+"."+n.Column] = n.Description
	}
	assert.Equal(t, "Age in years.", meanings["singer.Age"])
	assert.Equal(t, "Country of origin.", meanings["singer.Country"])

	// Drafts are not retrieved; the file round-trips and validates; accept
	// makes the example a verified one.
	for _, d := range b.Documents(sch) {
		assert.NotEqual(t, text2sql.ItemExample, d.Kind)
	}
	got, _ := reload(t, b, sch, ex)
	st, err := got.Accept()
	require.NoError(t, err)
	assert.Equal(t, 1, st.Examples)
	require.NoError(t, got.Validate(ctx, sch, ex))
	var examples int
	for _, d := range got.Documents(sch) {
		if d.Kind == text2sql.ItemExample {
			examples++
		}
	}
	assert.Equal(t, 1, examples)
}

func TestInitModelErrorEnds(t *testing.T) {
	path := shareddata.Path(t, "spider", "database", "concert_singer", "concert_singer.sqlite")
	ex, err := sqlite.Open(path, sqlite.Options{})
	require.NoError(t, err)
	defer ex.Close()
	_, _, err = knowledge.Init(context.Background(), ex, ex.Schema(), knowledge.InitOptions{Model: llmtest.New()})
	assert.ErrorIs(t, err, text2sql.ErrModel)
	assert.ErrorContains(t, err, "drafting table concert")
}

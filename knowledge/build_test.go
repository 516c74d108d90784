package knowledge_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/knowledge"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// C1 #10 (CVE-2024-5827): a verified example whose SQL writes a file is
// refused when it is added; nothing is written.
func TestAddExampleRefusesCopy(t *testing.T) {
	guard := guardFor(t, tempDB(t, "CREATE TABLE singer (singer_id INTEGER PRIMARY KEY, name TEXT)"))
	out := filepath.Join(t.TempDir(), "pwn.txt")
	for _, q := range []string{
		"COPY (SELECT 'x') TO '" + out + "'",
		"copy (select 'x') to '" + out + "';",
		"/* ok */ COPY (SELECT 'x') TO '" + out + "'",
		"SELECT 1; COPY (SELECT 'x') TO '" + out + "'",
		"ATTACH DATABASE '" + out + "' AS o",
		"DROP TABLE singer",
		"VACUUM INTO '" + out + "'",
		"WITH x AS (SELECT 1) DELETE FROM singer",
	} {
		var b knowledge.Base
		err := b.AddExample(context.Background(), guard, knowledge.Example{ID: "pwn", Question: "Export everything", SQL: q})
		require.Error(t, err, "%q accepted", q)
		var se *text2sql.SQLError
		assert.ErrorIs(t, err, text2sql.ErrRefused, "%q: want a refusal", q)
		assert.ErrorAs(t, err, &se, "%q: want a refusal", q)
		var ve *knowledge.ValidationError
		if assert.ErrorAs(t, err, &ve, "%q: want a problem naming example:pwn", q) {
			assert.Equal(t, "example:pwn", ve.Problems[0].Item, "%q: want a problem naming example:pwn", q)
		}
		assert.Empty(t, b.Examples, "%q entered the base", q)
	}
	_, err := os.Stat(out)
	assert.ErrorIs(t, err, os.ErrNotExist, "file written")
	// The same example loaded from a file is caught by Validate.
	b, err := knowledge.Parse([]byte("examples:\n  - id: pwn\n    question: Export\n    sql: COPY (SELECT 'x') TO '"+out+"'\n"), "yaml")
	require.NoError(t, err)
	err = b.Validate(context.Background(), nil, guard)
	assert.ErrorIs(t, err, text2sql.ErrRefused, "Validate")
	assert.ErrorContains(t, err, "example:pwn", "Validate")
	_, err = os.Stat(out)
	assert.ErrorIs(t, err, os.ErrNotExist, "file written")
}

func TestBuilder(t *testing.T) {
	ctx := context.Background()
	path, _, sch := concertSinger(t)
	guard := guardFor(t, path)
	var b knowledge.Base
	must := func(err error) {
		t.Helper()
		require.NoError(t, err)
	}
	must(b.AddTable(knowledge.TableNote{Table: "singer", Synonyms: []string{"artist"}}))
	must(b.AddColumn(knowledge.ColumnNote{Table: "singer", Column: "Age", Description: "Age in years", Units: "years"}))
	must(b.AddRule(knowledge.Rule{Text: "Ages are whole years."}))
	must(b.AddExample(ctx, guard, knowledge.Example{Question: "How many singers are there?", SQL: "SELECT count(*) FROM singer;\n"}))
	must(b.AddExample(ctx, guard, knowledge.Example{ID: "cte", Question: "List stadiums", SQL: "WITH s AS (SELECT * FROM stadium) SELECT Name FROM s"}))
	must(b.AddValues(knowledge.ValueList{Table: "singer", Column: "Country", Values: []string{"France"}}))

	assert.Equal(t, knowledge.AutoID("rule", "Ages are whole years."), b.Rules[0].ID, "rule id")
	assert.Equal(t, knowledge.AutoID("ex", "How many singers are there?"), b.Examples[0].ID, "example %+v", b.Examples[0])
	assert.Equal(t, "SELECT count(*) FROM singer", b.Examples[0].SQL, "example %+v", b.Examples[0])
	require.NoError(t, b.Validate(ctx, sch, guard))

	// Duplicates and missing fields are refused, and the base is unchanged.
	fp := b.Fingerprint()
	for name, err := range map[string]error{
		"table":      b.AddTable(knowledge.TableNote{Table: "Singer"}),
		"no table":   b.AddTable(knowledge.TableNote{Description: "x"}),
		"column":     b.AddColumn(knowledge.ColumnNote{Table: "singer", Column: "age", Units: "years"}),
		"empty note": b.AddColumn(knowledge.ColumnNote{Table: "singer", Column: "Name"}),
		"rule":       b.AddRule(knowledge.Rule{Text: "Ages are whole years."}),
		"empty rule": b.AddRule(knowledge.Rule{ID: "r"}),
		"example":    b.AddExample(ctx, guard, knowledge.Example{Question: " How many singers  are there? ", SQL: "SELECT 1"}),
		"no sql":     b.AddExample(ctx, guard, knowledge.Example{Question: "Why?"}),
		"bad id":     b.AddExample(ctx, guard, knowledge.Example{ID: "a b", Question: "Why?", SQL: "SELECT 1"}),
		"values":     b.AddValues(knowledge.ValueList{Table: "SINGER", Column: "country", Values: []string{"Spain"}}),
		"no values":  b.AddValues(knowledge.ValueList{Table: "singer", Column: "Name"}),
		"empty":      b.AddExample(ctx, guard, knowledge.Example{Question: "Nothing", SQL: "-- nothing"}),
		"multiple":   b.AddExample(ctx, guard, knowledge.Example{Question: "Two", SQL: "SELECT 1; SELECT 2"}),
		"write":      b.AddExample(ctx, guard, knowledge.Example{Question: "Delete", SQL: "DELETE FROM singer"}),
	} {
		var ve *knowledge.ValidationError
		assert.ErrorAs(t, err, &ve, name)
	}
	assert.Equal(t, fp, b.Fingerprint(), "a refused item changed the base")
	assert.ErrorIs(t, b.AddExample(ctx, nil, knowledge.Example{Question: "q", SQL: "SELECT 1"}), text2sql.ErrInvalidConfig, "nil guard")
	assert.ErrorIs(t, b.Validate(ctx, sch, nil), text2sql.ErrInvalidConfig, "Validate nil guard")
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	assert.ErrorIs(t, b.AddExample(cctx, guard, knowledge.Example{Question: "q", SQL: "SELECT 1"}), context.Canceled, "cancelled AddExample")
	assert.ErrorIs(t, b.Validate(cctx, sch, guard), context.Canceled, "cancelled Validate")
}

func TestValidateAgainstSchema(t *testing.T) {
	ctx := context.Background()
	path, _, sch := concertSinger(t)
	guard := guardFor(t, path)
	b, err := knowledge.Parse([]byte(concertYAML), "yaml")
	require.NoError(t, err)
	require.NoError(t, b.Validate(ctx, sch, guard), "valid base")
	bad := concertYAML + `  - table: singers
    column: Country
    values: [Spain]
`
	bad = strings.Replace(bad, "tables:\n", "tables:\n  - table: artists\n    description: Not a table of this database.\n", 1)
	bad = strings.Replace(bad, "    column: Capacity", "    column: Seats", 1)
	bad = strings.Replace(bad, "    tables: [singer]", "    tables: [singer, venue]", 1)
	bad = strings.Replace(bad, "SELECT count(*) FROM singer;", "SELECT count(*) FROM singer AS s JOIN performances p ON p.singer_id = s.Singer_ID", 1)
	bad = strings.Replace(bad, "    sql: |\n      SELECT Name, Capacity\n      FROM stadium\n", "    sql: DELETE FROM stadium\n", 1)
	b, err = knowledge.Parse([]byte(bad), "yaml")
	require.NoError(t, err)
	err = b.Validate(ctx, sch, guard)
	var ve *knowledge.ValidationError
	require.ErrorAs(t, err, &ve)
	exID := knowledge.AutoID("ex", "Show the name and capacity of each stadium.")
	want := map[string]string{
		"table:artists":         `unknown table "artists"`,
		"column:stadium.Seats":  `unknown column "Seats" in table stadium`,
		"rule:avg-age":          `unknown table "venue"`,
		"example:q1":            `performances`,
		"example:" + exID:       "sql does not pass the guard: not_read_only",
		"value:singers.Country": `unknown table "singers"`,
	}
	// Each bad item is named with what is wrong with it; an unknown table
	// in an example's SQL may be reported by the guard (which prepares the
	// statement) or by the lexical check.
	for item, w := range want {
		found := false
		for _, p := range ve.Problems {
			found = found || (p.Item == item && strings.Contains(p.String(), w))
		}
		assert.True(t, found, "no problem %s: %s in\n%v", item, w, err)
	}
	for _, p := range ve.Problems {
		assert.Contains(t, want, p.Item, "unexpected problem %q", p)
	}
	assert.ErrorIs(t, err, text2sql.ErrRefused, "the guard's refusal is not reachable with errors.Is")
}

// acceptAll is a guard that lets everything through, to show the lexical
// table check on its own.
type acceptAll struct{}

func (acceptAll) Check(context.Context, string) error { return nil }

func TestValidateExampleTablesLexically(t *testing.T) {
	_, _, sch := concertSinger(t)
	b := &knowledge.Base{Examples: []knowledge.Example{
		{ID: "ok", Question: "q", SQL: "WITH s AS (SELECT * FROM singer) SELECT * FROM s JOIN singer_in_concert USING (Singer_ID)"},
		{ID: "bad", Question: "q", SQL: "SELECT * FROM singer AS s JOIN performances p ON p.singer_id = s.Singer_ID"},
	}}
	err := b.Validate(context.Background(), sch, acceptAll{})
	var ve *knowledge.ValidationError
	require.ErrorAs(t, err, &ve)
	require.Len(t, ve.Problems, 1, "err = %v", err)
	require.Equal(t, `example:bad: sql reads unknown table "performances"`, ve.Problems[0].String())
}

package eval

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/text2sql-go/text2sql/accuracy"
	"github.com/text2sql-go/text2sql/internal/shareddata"
)

func TestLoadSpiderDev(t *testing.T) {
	ds := spiderDev(t)
	assert.Len(t, ds.Questions, 1034)
	assert.Equal(t, accuracy.ModeSpider, ds.Mode)
	assert.True(t, ds.Rewrite)
	// wta_1 is missing: its 62 questions are excluded, with the reason.
	ex := ds.Exclusions()
	require.Len(t, ex, 1)
	assert.Equal(t, "wta_1", ex[0].DB)
	assert.Equal(t, 62, ex[0].Count)
	assert.Contains(t, ex[0].Reason, "wta_1.sqlite not found")
	assert.Len(t, ds.Scorable(), 972)
	// The official hardness split of Spider dev.
	counts := map[string]int{}
	for _, q := range ds.Questions {
		counts[q.Difficulty]++
	}
	assert.Equal(t, map[string]int{HardnessEasy: 248, HardnessMedium: 446, HardnessHard: 174, HardnessExtra: 166}, counts)
}

func TestLoadBIRDMiniDev(t *testing.T) {
	dir := shareddata.Path(t, "bird", "mini_dev")
	ds, err := LoadBIRD(BIRDPaths{Dir: dir})
	require.NoError(t, err)
	require.Len(t, ds.Questions, 500)
	assert.Equal(t, accuracy.ModeBIRD, ds.Mode)
	assert.False(t, ds.Rewrite)
	q := ds.Questions[0]
	assert.Equal(t, "0", q.ID)
	assert.Equal(t, "1471", q.SourceID)
	assert.Equal(t, "simple", q.Difficulty)
	assert.NotEmpty(t, q.Evidence)
	assert.Contains(t, q.Prompt(), "\nEvidence: ")
	// No databases: every question is excluded, saying results cannot be
	// compared.
	assert.Empty(t, ds.Scorable(), "BIRD questions are excluded without the databases")
	for _, e := range ds.Exclusions() {
		assert.Contains(t, e.Reason, "results cannot be compared")
	}
	// Scoring says so: no silent zero.
	preds, err := ReadPredictions(filepath.Join(dir, "predictions", "predict_mini_dev_gpt-4_sqlite.json"))
	require.NoError(t, err)
	reps, err := Score(context.Background(), ds, []*Predictions{preds}, Options{})
	require.ErrorIs(t, err, ErrNotComparable)
	require.Len(t, reps, 1)
	r := reps[0]
	assert.Nil(t, r.EX)
	assert.False(t, r.Comparable)
	assert.Equal(t, 0, r.Total)
	assert.Equal(t, 500, r.Excluded)
	assert.Contains(t, r.Note, "cannot be compared")
	b, err := json.Marshal(r)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"ex":null`)
}

// C6 #39 (mini_dev#41): BIRD-style predictions keyed "0","1","10","2",…
// pair by id, not by position in the file: the same score as numeric
// order. A missing or extra id is a hard error.
func TestC6PredictionsPairedByID(t *testing.T) {
	ds := birdFixture(t, 12)
	var sorted, numeric strings.Builder
	keys := make([]string, 12)
	for i := range keys {
		keys[i] = fmt.Sprint(i)
	}
	write := func(b *strings.Builder, order []string) {
		b.WriteString("{")
		for i, k := range order {
			if i > 0 {
				b.WriteString(",")
			}
			var n int
			_, err := fmt.Sscan(k, &n)
			require.NoError(t, err)
			sql := fmt.Sprintf("SELECT v FROM t WHERE id = %d", n)
			if n%3 == 2 {
				sql = "SELECT v FROM t WHERE id = -1" // wrong on purpose
			}
			val, _ := json.Marshal(sql + "\t----- bird -----\tfixture")
			fmt.Fprintf(b, "%q: %s", k, val)
		}
		b.WriteString("}")
	}
	lexical := slices.Clone(keys)
	slices.Sort(lexical) // "0","1","10","11","2",…
	write(&sorted, lexical)
	write(&numeric, keys)
	pl, err := ParsePredictions([]byte(sorted.String()))
	require.NoError(t, err)
	pn, err := ParsePredictions([]byte(numeric.String()))
	require.NoError(t, err)
	reps, err := Score(context.Background(), ds, []*Predictions{pl, pn}, Options{})
	require.NoError(t, err)
	require.Len(t, reps, 2)
	assert.Equal(t, 8, reps[0].Correct, "lexical")
	assert.Equal(t, 8, reps[1].Correct, "numeric")
	assert.Equal(t, 12, reps[0].Total)
	require.Len(t, reps[1].Records, len(reps[0].Records))
	for i := range reps[0].Records {
		assert.Equal(t, reps[0].Records[i].Outcome, reps[1].Records[i].Outcome, "question %d", i)
	}

	// Missing and extra ids.
	for _, tc := range []struct {
		json string
		want string
	}{
		{strings.Replace(numeric.String(), `"11":`, `"12":`, 1), "1 missing (11), 1 extra (12)"},
		{strings.Replace(numeric.String(), `{"0": "SELECT v FROM t WHERE id = 0\t----- bird -----\tfixture",`, `{`, 1), "1 missing (0)"},
	} {
		p, err := ParsePredictions([]byte(tc.json))
		require.NoError(t, err)
		_, err = Score(context.Background(), ds, []*Predictions{p}, Options{})
		require.ErrorIs(t, err, ErrPredictions)
		assert.Contains(t, err.Error(), tc.want)
	}
	// Keys by BIRD question_id pair too.
	var byQID strings.Builder
	byQID.WriteString("{")
	for i := range 12 {
		if i > 0 {
			byQID.WriteString(",")
		}
		fmt.Fprintf(&byQID, `"%d": "SELECT v FROM t WHERE id = %d"`, 1000+i, i)
	}
	byQID.WriteString("}")
	p, err := ParsePredictions([]byte(byQID.String()))
	require.NoError(t, err)
	assert.Equal(t, 12, scoreOne(t, ds, p).Correct, "by question_id")
}

// birdFixture writes a BIRD-format dataset of n questions over one small
// database "fixture" (t(id, v) with rows 0..n-1) and loads it.
func birdFixture(t *testing.T, n int) *Dataset {
	t.Helper()
	dir := t.TempDir()
	var qs []map[string]any
	stmts := []string{"CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)"}
	for i := range n {
		qs = append(qs, map[string]any{"question_id": 1000 + i, "db_id": "fixture", "question": fmt.Sprintf("What is v of %d?", i),
			"evidence": "v is the value", "SQL": fmt.Sprintf("SELECT v FROM t WHERE id = %d", i), "difficulty": []string{"simple", "moderate", "challenging"}[i%3]})
		stmts = append(stmts, fmt.Sprintf("INSERT INTO t VALUES (%d, 'v%d')", i, i))
	}
	b, err := json.Marshal(qs)
	require.NoError(t, err)
	writeFile(t, filepath.Join(dir, "dev.json"), string(b))
	writeFile(t, filepath.Join(dir, "dev_tables.json"), `[{"db_id": "fixture", "table_names_original": ["t"], "column_names_original": [[-1, "*"], [0, "id"], [0, "v"]],
		"column_types": ["text", "integer", "text"], "primary_keys": [1], "foreign_keys": []}]`)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "dev_databases", "fixture"), 0o755))
	writeDB(t, filepath.Join(dir, "dev_databases", "fixture", "fixture.sqlite"), stmts...)
	ds, err := LoadBIRD(BIRDPaths{Dir: dir})
	require.NoError(t, err)
	return ds
}

// BIRD mode scoring with databases: set semantics, column order fixed, by
// difficulty; an empty (schema-only) database is reported as not
// comparable rather than scored.
func TestBIRDScoring(t *testing.T) {
	ds := birdFixture(t, 3)
	preds := &Predictions{Name: "p", Keyed: true, ByID: map[string]string{
		"0": "SELECT v FROM t WHERE id = 0 UNION ALL SELECT v FROM t WHERE id = 0", // duplicates ignored
		"1": "SELECT v, id FROM t WHERE id = 1",                                    // extra column: wrong
		"2": "SELECT nope FROM t",                                                  // error
	}}
	r := scoreOne(t, ds, preds)
	assertCounts(t, r, 1, 3, 0)
	assert.Equal(t, accuracy.ModeBIRD, r.Mode)
	require.NotNil(t, r.EX)
	assert.Equal(t, 1.0/3, *r.EX)
	require.Len(t, r.Records, 3)
	assert.Equal(t, "wrong_column_count", r.Records[1].Kind)
	assert.Equal(t, OutcomeError, r.Records[2].Outcome)
	assert.Equal(t, "unknown_column", r.Records[2].Kind)
	require.Len(t, r.ByDifficulty, 3)
	assert.Equal(t, "simple", r.ByDifficulty[0].Name)
	assert.Equal(t, "challenging", r.ByDifficulty[2].Name)

	// The same questions over an empty copy of the database.
	empty := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(empty, "fixture"), 0o755))
	writeDB(t, filepath.Join(empty, "fixture", "fixture.sqlite"), "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)")
	ds.Databases["fixture"].Path = filepath.Join(empty, "fixture", "fixture.sqlite")
	reps, err := Score(context.Background(), ds, []*Predictions{preds}, Options{})
	require.ErrorIs(t, err, ErrNotComparable)
	require.Len(t, reps, 1)
	assert.Nil(t, reps[0].EX)
	assert.Contains(t, reps[0].Note, "no rows")
}

func TestPredictionLines(t *testing.T) {
	p, err := ParsePredictions([]byte("  SELECT 1\t-- ignored db\nSELECT 2\n\nSELECT 4\n"))
	require.NoError(t, err)
	assert.False(t, p.Keyed)
	assert.Equal(t, map[string]string{"0": "SELECT 1", "1": "SELECT 2", "2": "", "3": "SELECT 4"}, p.ByID)
	// A BIRD value that is not a string is an empty query.
	p, err = ParsePredictions([]byte(`{"0": 5, "1": "SELECT 1"}`))
	require.NoError(t, err)
	assert.Equal(t, "", p.ByID["0"])
	assert.Equal(t, "SELECT 1", p.ByID["1"])
	for _, bad := range []string{"", "\n", "{", `{"0": "a"} x`, "{}x"} {
		_, err := ParsePredictions([]byte(bad))
		assert.ErrorIs(t, err, ErrPredictions, "%q", bad)
	}
	// A line file must have one line per question.
	ds := spiderDev(t)
	p, err = ParsePredictions([]byte("SELECT 1\nSELECT 2\n"))
	require.NoError(t, err)
	_, err = p.Pair(ds)
	require.ErrorIs(t, err, ErrPredictions)
	assert.Contains(t, err.Error(), "2 lines for 1034 questions")
}

func TestLoadFile(t *testing.T) {
	dir := t.TempDir()
	writeDB(t, filepath.Join(dir, "shop.sqlite"), "CREATE TABLE items(name TEXT, price REAL)",
		"INSERT INTO items VALUES ('pen', 1.5), ('book', 12), ('bag', 30)")
	yaml := `name: shop
database: shop.sqlite
questions:
  - id: cheap
    question: Which items cost less than 20?
    sql: SELECT name FROM items WHERE price < 20
    difficulty: easy
  - id: count
    question: How many items?
    rows: [[3]]
  - id: prices
    question: Prices, cheapest first
    rows: [["pen", 1.5], ["book", 12], ["bag", 30]]
    ordered: true
  - question: Elsewhere
    database: missing.sqlite
    sql: SELECT 1
`
	path := filepath.Join(dir, "set.yaml")
	writeFile(t, path, yaml)
	ds, err := LoadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "shop", ds.Name)
	require.Len(t, ds.Questions, 4)
	assert.Equal(t, "3", ds.Questions[3].ID)
	assert.NotEmpty(t, ds.Questions[3].Excluded)
	preds := &Predictions{Name: "mine", Keyed: true, ByID: map[string]string{
		"cheap":  "SELECT name FROM items WHERE price <= 12",
		"count":  "SELECT count(*) FROM items",
		"prices": "SELECT name, price FROM items ORDER BY price DESC",
		"3":      "SELECT 1",
	}}
	r := scoreOne(t, ds, preds)
	assertCounts(t, r, 2, 3, 1)
	require.Len(t, r.Records, 4)
	assert.Equal(t, "wrong_order", r.Records[2].Kind)
	// The same in JSON.
	jpath := filepath.Join(dir, "set.json")
	writeFile(t, jpath, `{"database": "shop.sqlite", "mode": "strict", "questions": [{"question": "n?", "rows": [[3]]}]}`)
	ds, err = LoadFile(jpath)
	require.NoError(t, err)
	assert.Equal(t, accuracy.ModeStrict, ds.Mode)
	require.Len(t, ds.Questions, 1)
	require.NotNil(t, ds.Questions[0].Expected)
	require.NotEmpty(t, ds.Questions[0].Expected.Rows)
	assert.Equal(t, int64(3), ds.Questions[0].Expected.Rows[0][0])

	// Bad files are errors, never panics.
	for name, content := range map[string]string{
		"a.yaml": "questions: [{question: q}]\ndatabase: x.sqlite",  // neither sql nor rows
		"b.yaml": "questions: [{question: q, sql: s, rows: [[1]]}]", // both
		"c.yaml": "questions: [{id: a, question: q, sql: s}, {id: a, question: r, sql: s}]\ndatabase: x",
		"d.yaml": "questions: [{question: q, sql: s}]", // no database
		"e.yaml": "{{{{",                               // malformed
		"f.yaml": "questions: []",                      // empty
		"g.json": `{"questions": [{"question": "q", "sql": "s", "bogus": 1}], "database": "x"}`,
		"h.yaml": "mode: fuzzy\ndatabase: x\nquestions: [{question: q, sql: s}]",
		"i.txt":  "x",
	} {
		p := filepath.Join(dir, name)
		writeFile(t, p, content)
		_, err := LoadFile(p)
		assert.ErrorIs(t, err, ErrDataset, name)
	}
	_, err = LoadSpider(SpiderPaths{Dir: dir})
	assert.ErrorIs(t, err, ErrDataset)
	_, err = LoadBIRD(BIRDPaths{Dir: dir})
	assert.ErrorIs(t, err, ErrDataset)
}

// A database file that is not SQLite excludes its questions with the
// reason; the others are scored.
func TestBrokenDatabaseExcluded(t *testing.T) {
	dir := t.TempDir()
	writeDB(t, filepath.Join(dir, "good.sqlite"), "CREATE TABLE t(x INT)", "INSERT INTO t VALUES (1)")
	writeFile(t, filepath.Join(dir, "bad.sqlite"), "not a database")
	path := filepath.Join(dir, "set.json")
	writeFile(t, path, `{"questions": [{"question": "a", "sql": "SELECT x FROM t", "database": "good.sqlite"},
		{"question": "b", "sql": "SELECT x FROM t", "database": "bad.sqlite"}]}`)
	ds, err := LoadFile(path)
	require.NoError(t, err)
	p := &Predictions{Keyed: true, ByID: map[string]string{"0": "SELECT x FROM t", "1": "SELECT x FROM t"}}
	r := scoreOne(t, ds, p)
	assertCounts(t, r, 1, 1, 1)
	require.NotEmpty(t, r.Exclusions)
	assert.Contains(t, r.Exclusions[0].Reason, "cannot open database bad.sqlite")
}

package eval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/text2sql-go/text2sql/internal/shareddata"

	"github.com/text2sql-go/text2sql/accuracy"
)

func TestLoadSpiderDev(t *testing.T) {
	ds := spiderDev(t)
	if len(ds.Questions) != 1034 || ds.Mode != accuracy.ModeSpider || !ds.Rewrite {
		t.Fatalf("%d questions, mode %s", len(ds.Questions), ds.Mode)
	}
	// wta_1 is missing: its 62 questions are excluded, with the reason.
	ex := ds.Exclusions()
	if len(ex) != 1 || ex[0].DB != "wta_1" || ex[0].Count != 62 || !strings.Contains(ex[0].Reason, "wta_1.sqlite not found") {
		t.Fatalf("%+v", ex)
	}
	if n := len(ds.Scorable()); n != 972 {
		t.Fatalf("%d scorable", n)
	}
	// The official hardness split of Spider dev.
	counts := map[string]int{}
	for _, q := range ds.Questions {
		counts[q.Difficulty]++
	}
	want := map[string]int{HardnessEasy: 248, HardnessMedium: 446, HardnessHard: 174, HardnessExtra: 166}
	for k, v := range want {
		if counts[k] != v {
			t.Fatalf("hardness %v, want %v", counts, want)
		}
	}
}

func TestLoadBIRDMiniDev(t *testing.T) {
	dir := shareddata.Path(t, "bird", "mini_dev")
	ds, err := LoadBIRD(BIRDPaths{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if len(ds.Questions) != 500 || ds.Mode != accuracy.ModeBIRD || ds.Rewrite {
		t.Fatalf("%d questions", len(ds.Questions))
	}
	q := ds.Questions[0]
	if q.ID != "0" || q.SourceID != "1471" || q.Difficulty != "simple" || q.Evidence == "" || !strings.Contains(q.Prompt(), "\nEvidence: ") {
		t.Fatalf("%+v", q)
	}
	// No databases: every question is excluded, saying results cannot be
	// compared.
	if len(ds.Scorable()) != 0 {
		t.Fatal("BIRD questions should be excluded without the databases")
	}
	for _, e := range ds.Exclusions() {
		if !strings.Contains(e.Reason, "results cannot be compared") {
			t.Fatal(e.Reason)
		}
	}
	// Scoring says so: no silent zero.
	preds, err := ReadPredictions(filepath.Join(dir, "predictions", "predict_mini_dev_gpt-4_sqlite.json"))
	if err != nil {
		t.Fatal(err)
	}
	reps, err := Score(context.Background(), ds, []*Predictions{preds}, Options{})
	if !errors.Is(err, ErrNotComparable) {
		t.Fatalf("err %v", err)
	}
	r := reps[0]
	if r.EX != nil || r.Comparable || r.Total != 0 || r.Excluded != 500 || !strings.Contains(r.Note, "cannot be compared") {
		t.Fatalf("%+v", r)
	}
	b, _ := json.Marshal(r)
	if !strings.Contains(string(b), `"ex":null`) {
		t.Fatalf("ex should be null: %s", b)
	}
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
			fmt.Sscan(k, &n)
			sql := fmt.Sprintf("SELECT v FROM t WHERE id = %d", n)
			if n%3 == 2 {
				sql = "SELECT v FROM t WHERE id = -1" // wrong on purpose
			}
			val, _ := json.Marshal(sql + "\t----- bird -----\tfixture")
			fmt.Fprintf(b, "%q: %s", k, val)
		}
		b.WriteString("}")
	}
	lexical := append([]string(nil), keys...)
	sortStrings(lexical) // "0","1","10","11","2",…
	write(&sorted, lexical)
	write(&numeric, keys)
	pl, err := ParsePredictions([]byte(sorted.String()))
	if err != nil {
		t.Fatal(err)
	}
	pn, err := ParsePredictions([]byte(numeric.String()))
	if err != nil {
		t.Fatal(err)
	}
	reps, err := Score(context.Background(), ds, []*Predictions{pl, pn}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if reps[0].Correct != 8 || reps[1].Correct != 8 || reps[0].Total != 12 {
		t.Fatalf("lexical %d/%d, numeric %d/%d", reps[0].Correct, reps[0].Total, reps[1].Correct, reps[1].Total)
	}
	for i := range reps[0].Records {
		if reps[0].Records[i].Outcome != reps[1].Records[i].Outcome {
			t.Fatalf("question %d differs", i)
		}
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
		if err != nil {
			t.Fatal(err)
		}
		_, err = Score(context.Background(), ds, []*Predictions{p}, Options{})
		if !errors.Is(err, ErrPredictions) || !strings.Contains(err.Error(), tc.want) {
			t.Fatalf("err %v, want %q", err, tc.want)
		}
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
	p, _ := ParsePredictions([]byte(byQID.String()))
	if reps, err := Score(context.Background(), ds, []*Predictions{p}, Options{}); err != nil || reps[0].Correct != 12 {
		t.Fatalf("by question_id: %v", err)
	}
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
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
	b, _ := json.Marshal(qs)
	if err := os.WriteFile(filepath.Join(dir, "dev.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	tables := `[{"db_id": "fixture", "table_names_original": ["t"], "column_names_original": [[-1, "*"], [0, "id"], [0, "v"]],
		"column_types": ["text", "integer", "text"], "primary_keys": [1], "foreign_keys": []}]`
	if err := os.WriteFile(filepath.Join(dir, "dev_tables.json"), []byte(tables), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "dev_databases", "fixture"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeDB(t, filepath.Join(dir, "dev_databases", "fixture", "fixture.sqlite"), stmts...)
	ds, err := LoadBIRD(BIRDPaths{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
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
	reps, err := Score(context.Background(), ds, []*Predictions{preds}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := reps[0]
	if r.Correct != 1 || r.Total != 3 || r.Mode != accuracy.ModeBIRD || *r.EX != 1.0/3 {
		t.Fatalf("%+v", r)
	}
	if r.Records[1].Kind != "wrong_column_count" || r.Records[2].Outcome != OutcomeError || r.Records[2].Kind != "unknown_column" {
		t.Fatalf("%+v\n%+v", r.Records[1], r.Records[2])
	}
	if len(r.ByDifficulty) != 3 || r.ByDifficulty[0].Name != "simple" || r.ByDifficulty[2].Name != "challenging" {
		t.Fatalf("%+v", r.ByDifficulty)
	}

	// The same questions over an empty copy of the database.
	empty := t.TempDir()
	if err := os.MkdirAll(filepath.Join(empty, "fixture"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeDB(t, filepath.Join(empty, "fixture", "fixture.sqlite"), "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)")
	ds.Databases["fixture"].Path = filepath.Join(empty, "fixture", "fixture.sqlite")
	reps, err = Score(context.Background(), ds, []*Predictions{preds}, Options{})
	if !errors.Is(err, ErrNotComparable) || reps[0].EX != nil || !strings.Contains(reps[0].Note, "no rows") {
		t.Fatalf("err %v, %+v", err, reps[0])
	}
}

func TestPredictionLines(t *testing.T) {
	p, err := ParsePredictions([]byte("  SELECT 1\t-- ignored db\nSELECT 2\n\nSELECT 4\n"))
	if err != nil {
		t.Fatal(err)
	}
	if p.Keyed || len(p.ByID) != 4 || p.ByID["0"] != "SELECT 1" || p.ByID["2"] != "" || p.ByID["3"] != "SELECT 4" {
		t.Fatalf("%+v", p.ByID)
	}
	// A BIRD value that is not a string is an empty query.
	p, err = ParsePredictions([]byte(`{"0": 5, "1": "SELECT 1"}`))
	if err != nil || p.ByID["0"] != "" || p.ByID["1"] != "SELECT 1" {
		t.Fatalf("%v %+v", err, p)
	}
	for _, bad := range []string{"", "\n", "{", `{"0": "a"} x`, "{}x"} {
		if _, err := ParsePredictions([]byte(bad)); !errors.Is(err, ErrPredictions) {
			t.Errorf("%q: err %v", bad, err)
		}
	}
	// A line file must have one line per question.
	ds := spiderDev(t)
	p, _ = ParsePredictions([]byte("SELECT 1\nSELECT 2\n"))
	if _, err := p.Pair(ds); !errors.Is(err, ErrPredictions) || !strings.Contains(err.Error(), "2 lines for 1034 questions") {
		t.Fatal(err)
	}
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
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	ds, err := LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if ds.Name != "shop" || len(ds.Questions) != 4 || ds.Questions[3].ID != "3" || ds.Questions[3].Excluded == "" {
		t.Fatalf("%+v", ds.Questions)
	}
	preds := &Predictions{Name: "mine", Keyed: true, ByID: map[string]string{
		"cheap":  "SELECT name FROM items WHERE price <= 12",
		"count":  "SELECT count(*) FROM items",
		"prices": "SELECT name, price FROM items ORDER BY price DESC",
		"3":      "SELECT 1",
	}}
	reps, err := Score(context.Background(), ds, []*Predictions{preds}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := reps[0]
	if r.Correct != 2 || r.Total != 3 || r.Excluded != 1 || r.Records[2].Kind != "wrong_order" {
		t.Fatalf("%+v %+v", r, r.Records)
	}
	// The same in JSON.
	js := `{"database": "shop.sqlite", "mode": "strict", "questions": [{"question": "n?", "rows": [[3]]}]}`
	jpath := filepath.Join(dir, "set.json")
	os.WriteFile(jpath, []byte(js), 0o644)
	ds, err = LoadFile(jpath)
	if err != nil || ds.Mode != accuracy.ModeStrict || ds.Questions[0].Expected.Rows[0][0] != int64(3) {
		t.Fatalf("%v %+v", err, ds)
	}

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
		os.WriteFile(p, []byte(content), 0o644)
		if _, err := LoadFile(p); !errors.Is(err, ErrDataset) {
			t.Errorf("%s: err %v", name, err)
		}
	}
	if _, err := LoadSpider(SpiderPaths{Dir: dir}); !errors.Is(err, ErrDataset) {
		t.Fatal(err)
	}
	if _, err := LoadBIRD(BIRDPaths{Dir: dir}); !errors.Is(err, ErrDataset) {
		t.Fatal(err)
	}
}

// A database file that is not SQLite excludes its questions with the
// reason; the others are scored.
func TestBrokenDatabaseExcluded(t *testing.T) {
	dir := t.TempDir()
	writeDB(t, filepath.Join(dir, "good.sqlite"), "CREATE TABLE t(x INT)", "INSERT INTO t VALUES (1)")
	os.WriteFile(filepath.Join(dir, "bad.sqlite"), []byte("not a database"), 0o644)
	set := `{"questions": [{"question": "a", "sql": "SELECT x FROM t", "database": "good.sqlite"},
		{"question": "b", "sql": "SELECT x FROM t", "database": "bad.sqlite"}]}`
	path := filepath.Join(dir, "set.json")
	os.WriteFile(path, []byte(set), 0o644)
	ds, err := LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	p := &Predictions{Keyed: true, ByID: map[string]string{"0": "SELECT x FROM t", "1": "SELECT x FROM t"}}
	reps, err := Score(context.Background(), ds, []*Predictions{p}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := reps[0]
	if r.Correct != 1 || r.Total != 1 || r.Excluded != 1 || !strings.Contains(r.Exclusions[0].Reason, "cannot open database bad.sqlite") {
		t.Fatalf("%+v", r)
	}
}

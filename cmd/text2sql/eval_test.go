package main

import (
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	_ "github.com/mattn/go-sqlite3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/text2sql-go/text2sql/internal/shareddata"
)

func TestEvalSpiderPredictions(t *testing.T) {
	spider := shareddata.Path(t, "spider")
	preds := shareddata.Path(t, "predictions", "spider_dev")
	dir := t.TempDir()
	out, errOut, code := cli(t, "eval", "--spider", spider, "--json",
		"--predictions", filepath.Join(preds, "DAIL-SQL+GPT-4.txt"),
		"--predictions", filepath.Join(preds, "DAIL-SQL+GPT-4+self-consistency.txt"),
		"--records", filepath.Join(dir, "records.jsonl"), "--markdown", filepath.Join(dir, "report.md"))
	require.Equal(t, 0, code, "exit %d: %s", code, errOut)
	var reps []struct {
		EX       *float64 `json:"ex"`
		Correct  int      `json:"correct"`
		Total    int      `json:"total"`
		Excluded int      `json:"excluded"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &reps))
	require.False(t, len(reps) != 2 || reps[0].Correct != 809 || reps[1].Correct != 815 || reps[0].Total != 972 || reps[0].Excluded != 62 ||
		*reps[0].EX != 809.0/972, "%+v", reps)
	for _, f := range []string{"records.DAIL-SQL+GPT-4.jsonl", "records.DAIL-SQL+GPT-4+self-consistency.jsonl", "report.DAIL-SQL+GPT-4.md"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		require.NoError(t, err, "%s", f)
		require.NotEqual(t, 0, len(b), "%s: %v", f, err)
	}
	// One file: an object; the human output is the Markdown report.
	out, _, code = cli(t, "eval", "--spider", spider, "--predictions", filepath.Join(preds, "DAIL-SQL+GPT-4.txt"))
	require.Equal(t, 0, code, "exit code\n%s", out)
	assert.Contains(t, out, "**EX 83.2%** (809 / 972); 62 excluded")
	assert.Contains(t, out, "wta_1")
}

func TestEvalBIRDWithoutDatabases(t *testing.T) {
	bird := shareddata.Path(t, "bird", "mini_dev")
	out, errOut, code := cli(t, "eval", "--bird", bird, "--json",
		"--predictions", filepath.Join(bird, "predictions", "predict_mini_dev_gpt-4_sqlite.json"))
	require.Equal(t, exitError, code, "exit %d: %s", code, errOut)
	require.Contains(t, errOut, "results cannot be compared", "exit %d: %s", code, errOut)
	var rep map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Nil(t, rep["ex"], "%v", rep)
	require.Equal(t, false, rep["comparable"], "%v", rep)
	require.Equal(t, 0.0, rep["total"], "%v", rep)
	require.Equal(t, 500.0, rep["excluded"], "%v", rep)
	// Recall works on the schemas alone.
	out, _, code = cli(t, "eval", "--bird", bird, "--recall", "--json")
	require.Equal(t, 0, code, "exit %d: %.400s", code, out)
	require.Contains(t, out, `"strict_table_recall"`, "exit %d: %.400s", code, out)
	require.Contains(t, out, `"materialized"`, "exit %d: %.400s", code, out)
}

// TestEvalRecallCatalog: schema linking over all 873 Spider tables (166
// databases) as one catalog, as a new user measures it with the defaults
// (cell values on, 6 tables at most). Measured: 907 of 972 questions see
// every gold table (93.3%), at 5.17 tables shown on average.
func TestEvalRecallCatalog(t *testing.T) {
	if testing.Short() {
		t.Skip("full Spider dev run")
	}
	out, errOut, code := cli(t, "eval", "--spider", shareddata.Path(t, "spider"), "--recall", "--catalog", "--json")
	require.Equal(t, 0, code, "exit %d: %s", code, errOut)
	var r struct {
		Overall struct {
			Questions int     `json:"questions"`
			Strict    float64 `json:"strict_table_recall"`
			Shown     float64 `json:"mean_tables_shown"`
		} `json:"overall"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &r), "%.400s", out)
	assert.Equal(t, 972, r.Overall.Questions)
	assert.GreaterOrEqual(t, r.Overall.Strict, 0.93)
	assert.LessOrEqual(t, r.Overall.Shown, 6.0)
}

func TestEvalOracleAndUsage(t *testing.T) {
	spider := shareddata.Path(t, "spider")
	out, errOut, code := cli(t, "eval", "--spider", spider, "--oracle", "--limit", "60", "--json")
	require.Equal(t, 0, code, "exit %d: %s", code, errOut)
	var rep struct {
		EX     *float64 `json:"ex"`
		Total  int      `json:"total"`
		Oracle struct {
			EX     *float64 `json:"ex"`
			Strict *float64 `json:"strict_table_recall"`
		} `json:"oracle"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Equal(t, 60, rep.Total, "%s", out)
	require.NotNil(t, rep.EX, "%s", out)
	require.Equal(t, *rep.Oracle.Strict, *rep.Oracle.EX, "%s", out)
	for _, args := range [][]string{
		{"eval", "--spider", spider},
		{"eval", "--spider", spider, "--bird", spider, "--recall"},
		{"eval", "--spider", spider, "--oracle", "--predictions", "x"},
		{"eval", "--spider", spider, "--recall", "--mode", "fuzzy"},
		{"eval", "--dataset", "x.yaml", "--db-dir", "y", "--recall"},
	} {
		_, _, code := cli(t, args...)
		assert.Equal(t, exitUsage, code, "%v: exit %d, want %d", args, code, exitUsage)
	}
	_, errOut, code = cli(t, "eval", "--spider", spider, "--predictions", filepath.Join(t.TempDir(), "none.txt"))
	require.Equal(t, exitError, code, "exit %d %s", code, errOut)
	require.Contains(t, errOut, "none.txt", "exit %d %s", code, errOut)
}

func answerKeyDB(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "quiz.sqlite")
	db, err := sql.Open("sqlite3", path)
	require.NoError(t, err)
	defer db.Close()
	for _, s := range []string{"CREATE TABLE pets(name TEXT, kind TEXT, age INT)",
		"INSERT INTO pets VALUES ('rex', 'dog', 3), ('tom', 'cat', 5), ('kit', 'cat', 1)"} {
		_, err := db.Exec(s)
		require.NoError(t, err)
	}
	return path
}

func TestRunAnswerKey(t *testing.T) {
	db := answerKeyDB(t)
	out, errOut, code := cli(t, "run", "--db", db, "--answer-key", "SELECT name, age FROM pets WHERE kind = 'cat'", "SELECT age, name FROM pets WHERE kind = 'cat'")
	require.Equal(t, 0, code, "exit %d %s %s", code, out, errOut)
	require.Contains(t, out, "matches the answer key", "exit %d %s %s", code, out, errOut)
	keyFile := filepath.Join(t.TempDir(), "key.sql")
	os.WriteFile(keyFile, []byte("SELECT name FROM pets WHERE kind = 'cat'\n"), 0o644)
	out, _, code = cli(t, "run", "--db", db, "--answer-key", keyFile, "SELECT name FROM pets WHERE age > 2")
	require.Equal(t, exitMismatch, code, "exit %d\n%s", code, out)
	require.Contains(t, out, "does NOT match", "exit %d\n%s", code, out)
	require.Contains(t, out, `missing: ["kit"]`, "exit %d\n%s", code, out)
	require.Contains(t, out, `extra:   ["rex"]`, "exit %d\n%s", code, out)
	out, _, code = cli(t, "run", "--db", db, "--json", "--answer-key", keyFile, "--answer-mode", "strict", "SELECT name FROM pets WHERE kind = 'cat'")
	var doc struct {
		Rows        [][]any `json:"rows"`
		AnswerCheck struct {
			Matched bool   `json:"matched"`
			Mode    string `json:"mode"`
		} `json:"answer_check"`
	}
	err := json.Unmarshal([]byte(out), &doc)
	require.False(t, err != nil || code != 0 || !doc.AnswerCheck.Matched || doc.AnswerCheck.Mode != "strict" || len(doc.Rows) != 2, "exit %d %v %s", code, err, out)
	// A candidate the guard refuses: the SQL exit code, the table intact.
	_, _, code = cli(t, "run", "--db", db, "--answer-key", keyFile, "DELETE FROM pets")
	require.Equal(t, exitSQL, code, "exit %d", code)
	// A broken answer key is an error.
	_, errOut, code = cli(t, "run", "--db", db, "--answer-key", "SELECT nope FROM pets", "SELECT 1")
	require.Equal(t, exitError, code, "exit %d %s", code, errOut)
	require.Contains(t, errOut, "answer key", "exit %d %s", code, errOut)
}

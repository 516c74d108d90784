package eval

import (
	"context"
	"errors"
	"strings"
	"testing"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/accuracy"
)

func TestCheckAnswer(t *testing.T) {
	ex := openExec(t, newDB(t, "quiz.sqlite",
		"CREATE TABLE emp(name TEXT, dept TEXT, salary REAL)",
		"INSERT INTO emp VALUES ('ann', 'it', 10), ('bob', 'it', 20), ('cid', 'hr', 30), ('dan', 'hr', 30)",
	))
	ctx := context.Background()
	tests := []struct {
		name, cand, key string
		mode            accuracy.Mode
		matched         bool
		summary         string
	}{
		{"same rows, other column order", "SELECT dept, name FROM emp", "SELECT name, dept FROM emp", accuracy.ModeSpider, true, "match (columns permuted"},
		{"column order fixed in strict", "SELECT dept, name FROM emp", "SELECT name, dept FROM emp", accuracy.ModeStrict, false, "columns in another order"},
		{"missing and extra rows", "SELECT name FROM emp WHERE salary > 10", "SELECT name FROM emp WHERE dept = 'it'", accuracy.ModeSpider, false, "1 missing row, 2 extra rows"},
		{"column mismatch", "SELECT name, salary FROM emp", "SELECT name FROM emp", accuracy.ModeSpider, false, "column mismatch: gold has 1 column, prediction 2 columns"},
		{"answer key orders", "SELECT name FROM emp ORDER BY name DESC", "SELECT name FROM emp ORDER BY name", accuracy.ModeSpider, false, "different order"},
		{"answer key does not order", "SELECT name FROM emp ORDER BY name DESC", "SELECT name FROM emp", accuracy.ModeSpider, true, "match"},
		{"subquery ORDER BY does not order the key", "SELECT name FROM emp ORDER BY name DESC",
			"SELECT name FROM emp WHERE salary >= (SELECT salary FROM emp ORDER BY salary LIMIT 1)", accuracy.ModeSpider, true, "match"},
		{"AVG vs SUM/COUNT within tolerance", "SELECT sum(salary) * 1.0 / count(*) / 3 FROM emp", "SELECT avg(salary) / 3 FROM emp", accuracy.ModeStrict, true, "match"},
		{"bird: duplicates ignored", "SELECT dept FROM emp", "SELECT DISTINCT dept FROM emp", accuracy.ModeBIRD, true, "match"},
		{"candidate fails", "SELECT nope FROM emp", "SELECT name FROM emp", accuracy.ModeSpider, false, "the candidate failed: unknown_column"},
		{"candidate refused", "DELETE FROM emp", "SELECT name FROM emp", accuracy.ModeSpider, false, "the candidate failed: not_read_only"},
		{"nondeterministic key", "SELECT name FROM emp ORDER BY salary DESC LIMIT 1", "SELECT name FROM emp ORDER BY salary DESC LIMIT 1", accuracy.ModeSpider, true, "the answer key is nondeterministic"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			chk, err := accuracy.CheckAnswer(ctx, ex, tc.cand, tc.key, tc.mode)
			if err != nil {
				t.Fatal(err)
			}
			if chk.Matched != tc.matched || !strings.Contains(chk.Summary, tc.summary) {
				t.Fatalf("matched %v %q, want %v %q", chk.Matched, chk.Summary, tc.matched, tc.summary)
			}
		})
	}
	// The rows of a diff are there for a quiz page to show.
	chk, _ := accuracy.CheckAnswer(ctx, ex, "SELECT name FROM emp WHERE dept = 'it' AND name <> 'bob'", "SELECT name FROM emp WHERE dept = 'it'", "")
	if chk.Matched || chk.Mode != accuracy.ModeSpider || len(chk.Diff.Missing) != 1 || chk.Diff.Missing[0][0] != "bob" {
		t.Fatalf("%+v", chk.Diff)
	}
	// A broken answer key is the caller's error.
	for _, key := range []string{"SELECT nope FROM emp", "DROP TABLE emp", ""} {
		if _, err := accuracy.CheckAnswer(ctx, ex, "SELECT 1", key, accuracy.ModeSpider); !errors.Is(err, accuracy.ErrAnswerKey) {
			t.Fatalf("%q: err %v", key, err)
		}
	}
	if _, err := accuracy.CheckAnswer(ctx, ex, "SELECT 1", "SELECT 1", "fuzzy"); err == nil {
		t.Fatal("unknown mode")
	}
	if _, err := accuracy.CheckAnswer(ctx, nil, "SELECT 1", "SELECT 1", accuracy.ModeSpider); !errors.Is(err, text2sql.ErrInvalidConfig) {
		t.Fatal(err)
	}
	// The table survives the refused candidate.
	if r := run(t, ex, "SELECT count(*) FROM emp"); r.Rows[0][0] != int64(4) {
		t.Fatal(r.Rows)
	}
}

package text2sql_test

import (
	"context"
	"database/sql"
	"reflect"
	"strings"
	"testing"

	_ "github.com/mattn/go-sqlite3"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/executor/sqlite"
	"github.com/text2sql-go/text2sql/generator"
	"github.com/text2sql-go/text2sql/internal/shareddata"
	"github.com/text2sql-go/text2sql/llm/llmtest"
	"github.com/text2sql-go/text2sql/retriever"
)

// Every Spider dev question on the shared databases goes through the whole
// pipeline (retrieval, prompt, parsing, guard, execution) with a scripted
// model that answers the gold SQL: no gold query is refused, and each result
// equals direct execution through a plain connection.
func TestSpiderDevThroughPipeline(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 972 questions")
	}
	qs, missing := shareddata.SpiderDev(t)
	if len(qs) != 972 || missing != 62 {
		t.Fatalf("%d questions with databases, %d without; want 972 and 62 (wta_1)", len(qs), missing)
	}
	byDB := map[string][]shareddata.SpiderQuestion{}
	var order []string
	for _, q := range qs {
		if byDB[q.DBID] == nil {
			order = append(order, q.DBID)
		}
		byDB[q.DBID] = append(byDB[q.DBID], q)
	}
	ctx := context.Background()
	ran := 0
	for _, dbID := range order {
		path := shareddata.SpiderDB(t, dbID)
		ex, err := sqlite.Open(path, sqlite.Options{MaxRows: 1_000_000})
		if err != nil {
			t.Fatal(err)
		}
		plain, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
		if err != nil {
			t.Fatal(err)
		}
		ret, err := retriever.NewHybrid(ctx, retriever.HybridOptions{Schema: ex.Schema()})
		if err != nil {
			t.Fatal(err)
		}
		var gold, question string
		model := llmtest.Func(func(req text2sql.ModelRequest) (string, error) {
			last := req.Messages[len(req.Messages)-1].Content
			if !strings.Contains(last, question) {
				t.Errorf("%s: the prompt misses the question %q", dbID, question)
			}
			return reply(gold), nil
		})
		gen, err := generator.New(model, generator.Options{Dialect: text2sql.DialectSQLite})
		if err != nil {
			t.Fatal(err)
		}
		p, err := text2sql.New(text2sql.Config{Retriever: ret, Generator: gen, Executor: ex, MaxRepairs: -1, MaxRows: 1_000_000})
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range byDB[dbID] {
			gold, question = q.Query, q.Question
			ans, err := p.Ask(ctx, q.Question)
			ran++
			if err != nil {
				t.Errorf("%s: %q: %v", dbID, q.Query, err)
				continue
			}
			if ans.Status != text2sql.StatusAnswered {
				t.Errorf("%s: %q: status %s", dbID, q.Query, ans.Status)
				continue
			}
			want, err := shareddata.PlainRows(plain, q.Query)
			if err != nil {
				t.Fatal(err)
			}
			if len(want) == 0 && len(ans.Result.Rows) == 0 {
				continue
			}
			if !reflect.DeepEqual(ans.Result.Rows, want) {
				t.Errorf("%s: %q: pipeline rows differ from direct execution", dbID, q.Query)
			}
		}
		if got := model.CallCount(); got != len(byDB[dbID]) {
			t.Errorf("%s: %d model calls for %d questions", dbID, got, len(byDB[dbID]))
		}
		plain.Close()
		ex.Close()
	}
	if ran != 972 {
		t.Errorf("ran %d questions, want 972", ran)
	}
}

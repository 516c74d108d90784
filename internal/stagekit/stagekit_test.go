package stagekit

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/llm/llmtest"
)

func TestRunReasks(t *testing.T) {
	m := llmtest.New("bad", "bad again", "good")
	bad := &text2sql.OutputError{Raw: "bad", Err: text2sql.ErrInvalidOutput}
	parse := func(s string) error {
		if s != "good" {
			return &Retry{Note: "try again", Err: bad}
		}
		return nil
	}
	calls, err := Call{Model: m, System: "sys", User: "u", MaxReasks: 2, Parse: parse}.Run(context.Background())
	require.NoError(t, err)
	require.Len(t, calls, 3)
	assert.Equal(t, 3, m.CallCount())
	last := m.Calls()[2].Messages
	require.Len(t, last, 5)
	assert.Equal(t, "bad", last[1].Content)
	assert.Equal(t, "try again", last[2].Content)
	assert.Equal(t, "bad again", last[3].Content)
	assert.Regexp(t, `^\[system\]\nsys\n\n\[user\]\nu`, calls[2].Prompt)

	m = llmtest.New("bad").RepeatLast()
	calls, err = Call{Model: m, User: "u", MaxReasks: 1, Parse: parse}.Run(context.Background())
	assert.ErrorIs(t, err, bad, "exhausted")
	assert.Len(t, calls, 2, "exhausted")

	stop := errors.New("stop")
	calls, err = Call{Model: llmtest.New("x"), User: "u", MaxReasks: 3, Parse: func(string) error { return stop }}.Run(context.Background())
	assert.ErrorIs(t, err, stop, "non-retry error")
	assert.Len(t, calls, 1, "non-retry error")

	_, err = (Call{User: "u"}).Run(context.Background())
	assert.ErrorIs(t, err, text2sql.ErrInvalidConfig, "no model")
}

func TestFindObject(t *testing.T) {
	accept := func(o Object) bool { _, ok := o.Get("ok"); return ok }
	for text, want := range map[string]string{
		`{"ok": 1}`:                          "1",
		"prose {\"ok\": 2} more {\"ok\": 3}": "3",
		"```json\n{\"x\": {\"OK\": 4}}\n```": "4",
		`[{"a": 1}, {"Ok": 5}]`:              "5",
		`{"nope": 1} {"ok": 6`:               "",
		`{"o-k": 7}`:                         "7",
	} {
		o, found := FindObject(text, accept)
		got := ""
		if found {
			v, _ := o.Get("ok")
			got = string(v)
		}
		assert.Equal(t, want, got, "%q", text)
	}
	assert.Equal(t, []string{"a", "b", "c"}, Strings([]byte(`"- a\n* b\n\n c"`)))
	assert.Equal(t, []string{"a", "1"}, Strings([]byte(`["a", 1, "", null]`)))
	assert.Equal(t, "hé…", Cut("héllo", 2))
	assert.Equal(t, "a b", OneLine(" a \n b "))
}

func TestOptions(t *testing.T) {
	for _, d := range []text2sql.Dialect{"", text2sql.DialectSQLite, text2sql.DialectPostgres, text2sql.DialectMySQL} {
		assert.NoError(t, CheckDialect("planner", d))
	}
	err := CheckDialect("planner", "oracle")
	assert.ErrorIs(t, err, text2sql.ErrInvalidConfig)
	assert.EqualError(t, err, `text2sql: invalid configuration: planner: unknown dialect "oracle" (want "sqlite", "postgres" or "mysql")`)
	for _, temp := range []float64{0, 0.7, 2} {
		assert.NoError(t, CheckTemperature("judge", temp))
	}
	for _, temp := range []float64{-0.1, 2.5, math.NaN()} {
		assert.ErrorIs(t, CheckTemperature("judge", temp), text2sql.ErrInvalidConfig, "%v", temp)
	}
	assert.EqualError(t, CheckTemperature("judge", 3), "text2sql: invalid configuration: judge: temperature 3 is outside [0, 2]")
	assert.Equal(t, 1, Reasks(0))
	assert.Equal(t, 0, Reasks(-2))
	assert.Equal(t, 3, Reasks(3))
}

// The dialect is the option's, else the retrieval's, else the fallback,
// else SQLite.
func TestResolveDialect(t *testing.T) {
	pg := &text2sql.Retrieval{Dialect: text2sql.DialectPostgres}
	assert.Equal(t, text2sql.DialectMySQL, ResolveDialect(text2sql.DialectMySQL, pg, text2sql.DialectSQLite))
	assert.Equal(t, text2sql.DialectPostgres, ResolveDialect("", pg, text2sql.DialectMySQL))
	assert.Equal(t, text2sql.DialectMySQL, ResolveDialect("", &text2sql.Retrieval{}, text2sql.DialectMySQL))
	assert.Equal(t, text2sql.DialectSQLite, ResolveDialect("", nil, ""))
	assert.Equal(t, text2sql.DialectMySQL, ResolveDialect("", &text2sql.Retrieval{Dialect: "oracle"}, text2sql.DialectMySQL), "an unknown dialect is passed over")
	assert.Equal(t, text2sql.DialectSQLite, ResolveDialect("", nil, "oracle"), "an unknown dialect is passed over")
}

// An unusable answer's error holds the answer and wraps ErrInvalidOutput;
// a stage passes it (and ctx's end) on as it is and names itself in any
// other failure.
func TestInvalidAndStageError(t *testing.T) {
	bad := Invalid("raw answer", "no %s", "verdict")
	assert.Equal(t, "raw answer", bad.Raw)
	assert.ErrorIs(t, bad, text2sql.ErrInvalidOutput)
	assert.EqualError(t, bad.Err, "text2sql: malformed model output: no verdict")
	ctx := context.Background()
	unusable := fmt.Errorf("model call: %w", bad)
	assert.Equal(t, unusable, StageError(ctx, "judge", unusable), "an unusable answer is passed on as it is")
	failed := errors.New("model call: down")
	assert.EqualError(t, StageError(ctx, "judge", failed), "judge: model call: down")
	assert.ErrorIs(t, StageError(ctx, "judge", failed), failed)
	ended, cancel := context.WithCancel(ctx)
	cancel()
	assert.Equal(t, failed, StageError(ended, "judge", failed), "ctx's end is passed on as it is")
}

func TestQuestion(t *testing.T) {
	c := &text2sql.Retrieval{Question: " from the retrieval "}
	assert.Equal(t, "asked", Question("  asked\n", c))
	assert.Equal(t, "from the retrieval", Question(" ", c))
	assert.Equal(t, "", Question("", nil))
}

// TestWholeSchemaTablesNotListed: tables shown only because the whole
// schema fits are in the schema, not listed one by one; the list says the
// schema is the whole database.
func TestWholeSchemaTablesNotListed(t *testing.T) {
	tables := []text2sql.TableRef{
		{Name: "singer", Reason: text2sql.ReasonRetrieved},
		{Name: "concert", Reason: text2sql.ReasonWholeSchema},
		{Name: "stadium", Reason: text2sql.ReasonWholeSchema},
	}
	var w Writer
	WriteRetrieved(&w, tables, "CREATE TABLE singer (id INTEGER);", nil, ContextOptions{})
	out := w.String()
	assert.Contains(t, out, "- singer (retrieved)")
	assert.Contains(t, out, "(the schema below is the whole database):")
	assert.NotContains(t, out, "concert")
	assert.NotContains(t, out, string(text2sql.ReasonWholeSchema))

	// Every table whole schema: no list at all.
	w = Writer{}
	WriteRetrieved(&w, tables[1:], "CREATE TABLE concert (id INTEGER);", nil, ContextOptions{})
	assert.NotContains(t, w.String(), "## Tables")
	assert.Contains(t, w.String(), "CREATE TABLE concert")

	// Nothing whole schema: the plain list.
	w = Writer{}
	WriteRetrieved(&w, tables[:1], "", nil, ContextOptions{})
	assert.NotContains(t, w.String(), "whole database")
}

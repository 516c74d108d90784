package stagekit

import (
	"context"
	"errors"
	"strings"
	"testing"

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
	if err != nil || len(calls) != 3 || m.CallCount() != 3 {
		t.Fatalf("calls %d, err %v", len(calls), err)
	}
	last := m.Calls()[2].Messages
	if len(last) != 5 || last[1].Content != "bad" || last[2].Content != "try again" || last[3].Content != "bad again" {
		t.Errorf("conversation = %+v", last)
	}
	if !strings.HasPrefix(calls[2].Prompt, "[system]\nsys\n\n[user]\nu") {
		t.Errorf("prompt = %q", calls[2].Prompt)
	}
	m = llmtest.New("bad").RepeatLast()
	calls, err = Call{Model: m, User: "u", MaxReasks: 1, Parse: parse}.Run(context.Background())
	if !errors.Is(err, bad) || len(calls) != 2 {
		t.Errorf("exhausted: %d calls, %v", len(calls), err)
	}
	stop := errors.New("stop")
	calls, err = Call{Model: llmtest.New("x"), User: "u", MaxReasks: 3, Parse: func(string) error { return stop }}.Run(context.Background())
	if !errors.Is(err, stop) || len(calls) != 1 {
		t.Errorf("non-retry error: %d calls, %v", len(calls), err)
	}
	if _, err := (Call{User: "u"}).Run(context.Background()); !errors.Is(err, text2sql.ErrInvalidConfig) {
		t.Errorf("no model: %v", err)
	}
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
		if got != want {
			t.Errorf("%q: got %q, want %q", text, got, want)
		}
	}
	if s := Strings([]byte(`"- a\n* b\n\n c"`)); strings.Join(s, "|") != "a|b|c" {
		t.Errorf("Strings = %q", s)
	}
	if s := Strings([]byte(`["a", 1, "", null]`)); strings.Join(s, "|") != "a|1" {
		t.Errorf("Strings = %q", s)
	}
	if Cut("héllo", 2) != "hé…" || OneLine(" a \n b ") != "a b" {
		t.Errorf("Cut/OneLine")
	}
}

package llmtest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/llm/llmtest"
)

func ask(content string) text2sql.ModelRequest {
	return text2sql.ModelRequest{Messages: []text2sql.Message{{Role: text2sql.RoleUser, Content: content}}}
}

func TestRepliesInOrderThenExhausted(t *testing.T) {
	m := llmtest.New("one", "two")
	ctx := context.Background()
	for _, want := range []string{"one", "two"} {
		resp, err := m.Complete(ctx, ask("q"))
		if err != nil || resp.Text != want || resp.Model != "scripted" {
			t.Fatalf("resp = %+v, err = %v", resp, err)
		}
	}
	_, err := m.Complete(ctx, ask("q"))
	if !errors.Is(err, llmtest.ErrExhausted) || !errors.Is(err, text2sql.ErrModel) {
		t.Errorf("err = %v", err)
	}
	if m.CallCount() != 3 {
		t.Errorf("CallCount = %d", m.CallCount())
	}
	if _, err := llmtest.New().Complete(ctx, ask("q")); !errors.Is(err, llmtest.ErrExhausted) {
		t.Errorf("no replies: %v", err)
	}
}

func TestRepeatLast(t *testing.T) {
	m := llmtest.New("one", "two").RepeatLast()
	var got []string
	for range 4 {
		resp, err := m.Complete(context.Background(), ask("q"))
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, resp.Text)
	}
	if strings.Join(got, ",") != "one,two,two,two" {
		t.Errorf("got %v", got)
	}
	if _, err := llmtest.New().RepeatLast().Complete(context.Background(), ask("q")); !errors.Is(err, llmtest.ErrExhausted) {
		t.Errorf("RepeatLast with no replies: %v", err)
	}
}

func TestFunc(t *testing.T) {
	boom := errors.New("boom")
	m := llmtest.Func(func(req text2sql.ModelRequest) (string, error) {
		if req.System == "fail" {
			return "", boom
		}
		return "echo: " + req.Messages[len(req.Messages)-1].Content, nil
	})
	resp, err := m.Complete(context.Background(), ask("hello"))
	if err != nil || resp.Text != "echo: hello" {
		t.Errorf("resp = %+v, err = %v", resp, err)
	}
	req := ask("x")
	req.System = "fail"
	if _, err := m.Complete(context.Background(), req); err != boom {
		t.Errorf("err = %v", err)
	}
	if m.CallCount() != 2 {
		t.Errorf("CallCount = %d", m.CallCount())
	}
}

func TestUsage(t *testing.T) {
	m := llmtest.New("12345") // 5 runes → 2 tokens
	req := text2sql.ModelRequest{System: "ééé", Messages: []text2sql.Message{{Role: text2sql.RoleUser, Content: "abcd"}, {Role: text2sql.RoleAssistant, Content: "x"}}}
	resp, err := m.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Usage != (text2sql.Usage{InputTokens: 2, OutputTokens: 2}) { // 8 runes → 2
		t.Errorf("usage = %+v", resp.Usage)
	}
}

func TestCallsAreCopies(t *testing.T) {
	m := llmtest.New("a").RepeatLast()
	temp := 0.5
	req := text2sql.ModelRequest{System: "s", Messages: []text2sql.Message{{Role: text2sql.RoleUser, Content: "q"}}, Schema: json.RawMessage(`{"type":"object"}`), Temperature: &temp, MaxTokens: 9}
	if _, err := m.Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	req.Messages[0].Content = "changed"
	req.Schema[0] = '['
	temp = 2
	calls := m.Calls()
	if len(calls) != 1 || calls[0].Messages[0].Content != "q" || string(calls[0].Schema) != `{"type":"object"}` || *calls[0].Temperature != 0.5 || calls[0].MaxTokens != 9 {
		t.Errorf("calls = %+v", calls)
	}
	calls[0].Messages[0].Content = "mutated"
	if m.Calls()[0].Messages[0].Content != "q" {
		t.Error("Calls returned shared state")
	}
}

func TestCancelledContext(t *testing.T) {
	m := llmtest.New("a")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := m.Complete(ctx, ask("q")); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v", err)
	}
	if m.CallCount() != 0 {
		t.Error("cancelled call recorded")
	}
	if resp, err := m.Complete(context.Background(), ask("q")); err != nil || resp.Text != "a" {
		t.Error("cancelled call used a reply")
	}
}

func TestConcurrent(t *testing.T) {
	replies := make([]string, 100)
	for i := range replies {
		replies[i] = fmt.Sprint(i)
	}
	m := llmtest.New(replies...)
	var mu sync.Mutex
	seen := map[string]bool{}
	var wg sync.WaitGroup
	for range 100 {
		wg.Go(func() {
			resp, err := m.Complete(context.Background(), ask("q"))
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			seen[resp.Text] = true
			mu.Unlock()
			_ = m.Calls()
		})
	}
	wg.Wait()
	if len(seen) != 100 || m.CallCount() != 100 {
		t.Errorf("%d distinct replies, %d calls", len(seen), m.CallCount())
	}
}

func Example() {
	// A pipeline under test would receive m as its text2sql.Model.
	m := llmtest.New(`{"sql": "SELECT count(*) FROM students"}`, `{"ok": true}`)
	ctx := context.Background()

	resp, _ := m.Complete(ctx, text2sql.ModelRequest{
		System:   "Write SQLite.",
		Messages: []text2sql.Message{{Role: text2sql.RoleUser, Content: "How many students are there?"}},
	})
	fmt.Println(resp.Text, resp.Model, resp.Usage.InputTokens, resp.Usage.OutputTokens)

	resp, _ = m.Complete(ctx, text2sql.ModelRequest{Messages: []text2sql.Message{{Role: text2sql.RoleUser, Content: "Is it right?"}}})
	fmt.Println(resp.Text)

	_, err := m.Complete(ctx, text2sql.ModelRequest{})
	fmt.Println(err)

	fmt.Println(m.CallCount(), m.Calls()[0].System)
	// Output:
	// {"sql": "SELECT count(*) FROM students"} scripted 11 10
	// {"ok": true}
	// llmtest: no more scripted replies: text2sql: model call failed
	// 3 Write SQLite.
}

func ExampleFunc() {
	m := llmtest.Func(func(req text2sql.ModelRequest) (string, error) {
		if len(req.Schema) > 0 {
			return `{"sql": "SELECT 1"}`, nil
		}
		return "plain text", nil
	})
	resp, _ := m.Complete(context.Background(), text2sql.ModelRequest{Schema: json.RawMessage(`{"type":"object"}`)})
	fmt.Println(resp.Text)
	// Output: {"sql": "SELECT 1"}
}

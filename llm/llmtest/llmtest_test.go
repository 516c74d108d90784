package llmtest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
		require.NoError(t, err)
		require.Equal(t, want, resp.Text)
		require.Equal(t, "scripted", resp.Model)
	}
	_, err := m.Complete(ctx, ask("q"))
	assert.ErrorIs(t, err, llmtest.ErrExhausted)
	assert.ErrorIs(t, err, text2sql.ErrModel)
	assert.Equal(t, 3, m.CallCount())
	_, err = llmtest.New().Complete(ctx, ask("q"))
	assert.ErrorIs(t, err, llmtest.ErrExhausted, "no replies")
}

func TestRepeatLast(t *testing.T) {
	m := llmtest.New("one", "two").RepeatLast()
	var got []string
	for range 4 {
		resp, err := m.Complete(context.Background(), ask("q"))
		require.NoError(t, err)
		got = append(got, resp.Text)
	}
	assert.Equal(t, []string{"one", "two", "two", "two"}, got)
	_, err := llmtest.New().RepeatLast().Complete(context.Background(), ask("q"))
	assert.ErrorIs(t, err, llmtest.ErrExhausted, "RepeatLast with no replies")
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
	require.NoError(t, err)
	assert.Equal(t, "echo: hello", resp.Text)
	req := ask("x")
	req.System = "fail"
	_, err = m.Complete(context.Background(), req)
	assert.Same(t, boom, err)
	assert.Equal(t, 2, m.CallCount())
}

func TestUsage(t *testing.T) {
	m := llmtest.New("12345") // 5 runes → 2 tokens
	req := text2sql.ModelRequest{System: "ééé", Messages: []text2sql.Message{{Role: text2sql.RoleUser, Content: "abcd"}, {Role: text2sql.RoleAssistant, Content: "x"}}}
	resp, err := m.Complete(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, text2sql.Usage{InputTokens: 2, OutputTokens: 2}, resp.Usage) // 8 runes → 2
}

func TestCallsAreCopies(t *testing.T) {
	m := llmtest.New("a").RepeatLast()
	temp := 0.5
	req := text2sql.ModelRequest{System: "s", Messages: []text2sql.Message{{Role: text2sql.RoleUser, Content: "q"}}, Schema: json.RawMessage(`{"type":"object"}`), Temperature: &temp, MaxTokens: 9}
	_, err := m.Complete(context.Background(), req)
	require.NoError(t, err)
	req.Messages[0].Content = "changed"
	req.Schema[0] = '['
	temp = 2
	calls := m.Calls()
	require.Len(t, calls, 1)
	assert.Equal(t, "q", calls[0].Messages[0].Content)
	assert.Equal(t, `{"type":"object"}`, string(calls[0].Schema))
	if assert.NotNil(t, calls[0].Temperature) {
		assert.InDelta(t, 0.5, *calls[0].Temperature, 0)
	}
	assert.Equal(t, 9, calls[0].MaxTokens)
	calls[0].Messages[0].Content = "mutated"
	assert.Equal(t, "q", m.Calls()[0].Messages[0].Content, "Calls returned shared state")
}

func TestCancelledContext(t *testing.T) {
	m := llmtest.New("a")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := m.Complete(ctx, ask("q"))
	assert.ErrorIs(t, err, context.Canceled)
	assert.Zero(t, m.CallCount(), "cancelled call recorded")
	resp, err := m.Complete(context.Background(), ask("q"))
	require.NoError(t, err, "cancelled call used a reply")
	assert.Equal(t, "a", resp.Text, "cancelled call used a reply")
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
			if !assert.NoError(t, err) {
				return
			}
			mu.Lock()
			seen[resp.Text] = true
			mu.Unlock()
			_ = m.Calls()
		})
	}
	wg.Wait()
	assert.Len(t, seen, 100, "distinct replies")
	assert.Equal(t, 100, m.CallCount())
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

package demotest

import (
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/llm/llmtest"
)

// Stages is one scripted model serving the planner ("plan"), the generator
// ("sql") and the judge ("judge"), telling them apart by their system
// instructions. Each stage answers with its Replies in turn, the last one
// repeated once the others are used; a call of a stage with no replies, or
// of no known stage, fails the test. Prompts records the last message of
// every call, by stage. Set Replies, then call Model; Stages is safe for
// the pipeline's concurrent use.
type Stages struct {
	Replies map[string][]string

	mu      sync.Mutex
	prompts map[string][]string
}

// Model returns the scripted model; failures are reported on t.
func (s *Stages) Model(t testing.TB) *llmtest.Model {
	return llmtest.Func(func(req text2sql.ModelRequest) (string, error) {
		stage := ""
		switch {
		case strings.HasPrefix(req.System, "You plan queries"):
			stage = "plan"
		case strings.HasPrefix(req.System, "You translate questions"):
			stage = "sql"
		case strings.HasPrefix(req.System, "You review one attempt"):
			stage = "judge"
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.prompts == nil {
			s.prompts = map[string][]string{}
		}
		s.prompts[stage] = append(s.prompts[stage], req.Messages[len(req.Messages)-1].Content)
		rs := s.Replies[stage]
		if !assert.NotEmpty(t, rs, "unexpected %q call", stage) {
			return "", llmtest.ErrExhausted
		}
		if len(rs) > 1 {
			s.Replies[stage] = rs[1:]
		}
		return rs[0], nil
	})
}

// Prompts returns the last message of each call of stage so far, in order.
func (s *Stages) Prompts(stage string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.prompts[stage]...)
}

// Calls returns the number of calls of stage so far.
func (s *Stages) Calls(stage string) int { return len(s.Prompts(stage)) }

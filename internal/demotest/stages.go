package demotest

import (
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/generator"
	"github.com/text2sql-go/text2sql/judge"
	"github.com/text2sql-go/text2sql/llm/llmtest"
	"github.com/text2sql-go/text2sql/planner"
	"github.com/text2sql-go/text2sql/schema"
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

// A Prefix names the stage whose system instructions begin with Start.
type Prefix struct{ Start, Stage string }

// stagePrefixes tell the stages Stages serves apart.
var stagePrefixes = []Prefix{
	{"You plan queries", "plan"},
	{"You translate questions", "sql"},
	{"You review one attempt", "judge"},
}

// StageOf names the stage a scripted model's call is for: the Stage of the
// first of prefixes whose Start begins system (the call's system
// instructions), else fallback.
func StageOf(system, fallback string, prefixes ...Prefix) string {
	for _, p := range prefixes {
		if strings.HasPrefix(system, p.Start) {
			return p.Stage
		}
	}
	return fallback
}

// Model returns the scripted model; failures are reported on t.
func (s *Stages) Model(t testing.TB) *llmtest.Model {
	return llmtest.Func(func(req text2sql.ModelRequest) (string, error) {
		stage := StageOf(req.System, "", stagePrefixes...)
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

// Wire sets cfg's Planner (over db), Generator and Judge: the real stages,
// with default options, all served by s's model. It fails t when one
// cannot be made.
func (s *Stages) Wire(t testing.TB, db *schema.Database, cfg *text2sql.Config) {
	t.Helper()
	m := s.Model(t)
	pl, err := planner.New(m, planner.Options{Schema: db})
	require.NoError(t, err)
	gen, err := generator.New(m, generator.Options{})
	require.NoError(t, err)
	jd, err := judge.New(m, judge.Options{})
	require.NoError(t, err)
	cfg.Planner, cfg.Generator, cfg.Judge = pl, gen, jd
}

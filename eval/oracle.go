package eval

import (
	"context"
	"fmt"
	"strings"
	"time"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/generator"
	"github.com/text2sql-go/text2sql/schema"
)

// OracleModel is the ModelCall.Model an Oracle records.
const OracleModel = "oracle (no model)"

// Prompter renders the prompt a generator would send (generator.Generator
// implements it).
type Prompter interface {
	Prompt(req text2sql.GenerateRequest) (system, user string, err error)
}

// Oracle is a generator for model-free pipeline evaluation. It is NOT a
// text-to-SQL system: it knows the answer. It returns the gold SQL of its
// question when every table the gold SQL reads (ExtractGoldRefs against
// Schema) is among the tables of the retrieved context, and declines
// otherwise, so an end-to-end run exercises retrieval, prompting, the
// guard, execution and scoring offline, and its EX measures what retrieval
// lets through: it equals the strict table recall of the same retrievals.
//
// When Prompter is set, the Oracle renders the prompt first (so prompt
// building is exercised, and a prompt that cannot be built fails the
// question as it would with a model) and records one ModelCall named
// OracleModel whose Usage is the estimated size of the prompt and of the
// gold SQL, as generator.EstimateTokens counts them (no model is called).
//
// An Oracle answers one question; build one per question.
type Oracle struct {
	Gold     string           // the gold SQL
	Schema   *schema.Database // the database's schema, to resolve the gold tables
	Prompter Prompter         // optional
}

var _ text2sql.Generator = (*Oracle)(nil)

// Generate returns the gold SQL or declines; see Oracle. Errors: the
// Prompter's (text2sql.ErrSchemaTooLarge, text2sql.ErrEmptyQuestion), or
// ctx's error.
func (o *Oracle) Generate(ctx context.Context, req text2sql.GenerateRequest) (*text2sql.Candidate, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c := &text2sql.Candidate{}
	if o.Prompter != nil {
		start := time.Now()
		system, user, err := o.Prompter.Prompt(req)
		if err != nil {
			return nil, err
		}
		c.Calls = []text2sql.ModelCall{{
			Model:    OracleModel,
			Usage:    text2sql.Usage{InputTokens: generator.EstimateTokens(system) + generator.EstimateTokens(user), OutputTokens: generator.EstimateTokens(o.Gold)},
			Start:    start,
			Duration: time.Since(start),
		}}
	}
	refs := ExtractGoldRefs(o.Schema, o.Gold)
	shown := map[string]bool{}
	if req.Retrieval != nil {
		for _, t := range req.Retrieval.Tables {
			shown[strings.ToLower(t.Name)] = true
		}
	}
	missing := append([]string(nil), refs.Unresolved...)
	for _, t := range refs.Tables {
		if !shown[strings.ToLower(t)] {
			missing = append(missing, t)
		}
	}
	if len(missing) > 0 {
		c.Explanation = fmt.Sprintf("oracle: declines: the gold SQL reads %s, not in the retrieved context", strings.Join(missing, ", "))
		return c, nil
	}
	c.Answerable, c.SQL = true, o.Gold
	c.Explanation = "oracle: the gold SQL (every table it reads was retrieved)"
	return c, nil
}

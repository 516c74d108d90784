package guard

import (
	"fmt"

	text2sql "github.com/text2sql-go/text2sql"
)

// MaxDepth and MaxTokens bound sqltext.Bounds of a statement, checked
// before any parser sees the text: the tokens that may each add a level to
// a parse tree (all but literals and commas), and all significant tokens.
// Parsers that recurse without a bound crash or grow without limit on
// deeper or bigger trees (libpg_query on 1+1+…+1 with 30,000 terms; TiDB's
// parser took 566 MB for 140,000 × BINARY and 124 s for 250,000 adjacent
// string literals; 400,000 literals in a select list took 336 MB). Of the
// 11,103 Spider and BIRD gold queries and published predictions the
// largest measures a depth of 311; libpg_query still parses 20,000.
const (
	MaxDepth  = 5000
	MaxTokens = 50000
)

// BoundsError returns the refusal (KindTooLarge) of a statement whose
// sqltext.Bounds, depth and tokens, pass MaxDepth or MaxTokens, or nil.
func BoundsError(depth, tokens int) *text2sql.SQLError {
	switch {
	case depth > MaxDepth:
		return &text2sql.SQLError{Kind: text2sql.KindTooLarge,
			Message: fmt.Sprintf("the statement could nest %d levels deep (its operators, keywords and names); the limit is %d", depth, MaxDepth)}
	case tokens > MaxTokens:
		return &text2sql.SQLError{Kind: text2sql.KindTooLarge,
			Message: fmt.Sprintf("the statement has %d tokens; the limit is %d", tokens, MaxTokens)}
	}
	return nil
}

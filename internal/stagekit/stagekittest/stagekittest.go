// Package stagekittest checks the answer parsers of the LLM-backed stages
// (judge.ParseVerdict, planner.Parse): what they read an answer as, that
// they refuse a malformed one with the error the stages promise, and,
// fuzzed, that they never panic.
package stagekittest

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
)

// CheckParse checks that parse reads each answer of good as what good
// maps it to (compared as their JSON) and refuses each of bad with an
// *text2sql.OutputError that holds the answer and wraps
// text2sql.ErrInvalidOutput.
func CheckParse[T any](t *testing.T, parse func(string) (*T, error), good map[string]T, bad []string) {
	t.Helper()
	for text, want := range good {
		got, err := parse(text)
		if !assert.NoError(t, err, "%q", text) {
			continue
		}
		g, err := json.Marshal(got)
		require.NoError(t, err)
		w, err := json.Marshal(want)
		require.NoError(t, err)
		assert.JSONEq(t, string(w), string(g), "%q", text)
	}
	for _, text := range bad {
		_, err := parse(text)
		var oe *text2sql.OutputError
		if assert.ErrorAs(t, err, &oe, "%q", text) {
			assert.ErrorIs(t, err, text2sql.ErrInvalidOutput, "%q", text)
			assert.Equal(t, text, oe.Raw, "%q: err = %v", text, err)
		}
	}
}

// Fuzz seeds f with seeds and fuzzes parse: it never panics, an error is
// an *text2sql.OutputError that holds the text and wraps
// text2sql.ErrInvalidOutput, and what it reads passes check.
func Fuzz[T any](f *testing.F, parse func(string) (*T, error), seeds []string, check func(t *testing.T, text string, got *T)) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		got, err := parse(text)
		if err != nil {
			var oe *text2sql.OutputError
			require.ErrorAs(t, err, &oe)
			require.Equal(t, text, oe.Raw, "err = %v", err)
			require.ErrorIs(t, err, text2sql.ErrInvalidOutput)
			return
		}
		require.NotNil(t, got, "no value and no error from %q", text)
		check(t, text, got)
	})
}

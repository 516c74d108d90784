package wordpiece_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/text2sql-go/text2sql/internal/tinymodel"
	"github.com/text2sql-go/text2sql/internal/wordpiece"
)

func load(t *testing.T, maxLength int) (*wordpiece.Tokenizer, map[string]int64) {
	t.Helper()
	data, err := tinymodel.Tokenizer()
	require.NoError(t, err)
	tok, err := wordpiece.Load(data, maxLength)
	require.NoError(t, err)
	ids := map[string]int64{}
	for i, w := range tinymodel.Vocabulary() {
		ids[w] = int64(i)
	}
	return tok, ids
}

func TestTokens(t *testing.T) {
	tok, id := load(t, 0)
	assert.Equal(t, tinymodel.MaxLength, tok.MaxLength())
	// lower-casing, accents stripped, punctuation split, word pieces
	assert.Equal(t, []int64{id["how"], id["many"], id["students"], id["?"]}, tok.Tokens("How  MANY Stüdents?"))
	assert.Equal(t, []int64{id["student"], id["_"], id["id"]}, tok.Tokens("student_id"))
	assert.Equal(t, []int64{id["enrol"], id["##l"], id["##ing"]}, tok.Tokens("enrolling"), "longest piece first")
	assert.Equal(t, []int64{id["c"], id["##a"], id["##t"]}, tok.Tokens("cat"))
	assert.Equal(t, []int64{id["[UNK]"]}, tok.Tokens("∑"), "no piece matches")
	assert.Equal(t, []int64{id["[UNK]"]}, tok.Tokens(repeat("a", 101)), "longer than max_input_chars_per_word")
	assert.Empty(t, tok.Tokens(" \t\n\x00"))
	// CJK ideographs are words of their own
	assert.Equal(t, []int64{id["[UNK]"], id["[UNK]"]}, tok.Tokens("中文"))
}

func repeat(s string, n int) string {
	out := ""
	for range n {
		out += s
	}
	return out
}

func TestEncodeBatch(t *testing.T) {
	tok, id := load(t, 0)
	b := tok.Encode([]string{"students", "how many courses"})
	require.Equal(t, 2, b.Rows)
	require.Equal(t, 5, b.Length)
	assert.Equal(t, []int64{id["[CLS]"], id["students"], id["[SEP]"], 0, 0, id["[CLS]"], id["how"], id["many"], id["courses"], id["[SEP]"]}, b.IDs)
	assert.Equal(t, []int64{1, 1, 1, 0, 0, 1, 1, 1, 1, 1}, b.AttentionMask)
	assert.Equal(t, make([]int64, 10), b.TypeIDs)
}

func TestEncodePairsTruncation(t *testing.T) {
	tok, id := load(t, 8)
	b := tok.EncodePairs("how many students", []string{"course", "the students enrolled in each course"})
	require.Equal(t, 2, b.Rows)
	require.Equal(t, 8, b.Length)
	cls, sep := id["[CLS]"], id["[SEP]"]
	assert.Equal(t, []int64{cls, id["how"], id["many"], id["students"], sep, id["course"], sep, 0}, b.IDs[:8])
	assert.Equal(t, []int64{0, 0, 0, 0, 0, 1, 1, 0}, b.TypeIDs[:8])
	assert.Equal(t, []int64{1, 1, 1, 1, 1, 1, 1, 0}, b.AttentionMask[:8])
	// 5 tokens of room: the longer text loses tokens from its end first,
	// the second on a tie
	assert.Equal(t, []int64{cls, id["how"], id["many"], id["students"], sep, id["the"], id["students"], sep}, b.IDs[8:])
	assert.Equal(t, []int64{0, 0, 0, 0, 0, 1, 1, 1}, b.TypeIDs[8:])
}

func TestLoadRejects(t *testing.T) {
	for name, data := range map[string]string{
		"not json":      `{`,
		"bpe":           `{"model":{"type":"BPE","vocab":{"a":0}}}`,
		"no vocab":      `{"model":{"type":"WordPiece","unk_token":"[UNK]"}}`,
		"no unk":        `{"model":{"type":"WordPiece","unk_token":"[UNK]","vocab":{"a":0}}}`,
		"no cls":        `{"model":{"type":"WordPiece","unk_token":"[UNK]","vocab":{"[UNK]":0,"[SEP]":1,"[PAD]":2}}}`,
		"no pad":        `{"model":{"type":"WordPiece","unk_token":"[UNK]","vocab":{"[UNK]":0,"[SEP]":1,"[CLS]":2}}}`,
		"metaspace":     `{"pre_tokenizer":{"type":"Metaspace"},"model":{"type":"WordPiece","unk_token":"[UNK]","vocab":{"[UNK]":0}}}`,
		"bad template":  `{"post_processor":{"type":"TemplateProcessing","single":[]},"model":{"type":"WordPiece","unk_token":"[UNK]","vocab":{"[UNK]":0}}}`,
		"odd processor": `{"post_processor":{"type":"ByteLevel"},"model":{"type":"WordPiece","unk_token":"[UNK]","vocab":{"[UNK]":0}}}`,
		"wrong field":   `{"model":{"type":"WordPiece","unk_token":7,"vocab":{"[UNK]":0}}}`,
	} {
		_, err := wordpiece.Load([]byte(data), 0)
		assert.Error(t, err, name)
	}
	_, err := wordpiece.Load([]byte(`{"model":{"type":"WordPiece","unk_token":"[UNK]","vocab":{"[UNK]":0,"[SEP]":1,"[CLS]":2,"[PAD]":3}}}`), 3)
	assert.ErrorContains(t, err, "below 4")
	tok, err := wordpiece.Load([]byte(`{"model":{"type":"WordPiece","unk_token":"[UNK]","vocab":{"[UNK]":0,"[SEP]":1,"[CLS]":2,"[PAD]":3}}}`), 0)
	require.NoError(t, err)
	assert.Equal(t, wordpiece.DefaultMaxLength, tok.MaxLength())
}

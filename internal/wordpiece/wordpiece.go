// Package wordpiece is the BERT tokenizer of a Hugging Face tokenizer.json:
// the BertNormalizer, the BertPreTokenizer, the WordPiece model and the
// [CLS] … [SEP] (… [SEP]) post-processor, which is what the BGE and MiniLM
// embedders and the MS MARCO MiniLM cross-encoders use. It writes nothing to
// standard output and never panics on a malformed file: Load returns an
// error naming what it could not use.
package wordpiece

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// DefaultMaxLength is the sequence length limit, in tokens with [CLS] and
// [SEP] included, used when neither the file nor the caller sets one: the
// position-embedding size of BERT-class models.
const DefaultMaxLength = 512

// Tokenizer turns text into token ids. It is immutable after Load and safe
// for concurrent use.
type Tokenizer struct {
	vocab     map[string]int64
	unk       int64
	cls, sep  int64
	pad       int64
	prefix    string // continuing-subword prefix, "##"
	maxChars  int    // longer words become [UNK]
	lowercase bool
	strip     bool // strip accents
	clean     bool // drop control characters, map white space to ' '
	chinese   bool // split CJK ideographs into words of their own
	maxLength int
}

// file is the part of tokenizer.json the tokenizer reads.
type file struct {
	Truncation *struct {
		MaxLength int `json:"max_length"`
	} `json:"truncation"`
	Padding *struct {
		PadID *int64 `json:"pad_id"`
	} `json:"padding"`
	Normalizer *struct {
		Type         string `json:"type"`
		CleanText    *bool  `json:"clean_text"`
		ChineseChars *bool  `json:"handle_chinese_chars"`
		StripAccents *bool  `json:"strip_accents"`
		Lowercase    *bool  `json:"lowercase"`
	} `json:"normalizer"`
	PreTokenizer *struct {
		Type string `json:"type"`
	} `json:"pre_tokenizer"`
	PostProcessor *struct {
		Type          string            `json:"type"`
		CLS           []json.RawMessage `json:"cls"`
		SEP           []json.RawMessage `json:"sep"`
		Single        []templatePiece   `json:"single"`
		SpecialTokens map[string]struct {
			IDs []int64 `json:"ids"`
		} `json:"special_tokens"`
	} `json:"post_processor"`
	Model struct {
		Type     string           `json:"type"`
		Unk      string           `json:"unk_token"`
		Prefix   *string          `json:"continuing_subword_prefix"`
		MaxChars int              `json:"max_input_chars_per_word"`
		Vocab    map[string]int64 `json:"vocab"`
	} `json:"model"`
}

type templatePiece struct {
	SpecialToken *struct {
		ID string `json:"id"`
	} `json:"SpecialToken"`
}

// Load parses the contents of a tokenizer.json. maxLength bounds every
// sequence (tokens, [CLS] and [SEP] included); 0 means the file's
// truncation length, else DefaultMaxLength. A file that is not JSON, whose
// model is not WordPiece, whose pre-tokenizer is not BERT's, or which lacks
// the [UNK], [CLS], [SEP] or padding token, is an error saying so.
func Load(data []byte, maxLength int) (*Tokenizer, error) {
	var f file
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("not a tokenizer.json: %w", err)
	}
	if f.Model.Type != "WordPiece" {
		return nil, fmt.Errorf("tokenizer model %q is not supported, only WordPiece (BERT)", f.Model.Type)
	}
	if len(f.Model.Vocab) == 0 {
		return nil, errors.New("tokenizer has an empty vocabulary")
	}
	if f.PreTokenizer != nil && f.PreTokenizer.Type != "BertPreTokenizer" {
		return nil, fmt.Errorf("pre-tokenizer %q is not supported, only BertPreTokenizer", f.PreTokenizer.Type)
	}
	t := &Tokenizer{vocab: f.Model.Vocab, prefix: "##", maxChars: f.Model.MaxChars, maxLength: maxLength}
	if f.Model.Prefix != nil {
		t.prefix = *f.Model.Prefix
	}
	if t.maxChars <= 0 {
		t.maxChars = 100 // the WordPiece default of Hugging Face tokenizers
	}
	var ok bool
	if t.unk, ok = t.vocab[f.Model.Unk]; !ok {
		return nil, fmt.Errorf("unknown-word token %q is not in the vocabulary", f.Model.Unk)
	}
	if n := f.Normalizer; n != nil {
		if n.Type != "BertNormalizer" {
			return nil, fmt.Errorf("normalizer %q is not supported, only BertNormalizer", n.Type)
		}
		t.clean = n.CleanText == nil || *n.CleanText
		t.chinese = n.ChineseChars == nil || *n.ChineseChars
		t.lowercase = n.Lowercase == nil || *n.Lowercase
		t.strip = t.lowercase // strip_accents null follows lowercase, as in BERT
		if n.StripAccents != nil {
			t.strip = *n.StripAccents
		}
	}
	cls, sep, err := t.specials(&f)
	if err != nil {
		return nil, err
	}
	t.cls, t.sep = cls, sep
	switch pad, inVocab := t.vocab["[PAD]"]; {
	case f.Padding != nil && f.Padding.PadID != nil:
		t.pad = *f.Padding.PadID
	case inVocab:
		t.pad = pad
	default:
		return nil, errors.New("tokenizer names no padding token (no padding.pad_id and no [PAD] in the vocabulary)")
	}
	if t.maxLength <= 0 {
		t.maxLength = DefaultMaxLength
		if f.Truncation != nil && f.Truncation.MaxLength > 0 {
			t.maxLength = f.Truncation.MaxLength
		}
	}
	if t.maxLength < 4 {
		return nil, fmt.Errorf("maximum sequence length %d is below 4 (room for [CLS], [SEP] and a token of each text)", t.maxLength)
	}
	return t, nil
}

// specials returns the ids of the sequence-start and separator tokens, from
// the post-processor (BertProcessing or TemplateProcessing) or else the
// vocabulary's [CLS] and [SEP].
func (t *Tokenizer) specials(f *file) (cls, sep int64, err error) {
	clsName, sepName := "[CLS]", "[SEP]"
	if p := f.PostProcessor; p != nil {
		switch p.Type {
		case "BertProcessing", "RobertaProcessing":
			if len(p.CLS) == 2 && len(p.SEP) == 2 {
				if json.Unmarshal(p.CLS[0], &clsName) != nil || json.Unmarshal(p.SEP[0], &sepName) != nil {
					return 0, 0, errors.New("post-processor cls/sep are not [token, id] pairs")
				}
			}
		case "TemplateProcessing":
			var names []string
			for _, piece := range p.Single {
				if piece.SpecialToken != nil {
					names = append(names, piece.SpecialToken.ID)
				}
			}
			if len(names) != 2 {
				return 0, 0, fmt.Errorf("post-processor template has %d special tokens, want 2 ([CLS] $A [SEP])", len(names))
			}
			clsName, sepName = names[0], names[1]
		default:
			return 0, 0, fmt.Errorf("post-processor %q is not supported", p.Type)
		}
	}
	var ok bool
	if cls, ok = t.vocab[clsName]; !ok {
		return 0, 0, fmt.Errorf("sequence-start token %q is not in the vocabulary", clsName)
	}
	if sep, ok = t.vocab[sepName]; !ok {
		return 0, 0, fmt.Errorf("separator token %q is not in the vocabulary", sepName)
	}
	return cls, sep, nil
}

// MaxLength returns the sequence length limit in tokens.
func (t *Tokenizer) MaxLength() int { return t.maxLength }

// Tokens returns the WordPiece ids of text, without special tokens.
func (t *Tokenizer) Tokens(text string) []int64 {
	var ids []int64
	for _, w := range t.words(t.normalize(text)) {
		ids = t.wordPieces(w, ids)
	}
	return ids
}

func (t *Tokenizer) normalize(s string) string {
	if t.clean {
		s = strings.Map(func(r rune) rune {
			switch {
			case r == 0 || r == unicode.ReplacementChar:
				return -1
			case r == '\t' || r == '\n' || r == '\r' || unicode.Is(unicode.Zs, r):
				return ' '
			case unicode.IsControl(r) || unicode.In(r, unicode.Cc, unicode.Cf):
				return -1
			}
			return r
		}, s)
	}
	if t.chinese {
		var b strings.Builder
		for _, r := range s {
			if isCJK(r) {
				b.WriteByte(' ')
				b.WriteRune(r)
				b.WriteByte(' ')
			} else {
				b.WriteRune(r)
			}
		}
		s = b.String()
	}
	if t.strip {
		s = strings.Map(func(r rune) rune {
			if unicode.Is(unicode.Mn, r) {
				return -1
			}
			return r
		}, norm.NFD.String(s))
	}
	if t.lowercase {
		s = strings.ToLower(s)
	}
	return s
}

// isCJK reports whether r is in a CJK ideograph block, as BERT defines it.
func isCJK(r rune) bool {
	return (r >= 0x4E00 && r <= 0x9FFF) || (r >= 0x3400 && r <= 0x4DBF) ||
		(r >= 0x20000 && r <= 0x2A6DF) || (r >= 0x2A700 && r <= 0x2B73F) ||
		(r >= 0x2B740 && r <= 0x2B81F) || (r >= 0x2B820 && r <= 0x2CEAF) ||
		(r >= 0xF900 && r <= 0xFAFF) || (r >= 0x2F800 && r <= 0x2FA1F)
}

// isPunct is BERT's punctuation: ASCII symbols and Unicode P* characters.
func isPunct(r rune) bool {
	return (r >= 33 && r <= 47) || (r >= 58 && r <= 64) || (r >= 91 && r <= 96) || (r >= 123 && r <= 126) || unicode.IsPunct(r)
}

// words splits on white space and makes each punctuation character a word.
func (t *Tokenizer) words(s string) []string {
	var out []string
	start := -1
	for i, r := range s {
		switch {
		case unicode.IsSpace(r):
			if start >= 0 {
				out = append(out, s[start:i])
				start = -1
			}
		case isPunct(r):
			if start >= 0 {
				out = append(out, s[start:i])
				start = -1
			}
			out = append(out, string(r))
		default:
			if start < 0 {
				start = i
			}
		}
	}
	if start >= 0 {
		out = append(out, s[start:])
	}
	return out
}

// wordPieces appends the greedy longest-match pieces of w to ids, or the
// unknown-word id when w is too long or some part of it matches nothing.
func (t *Tokenizer) wordPieces(w string, ids []int64) []int64 {
	if len([]rune(w)) > t.maxChars {
		return append(ids, t.unk)
	}
	n := len(ids)
	for start := 0; start < len(w); {
		end := len(w)
		found := false
		for end > start {
			piece := w[start:end]
			if start > 0 {
				piece = t.prefix + piece
			}
			if id, ok := t.vocab[piece]; ok {
				ids = append(ids, id)
				found = true
				break
			}
			// step back one whole rune
			end--
			for end > start && !isRuneStart(w[end]) {
				end--
			}
		}
		if !found {
			return append(ids[:n], t.unk)
		}
		start = end
	}
	return ids
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// Batch is a padded batch of token sequences, row-major, every row Length
// long: the inputs of a BERT-class ONNX model.
type Batch struct {
	Rows, Length  int
	IDs           []int64 // token ids, padding id after the end
	AttentionMask []int64 // 1 for a token, 0 for padding
	TypeIDs       []int64 // 0 for the first text's tokens, 1 for the second's
}

// Encode returns the batch of texts, each [CLS] text [SEP], truncated to
// MaxLength.
func (t *Tokenizer) Encode(texts []string) *Batch {
	seqs := make([][]int64, len(texts))
	firsts := make([]int, len(texts))
	for i, s := range texts {
		a := t.Tokens(s)
		a = a[:min(len(a), t.maxLength-2)]
		seqs[i] = append(append(append(make([]int64, 0, len(a)+2), t.cls), a...), t.sep)
		firsts[i] = len(seqs[i])
	}
	return t.pack(seqs, firsts)
}

// EncodePairs returns the batch of pairs (first, seconds[i]), each [CLS]
// first [SEP] second [SEP] with type id 1 on the second text and its [SEP],
// truncated to MaxLength by dropping tokens from the end of the longer text
// (longest first, as Hugging Face tokenizers do; the second on a tie).
func (t *Tokenizer) EncodePairs(first string, seconds []string) *Batch {
	a0 := t.Tokens(first)
	seqs := make([][]int64, len(seconds))
	firsts := make([]int, len(seconds))
	for i, s := range seconds {
		a, b := a0, t.Tokens(s)
		for len(a)+len(b) > t.maxLength-3 {
			if len(a) > len(b) {
				a = a[:len(a)-1]
			} else {
				b = b[:len(b)-1]
			}
		}
		seq := make([]int64, 0, len(a)+len(b)+3)
		seq = append(append(append(seq, t.cls), a...), t.sep)
		firsts[i] = len(seq)
		seqs[i] = append(append(seq, b...), t.sep)
	}
	return t.pack(seqs, firsts)
}

// pack pads seqs to the longest; tokens at or after firsts[i] get type 1.
func (t *Tokenizer) pack(seqs [][]int64, firsts []int) *Batch {
	length := 0
	for _, s := range seqs {
		length = max(length, len(s))
	}
	b := &Batch{Rows: len(seqs), Length: length,
		IDs: make([]int64, len(seqs)*length), AttentionMask: make([]int64, len(seqs)*length), TypeIDs: make([]int64, len(seqs)*length)}
	for i, s := range seqs {
		row := i * length
		for j := range length {
			if j < len(s) {
				b.IDs[row+j] = s[j]
				b.AttentionMask[row+j] = 1
				if j >= firsts[i] {
					b.TypeIDs[row+j] = 1
				}
			} else {
				b.IDs[row+j] = t.pad
			}
		}
	}
	return b
}

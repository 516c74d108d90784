// Package tinymodel builds the project's tiny test models: real ONNX graphs
// with the inputs and outputs of the real models (input_ids, attention_mask,
// token_type_ids, int64 [batch, sequence]; an embedder's last_hidden_state,
// float32 [batch, sequence, Hidden]; a cross-encoder's logits, float32
// [batch, 1]) over a small BERT WordPiece vocabulary, with its
// tokenizer.json. Weights come from a seeded generator, so the files are
// the same on every run; gen writes them into the packages' testdata.
//
// The embedder is a bag of words with context: each token's vector is its
// word embedding plus its token-type embedding plus the masked mean of the
// sequence, through one dense layer and tanh, so the [CLS] row and the mean
// of the rows both depend on every token, and texts sharing words get close
// vectors. The cross-encoder scores a pair by the scaled dot product of the
// mean word embeddings of its two segments (token type 0 and 1, padding
// masked out): a pair sharing words scores higher.
package tinymodel

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
)

// Hidden is the width of the embedder's last_hidden_state and of both
// models' word embeddings.
const Hidden = 64

// MaxLength is the sequence limit in tokens written into tokenizer.json.
const MaxLength = 128

// Special tokens, first in the vocabulary, in this order (ids 0 to 4).
var specials = []string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}

// words are the whole-word entries after the characters: the demo schema's
// and common questions' words, so most test texts tokenize to whole words;
// any other word of a-z and 0-9 splits into pieces.
var words = strings.Fields(`
the a an of in on to for and or by with per from is are was be how many much
what which who whom when where each every all most least top total count
number average sum highest lowest list show give find me name names id
student students course courses enrolled enrollment enrol teacher teachers
teaches taught department departments grade grades point points class
classes linear algebra credit credits semester year years last first
customer customers order orders spent price prices product products amount
paid pay payment payments interest rate rates loan loans user users account
accounts balance date dates city country singer singers concert stadium
employee employees salary table tables column columns row rows key foreign
primary value values text question answer sql select stores join joins
##s ##es ##ed ##ing ##er ##ly ##id ##ment ##tion
`)

// Vocabulary returns the tokens, id = index: the special tokens, ASCII
// punctuation, digits and letters, "##" + each digit and letter, then
// the words.
func Vocabulary() []string {
	v := slices.Clone(specials)
	for c := '!'; c <= '~'; c++ {
		if (c < '0' || c > '9') && (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') {
			v = append(v, string(c))
		}
	}
	for _, c := range "0123456789abcdefghijklmnopqrstuvwxyz" {
		v = append(v, string(c))
	}
	for _, c := range "0123456789abcdefghijklmnopqrstuvwxyz" {
		v = append(v, "##"+string(c))
	}
	for _, w := range words {
		if !slices.Contains(v, w) {
			v = append(v, w)
		}
	}
	return v
}

// Tokenizer returns the tokenizer.json of Vocabulary: BERT normalizer
// (lower-casing, accents stripped), BERT pre-tokenizer, WordPiece,
// [CLS] $A [SEP] / [CLS] $A [SEP] $B [SEP] template, MaxLength truncation.
// Its error is encoding/json's.
func Tokenizer() ([]byte, error) {
	vocab := map[string]int{}
	for i, t := range Vocabulary() {
		vocab[t] = i
	}
	special := func(id string, typ int) map[string]any {
		return map[string]any{"SpecialToken": map[string]any{"id": id, "type_id": typ}}
	}
	seq := func(id string, typ int) map[string]any {
		return map[string]any{"Sequence": map[string]any{"id": id, "type_id": typ}}
	}
	var added []map[string]any
	for i, s := range specials {
		added = append(added, map[string]any{"id": i, "content": s, "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true})
	}
	f := map[string]any{
		"version":       "1.0",
		"truncation":    map[string]any{"direction": "Right", "max_length": MaxLength, "strategy": "LongestFirst", "stride": 0},
		"padding":       map[string]any{"strategy": "BatchLongest", "direction": "Right", "pad_to_multiple_of": nil, "pad_id": 0, "pad_type_id": 0, "pad_token": "[PAD]"},
		"added_tokens":  added,
		"normalizer":    map[string]any{"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true, "strip_accents": nil, "lowercase": true},
		"pre_tokenizer": map[string]any{"type": "BertPreTokenizer"},
		"post_processor": map[string]any{
			"type":   "TemplateProcessing",
			"single": []any{special("[CLS]", 0), seq("A", 0), special("[SEP]", 0)},
			"pair":   []any{special("[CLS]", 0), seq("A", 0), special("[SEP]", 0), seq("B", 1), special("[SEP]", 1)},
			"special_tokens": map[string]any{
				"[CLS]": map[string]any{"id": "[CLS]", "ids": []int{vocab["[CLS]"]}, "tokens": []string{"[CLS]"}},
				"[SEP]": map[string]any{"id": "[SEP]", "ids": []int{vocab["[SEP]"]}, "tokens": []string{"[SEP]"}},
			},
		},
		"decoder": map[string]any{"type": "WordPiece", "prefix": "##", "cleanup": true},
		"model":   map[string]any{"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##", "max_input_chars_per_word": 100, "vocab": vocab},
	}
	b, err := json.MarshalIndent(f, "", " ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// gaussian returns n normally distributed values of standard deviation sd
// from the generator seeded with seed.
func gaussian(seed uint64, n int, sd float64) []float32 {
	r := rand.New(rand.NewPCG(seed, 0x7e575eed))
	out := make([]float32, n)
	for i := range out {
		out[i] = float32(r.NormFloat64() * sd)
	}
	return out
}

// Seeds of the weight tensors; any change changes the committed files.
const (
	seedEmbedderWords = 1
	seedEmbedderTypes = 2
	seedEmbedderDense = 3
	seedCrossWords    = 4
)

// crossScale / Hidden multiplies the cross-encoder's dot product of mean
// word embeddings (about Hidden/n for two identical texts of n distinct
// words, about 0 for unrelated ones) into the range of MS MARCO MiniLM
// logits: a one-word pair of the same word scores about 10.
const crossScale = 10.0

var (
	inputs = []value{
		{name: "input_ids", elem: elemInt64, dims: []any{"batch", "sequence"}},
		{name: "attention_mask", elem: elemInt64, dims: []any{"batch", "sequence"}},
		{name: "token_type_ids", elem: elemInt64, dims: []any{"batch", "sequence"}},
	}
	axesSequence = tensor{name: "axes_sequence", dims: []int64{1}, ints: []int64{1}}
	axesLast     = tensor{name: "axes_last", dims: []int64{1}, ints: []int64{-1}}
	one          = tensor{name: "one", dims: []int64{1}, floats: []float32{1}}
)

// maskedMean appends the nodes computing the mean over the sequence of x
// [b,s,H] weighted by mask3 [b,s,1] (at least one token counted), as out.
func maskedMean(x, mask3, out string) []node {
	return []node{
		{op: "Mul", inputs: []string{x, mask3}, outputs: []string{out + "_masked"}},
		{op: "ReduceSum", inputs: []string{out + "_masked", "axes_sequence"}, outputs: []string{out + "_sum"}, ints: map[string]int64{"keepdims": 1}},
		{op: "ReduceSum", inputs: []string{mask3, "axes_sequence"}, outputs: []string{out + "_count"}, ints: map[string]int64{"keepdims": 1}},
		{op: "Max", inputs: []string{out + "_count", "one"}, outputs: []string{out + "_count1"}},
		{op: "Div", inputs: []string{out + "_sum", out + "_count1"}, outputs: []string{out}},
	}
}

// Embedder returns the model.onnx bytes of an embedder of hidden
// dimensions (Hidden for the committed one; 384 stands in for BGE-small
// where a test needs its dimension).
func Embedder(hidden int) []byte {
	v, h := int64(len(Vocabulary())), int64(hidden)
	nodes := []node{
		{op: "Gather", inputs: []string{"word_embeddings", "input_ids"}, outputs: []string{"words"}},
		{op: "Gather", inputs: []string{"token_type_embeddings", "token_type_ids"}, outputs: []string{"types"}},
		{op: "Add", inputs: []string{"words", "types"}, outputs: []string{"tokens"}},
		{op: "Cast", inputs: []string{"attention_mask"}, outputs: []string{"mask"}, ints: map[string]int64{"to": elemFloat}},
		{op: "Unsqueeze", inputs: []string{"mask", "axes_last"}, outputs: []string{"mask3"}},
	}
	nodes = append(nodes, maskedMean("tokens", "mask3", "mean")...)
	nodes = append(nodes,
		node{op: "Add", inputs: []string{"tokens", "mean"}, outputs: []string{"context"}},
		node{op: "MatMul", inputs: []string{"context", "dense"}, outputs: []string{"projected"}},
		node{op: "Tanh", inputs: []string{"projected"}, outputs: []string{"last_hidden_state"}},
	)
	g := graph{
		name:  "tiny-embedder",
		nodes: nodes,
		initializers: []tensor{
			{name: "word_embeddings", dims: []int64{v, h}, floats: gaussian(seedEmbedderWords, int(v*h), 1)},
			{name: "token_type_embeddings", dims: []int64{2, h}, floats: gaussian(seedEmbedderTypes, int(2*h), 0.1)},
			{name: "dense", dims: []int64{h, h}, floats: gaussian(seedEmbedderDense, int(h*h), 1/math.Sqrt(float64(h)))},
			axesSequence, axesLast, one,
		},
		inputs:  inputs,
		outputs: []value{{name: "last_hidden_state", elem: elemFloat, dims: []any{"batch", "sequence", h}}},
	}
	return encodeModel(g, "text2sql tinymodel")
}

// CrossEncoder returns the cross-encoder's model.onnx bytes.
func CrossEncoder() []byte {
	v := int64(len(Vocabulary()))
	nodes := []node{
		{op: "Gather", inputs: []string{"word_embeddings", "input_ids"}, outputs: []string{"words"}},
		{op: "Cast", inputs: []string{"attention_mask"}, outputs: []string{"mask"}, ints: map[string]int64{"to": elemFloat}},
		{op: "Cast", inputs: []string{"token_type_ids"}, outputs: []string{"type"}, ints: map[string]int64{"to": elemFloat}},
		{op: "Mul", inputs: []string{"mask", "type"}, outputs: []string{"second"}},
		{op: "Sub", inputs: []string{"mask", "second"}, outputs: []string{"first"}},
		{op: "Unsqueeze", inputs: []string{"first", "axes_last"}, outputs: []string{"first3"}},
		{op: "Unsqueeze", inputs: []string{"second", "axes_last"}, outputs: []string{"second3"}},
	}
	nodes = append(nodes, maskedMean("words", "first3", "mean_first")...)
	nodes = append(nodes, maskedMean("words", "second3", "mean_second")...)
	nodes = append(nodes,
		node{op: "Mul", inputs: []string{"mean_first", "mean_second"}, outputs: []string{"product"}},
		node{op: "ReduceSum", inputs: []string{"product", "axes_last"}, outputs: []string{"dot"}, ints: map[string]int64{"keepdims": 0}},
		node{op: "Mul", inputs: []string{"dot", "scale"}, outputs: []string{"logits"}},
	)
	g := graph{
		name:  "tiny-cross-encoder",
		nodes: nodes,
		initializers: []tensor{
			{name: "word_embeddings", dims: []int64{v, Hidden}, floats: gaussian(seedCrossWords, int(v)*Hidden, 1)},
			{name: "scale", dims: []int64{1}, floats: []float32{crossScale / Hidden}},
			axesSequence, axesLast, one,
		},
		inputs:  inputs,
		outputs: []value{{name: "logits", elem: elemFloat, dims: []any{"batch", int64(1)}}},
	}
	return encodeModel(g, "text2sql tinymodel")
}

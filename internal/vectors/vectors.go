// Package vectors holds what the embedding providers share: sending texts
// in batches, checking an answer's vectors and scaling them to unit length.
package vectors

import (
	"context"
	"fmt"
	"math"
	"net/http"

	text2sql "github.com/text2sql-go/text2sql"
)

// Batched embeds texts in consecutive slices of at most size texts (size
// >= 1), one call of embed after the other, and returns the vectors in the
// order of texts. No texts means no call and an empty result. The first
// error ends it and is returned with no partial result.
func Batched(ctx context.Context, texts []string, size int, embed func(ctx context.Context, batch []string) ([][]float32, error)) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += size {
		vs, err := embed(ctx, texts[start:min(start+size, len(texts))])
		if err != nil {
			return nil, err
		}
		out = append(out, vs...)
	}
	return out, nil
}

// Unit returns v as float32s scaled to unit L2 norm, computed in float64;
// a zero vector is returned as it is (all zeros). v is not modified.
func Unit[T float32 | float64](v []T) []float32 {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	scale := 1.0
	if sum > 0 {
		scale = 1 / math.Sqrt(sum)
	}
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(float64(x) * scale)
	}
	return out
}

// Collect reads the n vectors of an answer of provider to want texts:
// item(k) gives the position among the texts of the answer's k-th vector
// and its values. It returns the vectors in the texts' order, each scaled
// by Unit, or, when n is not want, a position is out of range or repeated,
// or a vector has other than dim values, a *text2sql.ModelError of
// provider with StatusCode 200 (the request succeeded, its answer is
// unusable) saying which.
func Collect[T float32 | float64](provider string, n, want, dim int, item func(k int) (pos int, v []T)) ([][]float32, error) {
	fail := func(format string, args ...any) error {
		return &text2sql.ModelError{Provider: provider, StatusCode: http.StatusOK, Message: fmt.Sprintf(format, args...)}
	}
	if n != want {
		return nil, fail("got %d embeddings for %d texts", n, want)
	}
	vs := make([][]float32, want)
	for k := range n {
		i, v := item(k)
		if i < 0 || i >= want || vs[i] != nil {
			return nil, fail("embedding index %d is out of range or repeated", i)
		}
		if len(v) != dim {
			return nil, fail("embedding %d has %d dimensions, want %d", i, len(v), dim)
		}
		vs[i] = Unit(v)
	}
	return vs, nil
}

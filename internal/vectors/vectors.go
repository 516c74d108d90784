// Package vectors holds what the embedding providers share: sending texts
// in batches and scaling vectors to unit length.
package vectors

import (
	"context"
	"math"
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

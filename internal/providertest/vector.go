package providertest

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Vector is what the fake embedding servers answer text with: dim values
// (dim ≥ 2), the first len(text) and the second 1, not normalised, so
// that Vectors can tell which text a vector is for.
func Vector(text string, dim int) []float64 {
	v := make([]float64, dim)
	v[0] = float64(len(text))
	v[1] = 1
	return v
}

// Vectors checks an embedder's vectors for texts, computed from Vector
// answers: one per text, each of dim values, of unit length (within
// 1e-5), and in texts' order (the ratio of the first two values is the
// text's length, within 1e-4).
func Vectors(t *testing.T, texts []string, vs [][]float32, dim int) {
	t.Helper()
	require.Len(t, vs, len(texts))
	for i, v := range vs {
		require.Len(t, v, dim, "vector %d", i)
		var sq float64
		for _, x := range v {
			sq += float64(x) * float64(x)
		}
		assert.InDelta(t, 1, math.Sqrt(sq), 1e-5, "norm of vector %d", i)
		assert.InDelta(t, len(texts[i]), float64(v[0]/v[1]), 1e-4, "vector %d is for the wrong text", i)
	}
}

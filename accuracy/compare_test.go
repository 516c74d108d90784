package accuracy

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Floats print as Python's repr prints them, as the official evaluators
// compare them.
func TestPyFloat(t *testing.T) {
	point1, point2 := 0.1, 0.2
	for f, want := range map[float64]string{
		1: "1.0", 1.5: "1.5", 0.0001: "0.0001", 0.00001: "1e-05", 1e16: "1e+16", 1234567890123456: "1234567890123456.0",
		-2.5: "-2.5", point1 + point2: "0.30000000000000004", 1.5e300: "1.5e+300", 123.456: "123.456", math.Inf(1): "inf",
	} {
		assert.Equal(t, want, pyFloat(f), "pyFloat(%v)", f)
	}
}

package defaults

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestPositive(t *testing.T) {
	n := 0
	Positive(&n, 5)
	assert.Equal(t, 5, n, "zero takes the default")
	n = -3
	Positive(&n, 5)
	assert.Equal(t, 5, n, "negative takes the default")
	n = 2
	Positive(&n, 5)
	assert.Equal(t, 2, n, "a set value is kept")
	d := time.Duration(0)
	Positive(&d, time.Second)
	assert.Equal(t, time.Second, d)
}

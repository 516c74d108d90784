package extract

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFences(t *testing.T) {
	in := "a\n```json\n{\"x\": 1}\n```\nb ````sql\nSELECT 1\n```` c ~~~\nSELECT 2\n"
	got := Fences(in)
	require.Len(t, got, 3, "Fences = %+v, want 3 blocks", got)
	assert.Equal(t, "json", got[0].Lang, "block 0 = %+v", got[0])
	assert.Equal(t, "{\"x\": 1}\n", got[0].Content, "block 0 = %+v", got[0])
	assert.True(t, got[0].Closed, "block 0 = %+v", got[0])
	assert.Equal(t, "sql", got[1].Lang, "block 1 = %+v", got[1])
	assert.Equal(t, "SELECT 1\n", got[1].Content, "block 1 = %+v", got[1])
	assert.False(t, got[2].Closed, "block 2 = %+v", got[2])
	assert.Equal(t, "SELECT 2\n", got[2].Content, "block 2 = %+v", got[2])
	assert.Equal(t, len(in), got[2].End, "block 2 = %+v", got[2])
}

package gobfile

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWriteRead(t *testing.T) {
	type rec struct {
		Key  string
		Vals []int
	}
	path := filepath.Join(t.TempDir(), "sub", "f.gob")
	var got rec
	require.ErrorIs(t, Read(path, &got), fs.ErrNotExist)
	require.NoError(t, Write(path, rec{"a", []int{1, 2}}))
	require.NoError(t, Write(path, rec{"b", []int{3}}))
	require.NoError(t, Read(path, &got))
	assert.Equal(t, rec{"b", []int{3}}, got)
	left, err := filepath.Glob(filepath.Join(filepath.Dir(path), "*"))
	require.NoError(t, err)
	assert.Equal(t, []string{path}, left, "no temporary file left")
	require.NoError(t, os.WriteFile(path, []byte("not gob"), 0o600))
	assert.Error(t, Read(path, &got))
}

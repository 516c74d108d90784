package tinymodel

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The committed testdata is what the generator writes today.
func TestCommittedFilesUpToDate(t *testing.T) {
	embedder, cross, err := Files()
	require.NoError(t, err)
	for dir, files := range map[string]map[string][]byte{
		"../../embed/fastembed/testdata/tiny":     embedder,
		"../../rerank/crossencoder/testdata/tiny": cross,
	} {
		for name, want := range files {
			got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
			require.NoError(t, err, "run go generate ./embed/fastembed ./rerank/crossencoder")
			assert.Equal(t, want, got, "%s/%s is stale: run go generate ./embed/fastembed ./rerank/crossencoder", dir, name)
		}
	}
}

func TestDeterministicAndSmall(t *testing.T) {
	e1, c1, err := Files()
	require.NoError(t, err)
	e2, c2, err := Files()
	require.NoError(t, err)
	assert.Equal(t, e1, e2)
	assert.Equal(t, c1, c2)
	for _, files := range []map[string][]byte{e1, c1} {
		for name, data := range files {
			assert.Less(t, len(data), 200<<10, "%s", name)
		}
	}
}

func TestVocabularyUnique(t *testing.T) {
	seen := map[string]bool{}
	for _, tok := range Vocabulary() {
		assert.False(t, seen[tok], "duplicate token %q", tok)
		seen[tok] = true
	}
}

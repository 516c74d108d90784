package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/text2sql-go/text2sql/executor/sqlite"
	"github.com/text2sql-go/text2sql/internal/shareddata"
	"github.com/text2sql-go/text2sql/knowledge"
)

func TestKnowledgeInitAndAccept(t *testing.T) {
	db := shareddata.SpiderDB(t, "concert_singer")
	file := filepath.Join(t.TempDir(), "concert.yaml")
	out, errOut, code := cli(t, "knowledge", "init", "--db", db, "-o", file)
	require.Equal(t, 0, code, errOut)
	assert.Empty(t, out)
	assert.Contains(t, errOut, "then run: text2sql knowledge accept "+file)

	// The file loads back and validates; an existing file is not replaced.
	b, err := knowledge.Load(file)
	require.NoError(t, err)
	ex, err := sqlite.Open(db, sqlite.Options{})
	require.NoError(t, err)
	defer ex.Close()
	require.NoError(t, b.Validate(context.Background(), ex.Schema(), ex))
	_, errOut, code = cli(t, "knowledge", "init", "--db", db, "-o", file)
	assert.Equal(t, exitError, code)
	assert.Contains(t, errOut, "the file exists")

	// The reviewer fills in one note; accept keeps it and drops the rest.
	b.Drafts.Columns[0].Description = "Concert number."
	require.NoError(t, b.Save(file))
	_, errOut, code = cli(t, "knowledge", "accept", file)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, "accepted 2 table notes, 1 column notes, 0 examples")
	got, err := knowledge.Load(file)
	require.NoError(t, err)
	assert.Nil(t, got.Drafts)
	assert.Equal(t, []knowledge.ColumnNote{{Table: "concert", Column: "concert_ID", Description: "Concert number."}}, got.Columns)
	require.NoError(t, got.Validate(context.Background(), ex.Schema(), ex))
}

func TestKnowledgeInitDemoStdout(t *testing.T) {
	out, errOut, code := cli(t, "knowledge", "init", "--demo")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "drafts:\n")
	file := filepath.Join(t.TempDir(), "demo.yaml")
	require.NoError(t, os.WriteFile(file, []byte(out), 0o644))
	_, err := knowledge.Load(file)
	require.NoError(t, err)

	_, _, code = cli(t, "knowledge", "init", "--demo", "-o", filepath.Join(t.TempDir(), "x.json"))
	assert.Equal(t, exitUsage, code)
}

package retriever

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/knowledge"
	"github.com/text2sql-go/text2sql/schema"
)

// spiderUnion returns the tables of the Spider databases ids as one
// schema, each in a namespace named by its database, declared keys
// removed so that InferJoins has keys to find.
func spiderUnion(t *testing.T, ids ...string) *schema.Database {
	out := &schema.Database{Name: "union", Dialect: text2sql.DialectSQLite}
	for _, id := range ids {
		for _, tb := range spiderDB(t, id).Tables {
			ct := *tb
			ct.Schema, ct.ForeignKeys = id, nil
			out.Tables = append(out.Tables, &ct)
		}
	}
	return out
}

// What NewHybrid derives and keeps in CacheDir is what it derives
// without: the first build (which writes DerivedFile) and the second
// (which reads it and does not write it again) retrieve exactly as a
// build without a cache directory, on Spider dev questions over a union
// of databases with inferred keys, namespaces and a knowledge base; a
// changed knowledge base or schema is derived again.
func TestDerivedCacheSameRetrieval(t *testing.T) {
	ctx := context.Background()
	ids := []string{"concert_singer", "pets_1", "car_1", "flight_2", "employee_hire_evaluation", "cre_Doc_Template_Mgt", "course_teach", "museum_visit", "battle_death", "student_transcripts_tracking", "tvshow", "poker_player", "voter_1", "world_1", "orchestra", "network_1", "dog_kennels", "singer", "real_estate_properties"}
	db := spiderUnion(t, ids...)
	kb := &knowledge.Base{
		Tables:   []knowledge.TableNote{{Table: "concert_singer.singer", Description: "Performers", Synonyms: []string{"artist"}}},
		Rules:    []knowledge.Rule{{Text: "A senior dog is older than 10.", Tables: []string{"dog_kennels.Dogs"}}},
		Examples: []knowledge.Example{{Question: "How many singers are there?", SQL: "SELECT count(*) FROM concert_singer.singer"}},
		Values:   []knowledge.ValueList{{Table: "pets_1.Pets", Column: "PetType", Values: []string{"cat", "dog"}}},
	}
	var questions []string
	for _, it := range spiderDev(t) {
		for _, id := range ids {
			if it.DB == id && len(questions) < 150 {
				questions = append(questions, it.Question)
			}
		}
	}
	require.Len(t, questions, 150)
	dir := t.TempDir()
	file := filepath.Join(dir, DerivedFile)
	build := func(db *schema.Database, kb *knowledge.Base, cache string) *Hybrid {
		h, err := NewHybrid(ctx, HybridOptions{Schema: db, Knowledge: kb, InferJoins: true, CacheDir: cache})
		require.NoError(t, err)
		return h
	}
	same := func(want, got *Hybrid) {
		t.Helper()
		require.Equal(t, want.Documents(), got.Documents())
		require.Equal(t, want.Stats().Fingerprint, got.Stats().Fingerprint)
		require.Equal(t, want.db, got.db, "the schema with inferred keys")
		for _, q := range questions {
			a, err := want.Retrieve(ctx, text2sql.RetrieveRequest{Question: q})
			require.NoError(t, err)
			b, err := got.Retrieve(ctx, text2sql.RetrieveRequest{Question: q})
			require.NoError(t, err)
			require.Equal(t, a, b, q)
		}
	}
	plain := build(db, kb, "")
	_, err := os.Stat(file)
	require.ErrorIs(t, err, os.ErrNotExist)
	first := build(db, kb, dir)
	written, err := os.Stat(file)
	require.NoError(t, err)
	second := build(db, kb, dir)
	read, err := os.Stat(file)
	require.NoError(t, err)
	assert.True(t, os.SameFile(written, read), "the second build read the file and did not write it again")
	inferred := 0
	for i, tb := range second.db.Tables {
		inferred += len(tb.ForeignKeys) - len(db.Tables[i].ForeignKeys)
	}
	require.Greater(t, inferred, 20, "inferred keys restored")
	same(plain, first)
	same(plain, second)

	// Another knowledge base, then another schema: derived again.
	kb2 := *kb
	kb2.Rules = append(kb2.Rules, knowledge.Rule{Text: "Prefer the latest survey."})
	changed := build(db, &kb2, dir)
	rewritten, err := os.Stat(file)
	require.NoError(t, err)
	assert.False(t, os.SameFile(read, rewritten), "a changed knowledge base is derived again")
	same(build(db, &kb2, ""), changed)
	db2 := spiderUnion(t, ids[1:]...)
	same(build(db2, &kb2, ""), build(db2, &kb2, dir))
}

package retriever

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/schema"
)

// pets_1 with its declared keys removed: the keys the column names imply
// bring the bridge table Has_Pet between Student and Pets, and the prompt
// marks them as inferred.
func TestInferJoinsBridgeKeylessSchema(t *testing.T) {
	db := spiderDB(t, "pets_1")
	keyless := *db
	keyless.Tables = nil
	for _, tb := range db.Tables {
		ct := *tb
		ct.ForeignKeys = nil
		keyless.Tables = append(keyless.Tables, &ct)
	}
	ctx := context.Background()
	q := text2sql.RetrieveRequest{Question: "What are the first names of the students who own a pet of type dog?"}
	retrieve := func(infer bool) (*text2sql.Retrieval, *Hybrid) {
		h, err := NewHybrid(ctx, HybridOptions{Schema: &keyless, MaxTables: 3, Budget: -1, InferJoins: infer})
		require.NoError(t, err)
		c, err := h.Retrieve(ctx, q)
		require.NoError(t, err)
		return c, h
	}
	with, h := retrieve(true)
	assert.ElementsMatch(t, []string{"Student", "Pets", "Has_Pet"}, tableNames(with))
	student, pets := h.db.Lookup("Student"), h.db.Lookup("Pets")
	path, ok := h.bridges(pets, map[*schema.Table]bool{student: true})
	require.True(t, ok, "an inferred path from Pets to Student")
	require.Len(t, path, 1)
	assert.Equal(t, "Has_Pet", path[0].Name)
	assert.Contains(t, with.Schema, `-- inferred join, not declared: "Has_Pet"."StuID" = "Student"."StuID"`)
	assert.Contains(t, with.Schema, `-- inferred join, not declared: "Has_Pet"."PetID" = "Pets"."PetID"`)
	without, h := retrieve(false)
	assert.NotContains(t, without.Schema, "inferred join")
	_, ok = h.bridges(h.db.Lookup("Pets"), map[*schema.Table]bool{h.db.Lookup("Student"): true})
	assert.False(t, ok, "no key, no join path")
	for _, tb := range keyless.Tables {
		assert.Empty(t, tb.ForeignKeys, "the schema given is unchanged")
	}
}

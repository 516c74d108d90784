package retriever

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/schema"
)

// A wide table chosen by retrieval shows its keys, the columns the
// question names and its first ones; the whole schema, when it fits, is
// never cut.
func TestWideTableShowsTouchedColumns(t *testing.T) {
	wide := &schema.Table{Name: "player_attributes", PrimaryKey: []string{"id"},
		ForeignKeys: []schema.ForeignKey{{Columns: []string{"player_api_id"}, RefTable: "player", RefColumns: []string{"player_api_id"}}}}
	wide.Columns = append(wide.Columns, schema.Column{Name: "id", Type: "INTEGER"}, schema.Column{Name: "player_api_id", Type: "INTEGER"})
	for i := range 40 {
		wide.Columns = append(wide.Columns, schema.Column{Name: fmt.Sprintf("skill_%02d", i), Type: "INTEGER"})
	}
	wide.Columns = append(wide.Columns, schema.Column{Name: "finishing", Type: "INTEGER"}, schema.Column{Name: "heading_accuracy", Type: "INTEGER"})
	player := &schema.Table{Name: "player", PrimaryKey: []string{"player_api_id"},
		Columns: []schema.Column{{Name: "player_api_id", Type: "INTEGER"}, {Name: "player_name", Type: "TEXT"}}}
	db := &schema.Database{Dialect: text2sql.DialectSQLite, Tables: []*schema.Table{player, wide}}
	ctx := context.Background()
	q := text2sql.RetrieveRequest{Question: "Which player has the best finishing among player attributes?"}

	h, err := NewHybrid(ctx, HybridOptions{Schema: db, Budget: -1, WideColumns: 30})
	require.NoError(t, err)
	c, err := h.Retrieve(ctx, q)
	require.NoError(t, err)
	var ref *text2sql.TableRef
	for i := range c.Tables {
		if c.Tables[i].Name == "player_attributes" {
			ref = &c.Tables[i]
		}
	}
	require.NotNil(t, ref, "tables %v", tableNames(c))
	assert.Contains(t, ref.Columns, "id", "the primary key")
	assert.Contains(t, ref.Columns, "player_api_id", "the foreign key")
	assert.Contains(t, ref.Columns, "finishing", "named by the question")
	assert.NotContains(t, ref.Columns, "heading_accuracy")
	assert.Len(t, ref.Columns, minWideColumns+1, "the first columns and finishing")
	assert.Contains(t, c.Schema, fmt.Sprintf("-- %d of its 44 columns shown: the keys and those the question touches", minWideColumns+1))
	assert.NotContains(t, c.Schema, "heading_accuracy")
	assert.Len(t, wide.Columns, 44, "the schema given is unchanged")

	h, err = NewHybrid(ctx, HybridOptions{Schema: db, WideColumns: 30}) // the whole schema fits
	require.NoError(t, err)
	c, err = h.Retrieve(ctx, q)
	require.NoError(t, err)
	assert.Contains(t, c.Schema, "heading_accuracy")
	for _, tr := range c.Tables {
		assert.Nil(t, tr.Columns)
	}
	h, err = NewHybrid(ctx, HybridOptions{Schema: db, Budget: -1, WideColumns: -1})
	require.NoError(t, err)
	c, err = h.Retrieve(ctx, q)
	require.NoError(t, err)
	assert.Contains(t, c.Schema, "heading_accuracy", "never cut")
}

// A wide table keeps the columns other tables' keys reference, only for
// keys that resolve to it: a key of another schema without RefSchema
// references a table of its own schema, not this one.
func TestWideTableKeepsReferencedColumnsOfItsSchema(t *testing.T) {
	stats := &schema.Table{Schema: "a", Name: "stats", PrimaryKey: []string{"id"}, Columns: []schema.Column{{Name: "id", Type: "INTEGER"}}}
	for i := range 60 {
		stats.Columns = append(stats.Columns, schema.Column{Name: fmt.Sprintf("skill_%02d", i), Type: "INTEGER"})
	}
	ref := func(ns, col string) *schema.Table {
		return &schema.Table{Schema: ns, Name: "games_" + ns, Columns: []schema.Column{{Name: "stat", Type: "INTEGER"}},
			ForeignKeys: []schema.ForeignKey{{Columns: []string{"stat"}, RefTable: "stats", RefColumns: []string{col}}}}
	}
	db := &schema.Database{Dialect: text2sql.DialectPostgres, Tables: []*schema.Table{stats, ref("a", "skill_40"), ref("b", "skill_50")}}
	h, err := NewHybrid(context.Background(), HybridOptions{Schema: db, Budget: -1})
	require.NoError(t, err)
	cut := h.cut(stats, "games", nil, nil)
	require.NotNil(t, cut)
	var names []string
	for _, c := range cut.Columns {
		names = append(names, c.Name)
	}
	assert.Contains(t, names, "skill_40", "referenced by a.games_a")
	assert.NotContains(t, names, "skill_50", "b.games_b references b.stats")
}

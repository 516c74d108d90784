package retriever_test

import (
	"context"
	"fmt"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/knowledge"
	"github.com/text2sql-go/text2sql/retriever"
	"github.com/text2sql-go/text2sql/schema"
)

func ExampleNewHybrid() {
	id := schema.Column{Name: "id", Type: "integer", NotNull: true}
	db := &schema.Database{Name: "shop", Dialect: text2sql.DialectSQLite, Tables: []*schema.Table{
		{Name: "customers", Kind: schema.KindTable, PrimaryKey: []string{"id"},
			Columns: []schema.Column{id, {Name: "name", Type: "text"}, {Name: "country", Type: "text"}}},
		{Name: "orders", Kind: schema.KindTable, PrimaryKey: []string{"id"},
			Columns:     []schema.Column{id, {Name: "customer_id", Type: "integer"}, {Name: "amount", Type: "numeric"}, {Name: "created_at", Type: "timestamp"}},
			ForeignKeys: []schema.ForeignKey{{Columns: []string{"customer_id"}, RefTable: "customers", RefColumns: []string{"id"}}}},
		{Name: "products", Kind: schema.KindTable, PrimaryKey: []string{"id"},
			Columns: []schema.Column{id, {Name: "title", Type: "text"}, {Name: "price", Type: "numeric"}}},
	}}
	kb := &knowledge.Base{Examples: []knowledge.Example{
		{ID: "big-spenders", Question: "Which customers spent the most?", SQL: "SELECT c.name, sum(o.amount) FROM customers c JOIN orders o ON o.customer_id = c.id GROUP BY c.name ORDER BY 2 DESC"},
	}}
	// Offline defaults: the hashing embedder and an in-memory store.
	// The whole schema fits the default budget, so every table is shown:
	// the two retrieved ones first, then the rest.
	h, err := retriever.NewHybrid(context.Background(), retriever.HybridOptions{Schema: db, Knowledge: kb, MaxTables: 2})
	if err != nil {
		fmt.Println(err)
		return
	}
	c, err := h.Retrieve(context.Background(), text2sql.RetrieveRequest{Question: "Total order amount per customer country"})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, t := range c.Tables {
		fmt.Println(t.Name, "-", t.Reason)
	}
	fmt.Println("low confidence:", c.LowConfidence)

	c, _ = h.Retrieve(context.Background(), text2sql.RetrieveRequest{Question: "which customers spent the most"})
	fmt.Println("reuse:", c.Match.ID, c.Match.Similarity)
	// Output:
	// customers - retrieved
	// orders - retrieved
	// products - whole schema
	// low confidence: false
	// reuse: big-spenders 1
}

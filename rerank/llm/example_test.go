package llmrerank_test

import (
	"context"
	"fmt"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/llm/llmtest"
	llmrerank "github.com/text2sql-go/text2sql/rerank/llm"
	"github.com/text2sql-go/text2sql/retriever"
	"github.com/text2sql-go/text2sql/schema"
)

func ExampleNew() {
	id := schema.Column{Name: "id", Type: "integer", NotNull: true}
	db := &schema.Database{Name: "shop", Dialect: text2sql.DialectSQLite, Tables: []*schema.Table{
		{Name: "customers", Kind: schema.KindTable, PrimaryKey: []string{"id"},
			Columns:     []schema.Column{id, {Name: "name", Type: "text"}, {Name: "region_id", Type: "integer"}},
			ForeignKeys: []schema.ForeignKey{{Columns: []string{"region_id"}, RefTable: "regions", RefColumns: []string{"id"}}}},
		{Name: "orders", Kind: schema.KindTable, PrimaryKey: []string{"id"},
			Columns:     []schema.Column{id, {Name: "customer_id", Type: "integer"}, {Name: "amount", Type: "numeric"}},
			ForeignKeys: []schema.ForeignKey{{Columns: []string{"customer_id"}, RefTable: "customers", RefColumns: []string{"id"}}}},
		{Name: "regions", Kind: schema.KindTable, PrimaryKey: []string{"id"},
			Columns: []schema.Column{id, {Name: "name", Type: "text"}}},
	}}
	// A scripted model stands in for gemini.New or openai.New.
	model := llmtest.New(`{"reasoning": "amounts are in orders, the region's name in regions", "tables": ["orders", "customers", "regions", "invoices"]}`)
	sel, err := llmrerank.New(model, llmrerank.Options{Schema: db})
	if err != nil {
		fmt.Println(err)
		return
	}
	h, err := retriever.NewHybrid(context.Background(), retriever.HybridOptions{Schema: db, Reranker: sel})
	if err != nil {
		fmt.Println(err)
		return
	}
	c, err := h.Retrieve(context.Background(), text2sql.RetrieveRequest{Question: "Total amount spent per region name"})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, t := range c.Tables {
		fmt.Println(t.Name)
	}
	fmt.Println("selected:", c.Rerank.Tables, "ignored:", c.Rerank.Ignored, "calls:", len(c.Rerank.Calls), "fallback:", fmt.Sprintf("%q", c.Rerank.Fallback))
	// Output:
	// orders
	// customers
	// regions
	// selected: [orders customers regions] ignored: [invoices] calls: 1 fallback: ""
}

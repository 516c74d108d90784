package retriever

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/schema"
)

var synthWords = strings.Fields(`account address agent airline airport album amount artist asset audit balance bank batch
bill booking branch brand budget building campaign card carrier cart category channel city claim class client clinic
code comment company contract cost country coupon course credit currency customer cycle date deal degree delivery
department deposit device discount district doctor document driver employee engine event expense facility fee file
flight fund game grade group guest hotel incident invoice item journal kind label lead lesson level license line loan
location lot manager market match member menu message meter model module movie name network note office offer order
owner package page partner patient payment period permit phone plan player policy port price product profile program
project promotion property provider purchase quota rate reading receipt record region release rental report request
reservation resource review reward role room route sale schedule school score season seat sector segment sensor
service session shift shipment shop site skill slot song source sponsor staff stage station status stock store
student subject supplier survey task tax team teacher term test ticket title token tour track trade training trip
unit user vehicle vendor venue visit voucher warehouse zone`)

var synthTypes = []string{"integer", "text", "numeric(10,2)", "date", "timestamp", "boolean"}

// synthSchema returns a deterministic schema of n tables of cols columns:
// names made of two words from a fixed list, an id primary key, one or two
// foreign keys to earlier tables, and orders(id, amount, created_at).
func synthSchema(n, cols int) *schema.Database {
	db := &schema.Database{Name: "synthetic", Dialect: text2sql.DialectPostgres}
	seed := uint64(42)
	next := func(m int) int { // xorshift64*: deterministic, no global state
		seed ^= seed >> 12
		seed ^= seed << 25
		seed ^= seed >> 27
		return int((seed * 2685821657736338717) >> 33 % uint64(m))
	}
	used := map[string]bool{"orders": true}
	db.Tables = append(db.Tables, &schema.Table{Name: "orders", Kind: schema.KindTable, PrimaryKey: []string{"id"},
		Columns: []schema.Column{{Name: "id", Type: "integer", NotNull: true}, {Name: "amount", Type: "numeric(10,2)"}, {Name: "created_at", Type: "timestamp"}}})
	for len(db.Tables) < n {
		name := synthWords[next(len(synthWords))] + "_" + synthWords[next(len(synthWords))]
		if used[name] {
			name = fmt.Sprintf("%s_%d", name, len(db.Tables))
		}
		used[name] = true
		t := &schema.Table{Name: name, Kind: schema.KindTable, PrimaryKey: []string{"id"}}
		t.Columns = append(t.Columns, schema.Column{Name: "id", Type: "integer", NotNull: true})
		refs := 1 + next(2)
		for r := 0; r < refs && len(db.Tables) > 1; r++ {
			ref := db.Tables[next(len(db.Tables))]
			col := ref.Name + "_id"
			if t.Column(col) != nil {
				continue
			}
			t.Columns = append(t.Columns, schema.Column{Name: col, Type: "integer"})
			t.ForeignKeys = append(t.ForeignKeys, schema.ForeignKey{Columns: []string{col}, RefTable: ref.Name, RefColumns: []string{"id"}})
		}
		for len(t.Columns) < cols {
			c := synthWords[next(len(synthWords))] + "_" + synthWords[next(len(synthWords))]
			if t.Column(c) == nil {
				t.Columns = append(t.Columns, schema.Column{Name: c, Type: synthTypes[next(len(synthTypes))]})
			}
		}
		db.Tables = append(db.Tables, t)
	}
	slices.SortFunc(db.Tables, func(a, b *schema.Table) int { return strings.Compare(a.Name, b.Name) })
	return db
}

var synthQuestions = []string{
	"What is the total amount of orders created last month?",
	"List the customer accounts with the highest balance",
	"How many shipments per warehouse zone?",
	"Average ticket price by flight route",
	"Which employees work in each department office?",
	"Show invoices with unpaid payment status",
	"Top 10 products by review score",
	"Number of student enrollments per course term",
}

func TestSynthSchema(t *testing.T) {
	db := synthSchema(1000, 20)
	if len(db.Tables) != 1000 {
		t.Fatalf("%d tables", len(db.Tables))
	}
	if o := db.Lookup("orders"); o == nil || o.Column("amount") == nil || o.Column("created_at") == nil {
		t.Fatal("orders missing")
	}
	if db2 := synthSchema(1000, 20); SchemaFingerprint(db2) != SchemaFingerprint(db) {
		t.Fatal("not deterministic")
	}
	for _, tb := range db.Tables {
		if tb.Name != "orders" && len(tb.Columns) != 20 {
			t.Fatalf("%s: %d columns", tb.Name, len(tb.Columns))
		}
	}
	h, err := NewHybrid(context.Background(), HybridOptions{Schema: db})
	if err != nil {
		t.Fatal(err)
	}
	c := retrieve(t, h, "What is the total amount of orders created last month?")
	if c.Tables[0].Name != "orders" {
		t.Fatalf("tables %+v", c.Tables)
	}
	if len(c.Tables) != DefaultMaxTables {
		t.Fatalf("%d tables shown", len(c.Tables))
	}
}

// BenchmarkRetrieveLatency1000 reports the p50 and p95 of Retrieve on the
// 1,000-table × 20-column schema (targets: p50 under 5 ms; build under 5 s,
// see BenchmarkBuildSynthetic1000).
func BenchmarkRetrieveLatency1000(b *testing.B) {
	ctx := context.Background()
	h, err := NewHybrid(ctx, HybridOptions{Schema: synthSchema(1000, 20)})
	if err != nil {
		b.Fatal(err)
	}
	var ds []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		q := synthQuestions[i%len(synthQuestions)]
		t0 := time.Now()
		if _, err := h.Retrieve(ctx, text2sql.RetrieveRequest{Question: q}); err != nil {
			b.Fatal(err)
		}
		ds = append(ds, time.Since(t0))
	}
	slices.Sort(ds)
	b.ReportMetric(float64(ds[len(ds)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(ds[len(ds)*95/100].Microseconds()), "p95-µs")
}

func benchRetrieve(b *testing.B, h *Hybrid, qs []string) {
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := h.Retrieve(ctx, text2sql.RetrieveRequest{Question: qs[i%len(qs)]}); err != nil {
			b.Fatal(err)
		}
	}
}

func spiderQuestions(b *testing.B, db string) []string {
	var qs []string
	for _, it := range spiderDev(b) {
		if it.DB == db {
			qs = append(qs, it.Question)
		}
	}
	return qs
}

// BenchmarkRetrieveSpider: one Retrieve per question over the world_1 dev
// questions (memory store, hashing embedder).
func BenchmarkRetrieveSpider(b *testing.B) {
	h, err := NewHybrid(context.Background(), HybridOptions{Schema: spiderDB(b, "world_1")})
	if err != nil {
		b.Fatal(err)
	}
	benchRetrieve(b, h, spiderQuestions(b, "world_1"))
}

func BenchmarkRetrieveSynthetic1000(b *testing.B) {
	h, err := NewHybrid(context.Background(), HybridOptions{Schema: synthSchema(1000, 20)})
	if err != nil {
		b.Fatal(err)
	}
	benchRetrieve(b, h, synthQuestions)
}

func BenchmarkRetrieveSynthetic1000Chromem(b *testing.B) {
	s, err := OpenChromem(filepath.Join(b.TempDir(), "idx"))
	if err != nil {
		b.Fatal(err)
	}
	h, err := NewHybrid(context.Background(), HybridOptions{Schema: synthSchema(1000, 20), Store: s})
	if err != nil {
		b.Fatal(err)
	}
	benchRetrieve(b, h, synthQuestions)
}

func BenchmarkBuildSpider(b *testing.B) {
	db := spiderDB(b, "world_1")
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := NewHybrid(context.Background(), HybridOptions{Schema: db}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBuildSynthetic1000(b *testing.B) {
	db := synthSchema(1000, 20)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := NewHybrid(context.Background(), HybridOptions{Schema: db}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBuildSynthetic1000Chromem rebuilds into a fresh directory each
// time: 1,000 gob files written.
func BenchmarkBuildSynthetic1000Chromem(b *testing.B) {
	db := synthSchema(1000, 20)
	dir := b.TempDir()
	for i := 0; i < b.N; i++ {
		s, err := OpenChromem(filepath.Join(dir, fmt.Sprint(i)))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := NewHybrid(context.Background(), HybridOptions{Schema: db, Store: s}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReopenSynthetic1000Chromem reopens a built directory: documents
// loaded from disk, fingerprint matched, nothing embedded.
func BenchmarkReopenSynthetic1000Chromem(b *testing.B) {
	db := synthSchema(1000, 20)
	dir := filepath.Join(b.TempDir(), "idx")
	s, err := OpenChromem(dir)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := NewHybrid(context.Background(), HybridOptions{Schema: db, Store: s}); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s, err := OpenChromem(dir)
		if err != nil {
			b.Fatal(err)
		}
		h, err := NewHybrid(context.Background(), HybridOptions{Schema: db, Store: s})
		if err != nil {
			b.Fatal(err)
		}
		if h.Stats().Rebuilt {
			b.Fatal("rebuilt")
		}
	}
}

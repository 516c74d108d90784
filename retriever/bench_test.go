package retriever

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/cputime"
	"github.com/text2sql-go/text2sql/knowledge"
	"github.com/text2sql-go/text2sql/retriever/valueindex"
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
	next := rand.New(rand.NewPCG(42, 0)).IntN // deterministic, no global state
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
	require.Len(t, db.Tables, 1000)
	o := db.Lookup("orders")
	require.NotNil(t, o, "orders missing")
	require.NotNil(t, o.Column("amount"), "orders.amount missing")
	require.NotNil(t, o.Column("created_at"), "orders.created_at missing")
	require.Equal(t, SchemaFingerprint(db), SchemaFingerprint(synthSchema(1000, 20)), "not deterministic")
	for _, tb := range db.Tables {
		if tb.Name != "orders" {
			require.Len(t, tb.Columns, 20, tb.Name)
		}
	}
	h, err := NewHybrid(context.Background(), HybridOptions{Schema: db})
	require.NoError(t, err)
	c := retrieve(t, h, "What is the total amount of orders created last month?")
	require.Equal(t, "orders", c.Tables[0].Name, "tables %+v", c.Tables)
	require.Len(t, c.Tables, DefaultMaxTables, "tables shown")
}

// BenchmarkRetrieveLatency1000 reports the p50 and p95 of Retrieve on the
// 1,000-table × 20-column schema (targets: p50 under 5 ms; build under 5 s,
// see BenchmarkBuildSynthetic1000).
func BenchmarkRetrieveLatency1000(b *testing.B) { benchLatency(b, 1000) }

// BenchmarkRetrieveLatency10000: the same on 10,000 tables × 20 columns
// (targets: p50 ≤ 2 ms, p95 ≤ 4 ms).
func BenchmarkRetrieveLatency10000(b *testing.B) { benchLatency(b, 10000) }

func benchLatency(b *testing.B, tables int) {
	ctx := context.Background()
	h, err := NewHybrid(ctx, HybridOptions{Schema: synthSchema(tables, 20)})
	require.NoError(b, err)
	b.ResetTimer()
	retrieveTimes(b, h, synthQuestions).report(b, "")
}

// retrieveTimes times b.N retrievals, of qs in turn.
func retrieveTimes(b *testing.B, h *Hybrid, qs []string) *timings {
	ts := &timings{}
	for i := 0; i < b.N; i++ {
		ts.time(func() {
			_, err := h.Retrieve(context.Background(), text2sql.RetrieveRequest{Question: qs[i%len(qs)]})
			require.NoError(b, err)
		})
	}
	return ts
}

// timings are the wall-clock and CPU times of calls.
type timings struct{ wall, cpu []time.Duration }

// time times f: its wall-clock time, and the CPU time of its thread
// (cputime.Thread: what other processes take of the machine does not
// count) where the platform reports it.
func (ts *timings) time(f func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	c0, ok := cputime.Thread()
	t0 := time.Now()
	f()
	ts.wall = append(ts.wall, time.Since(t0))
	if c1, _ := cputime.Thread(); ok {
		ts.cpu = append(ts.cpu, c1-c0)
	}
}

// report reports the percentiles of the wall-clock times as
// prefix+"p50-µs" and prefix+"p95-µs", and of the CPU times as
// prefix+"cpu-p50-µs" and prefix+"cpu-p95-µs".
func (ts *timings) report(b *testing.B, prefix string) {
	reportPercentiles(b, ts.wall, prefix)
	if len(ts.cpu) > 0 {
		reportPercentiles(b, ts.cpu, prefix+"cpu-")
	}
}

// reportPercentiles reports the p50 and p95 of ds, in µs, as
// prefix+"p50-µs" and prefix+"p95-µs".
func reportPercentiles(b *testing.B, ds []time.Duration, prefix string) {
	slices.Sort(ds)
	b.ReportMetric(float64(ds[len(ds)/2].Microseconds()), prefix+"p50-µs")
	b.ReportMetric(float64(ds[len(ds)*95/100].Microseconds()), prefix+"p95-µs")
}

func benchRetrieve(b *testing.B, h *Hybrid, qs []string) {
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_, err := h.Retrieve(ctx, text2sql.RetrieveRequest{Question: qs[i%len(qs)]})
		require.NoError(b, err)
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
	require.NoError(b, err)
	benchRetrieve(b, h, spiderQuestions(b, "world_1"))
}

func BenchmarkRetrieveSynthetic1000(b *testing.B) {
	h, err := NewHybrid(context.Background(), HybridOptions{Schema: synthSchema(1000, 20)})
	require.NoError(b, err)
	benchRetrieve(b, h, synthQuestions)
}

func BenchmarkRetrieveSynthetic1000Chromem(b *testing.B) {
	s, err := OpenChromem(filepath.Join(b.TempDir(), "idx"))
	require.NoError(b, err)
	h, err := NewHybrid(context.Background(), HybridOptions{Schema: synthSchema(1000, 20), Store: s})
	require.NoError(b, err)
	benchRetrieve(b, h, synthQuestions)
}

func BenchmarkBuildSpider(b *testing.B) { benchBuild(b, spiderDB(b, "world_1")) }

func BenchmarkBuildSynthetic1000(b *testing.B) { benchBuild(b, synthSchema(1000, 20)) }

// BenchmarkBuildSynthetic10000: ten times the tables should take about ten
// times as long (target: ≤ 5 s).
func BenchmarkBuildSynthetic10000(b *testing.B) { benchBuild(b, synthSchema(10000, 20)) }

// benchBuild measures building an in-memory Hybrid retriever over db,
// and the peak memory of the builds (see peakMemory).
func benchBuild(b *testing.B, db *schema.Database) {
	b.ReportAllocs()
	peak := startPeak()
	for i := 0; i < b.N; i++ {
		_, err := NewHybrid(context.Background(), HybridOptions{Schema: db})
		require.NoError(b, err)
	}
	b.StopTimer()
	peak.report(b)
}

// BenchmarkBuildSynthetic1000Chromem rebuilds into a fresh directory each
// time: 1,000 gob files written.
func BenchmarkBuildSynthetic1000Chromem(b *testing.B) {
	db := synthSchema(1000, 20)
	dir := b.TempDir()
	for i := 0; i < b.N; i++ {
		s, err := OpenChromem(filepath.Join(dir, fmt.Sprint(i)))
		require.NoError(b, err)
		_, err = NewHybrid(context.Background(), HybridOptions{Schema: db, Store: s})
		require.NoError(b, err)
	}
}

// BenchmarkReopenSynthetic1000Chromem reopens a built directory: documents
// loaded from disk, fingerprint matched, nothing embedded.
func BenchmarkReopenSynthetic1000Chromem(b *testing.B) {
	db := synthSchema(1000, 20)
	dir := filepath.Join(b.TempDir(), "idx")
	s, err := OpenChromem(dir)
	require.NoError(b, err)
	_, err = NewHybrid(context.Background(), HybridOptions{Schema: db, Store: s})
	require.NoError(b, err)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s, err := OpenChromem(dir)
		require.NoError(b, err)
		h, err := NewHybrid(context.Background(), HybridOptions{Schema: db, Store: s})
		require.NoError(b, err)
		require.False(b, h.Stats().Rebuilt, "rebuilt")
	}
}

// BenchmarkOpenChromemSynthetic1000 opens a built directory: the store's
// share of a reopen (reading and checking the index file), without the
// retriever's in-memory BM25 index and documents.
func BenchmarkOpenChromemSynthetic1000(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "idx")
	s, err := OpenChromem(dir)
	require.NoError(b, err)
	_, err = NewHybrid(context.Background(), HybridOptions{Schema: synthSchema(1000, 20), Store: s})
	require.NoError(b, err)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s, err := OpenChromem(dir)
		require.NoError(b, err)
		n, err := s.Count(context.Background())
		require.NoError(b, err)
		require.Equal(b, 1000, n)
	}
}

// synthValues returns a value index of db's text columns, perColumn
// values each: deterministic two-word names with a number ("North
// Harbor 17"), as a catalog's name, city and status columns hold.
func synthValues(db *schema.Database, perColumn int) *valueindex.Index {
	return indexValues(synthValueLists(db, perColumn))
}

// valueList is one column's values, as valueindex.Builder.Add takes them.
type valueList struct {
	table, column string
	values        []string
}

// synthValueLists returns the values synthValues indexes, in the order it
// adds them.
func synthValueLists(db *schema.Database, perColumn int) []valueList {
	next := rand.New(rand.NewPCG(7, 0)).IntN // deterministic, no global state
	var out []valueList
	for _, t := range db.Tables {
		for i := range t.Columns {
			c := &t.Columns[i]
			if !knowledge.ValueColumn(t, c) {
				continue
			}
			vals := make([]string, 0, perColumn)
			for range perColumn {
				vals = append(vals, fmt.Sprintf("%s %s %d", synthWords[next(len(synthWords))], synthWords[next(len(synthWords))], next(1000)))
			}
			out = append(out, valueList{t.QualifiedName(), c.Name, vals})
		}
	}
	return out
}

// indexValues adds lists to a Builder in order and builds the index.
func indexValues(lists []valueList) *valueindex.Index {
	var b valueindex.Builder
	for _, l := range lists {
		b.Add(l.table, l.column, l.values...)
	}
	return b.Index()
}

// synthValueQuestions name values of synthValues (some misspelt).
var synthValueQuestions = []string{
	"What is the total amount of orders of hotel guest 12?",
	"List the customer accounts in region north with the highest balance",
	"How many shipments went to warehouse zone 7?",
	"Average ticket price of flights on route airport lounge 311",
	"Which employees work in offce building 44?",
	"Show invoices with unpaid payment status for vendor market 90",
	"Top 10 products by review score",
	"Number of student enrollments per course term",
}

func heapMB() float64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.HeapAlloc) / (1 << 20)
}

// peakSampleEvery is how often peakMemory samples the heap: at the
// allocation rate of a build (under 2 GB/s on the benchmark machine) a
// peak between two samples is missed by at most a few MB.
const peakSampleEvery = time.Millisecond

// peakMemory measures the peak memory of a stretch of a benchmark, two
// ways: the largest heap (runtime/metrics
// /memory/classes/heap/objects:bytes, live and not yet swept objects, as
// MemStats.HeapAlloc counts them) sampled every peakSampleEvery, less the
// heap after a GC at the start, so garbage the collector has yet to free
// counts, as it does in a process's footprint; and the peak resident set
// of the whole process (VmHWM of /proc/self/status, reset at the start by
// writing 5 to /proc/self/clear_refs; Linux only, not reported elsewhere),
// which also holds the schema, the test binary and the heap's slack.
type peakMemory struct {
	base    uint64
	rss     bool // the resident-set peak was reset
	stop    chan struct{}
	done    chan uint64
	sampled []metrics.Sample
}

const heapObjects = "/memory/classes/heap/objects:bytes"

func startPeak() *peakMemory {
	runtime.GC()
	p := &peakMemory{stop: make(chan struct{}), done: make(chan uint64, 1), sampled: []metrics.Sample{{Name: heapObjects}}}
	metrics.Read(p.sampled)
	p.base = p.sampled[0].Value.Uint64()
	p.rss = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
	go func() {
		s := []metrics.Sample{{Name: heapObjects}}
		peak := uint64(0)
		t := time.NewTicker(peakSampleEvery)
		defer t.Stop()
		for {
			metrics.Read(s)
			peak = max(peak, s[0].Value.Uint64())
			select {
			case <-p.stop:
				p.done <- peak
				return
			case <-t.C:
			}
		}
	}()
	return p
}

// report stops sampling and reports "peak-heap-MB" and, where measured,
// "peak-rss-MB".
func (p *peakMemory) report(b *testing.B) {
	close(p.stop)
	peak := <-p.done
	b.ReportMetric(float64(peak-min(peak, p.base))/(1<<20), "peak-heap-MB")
	if !p.rss {
		return
	}
	status, err := os.ReadFile("/proc/self/status")
	require.NoError(b, err)
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			require.NoError(b, err)
			b.ReportMetric(float64(kb)/(1<<10), "peak-rss-MB")
		}
	}
}

// BenchmarkBuildValues1000: BenchmarkBuildValues10000 on 1,000 tables.
func BenchmarkBuildValues1000(b *testing.B) { benchBuildValues(b, 1000) }

// BenchmarkBuildValues10000: the value index of 10,000 tables × 20
// columns, 20 values per text column (run with -benchtime=1x), and the
// retriever over it: the time of both (values-ms: the index's share,
// from the values in memory to the built index), the heap the index and
// the retriever hold after the build (heap-MB) and the peak memory of the
// build (see peakMemory).
func BenchmarkBuildValues10000(b *testing.B) { benchBuildValues(b, 10000) }

func benchBuildValues(b *testing.B, tables int) {
	db := synthSchema(tables, 20)
	lists := synthValueLists(db, 20)
	before := heapMB()
	var (
		ix *valueindex.Index
		h  *Hybrid
	)
	b.ReportAllocs()
	b.ResetTimer()
	peak := startPeak()
	for range b.N {
		t0 := time.Now()
		ix = indexValues(lists)
		b.ReportMetric(float64(time.Since(t0).Milliseconds()), "values-ms")
		var err error
		h, err = NewHybrid(context.Background(), HybridOptions{Schema: db, Values: ix})
		require.NoError(b, err)
	}
	b.StopTimer()
	peak.report(b)
	b.ReportMetric(heapMB()-before, "heap-MB")
	b.ReportMetric(float64(ix.Len()), "values")
	require.Equal(b, ix.Len(), h.Stats().Values)
}

// BenchmarkRetrieveLatencyValues1000: BenchmarkRetrieveLatencyValues10000
// on 1,000 tables.
func BenchmarkRetrieveLatencyValues1000(b *testing.B) { benchLatencyValues(b, 1000) }

// BenchmarkRetrieveLatencyValues10000: Retrieve p50 and p95 on 10,000
// tables × 20 columns with the value index of BenchmarkBuildValues10000
// (targets: p50 ≤ 2 ms, p95 ≤ 4 ms), and Match alone.
func BenchmarkRetrieveLatencyValues10000(b *testing.B) { benchLatencyValues(b, 10000) }

func benchLatencyValues(b *testing.B, tables int) {
	ctx := context.Background()
	db := synthSchema(tables, 20)
	ix := synthValues(db, 20)
	h, err := NewHybrid(ctx, HybridOptions{Schema: db, Values: ix})
	require.NoError(b, err)
	b.ResetTimer()
	ds := retrieveTimes(b, h, synthValueQuestions)
	ms := &timings{}
	for i := 0; i < b.N; i++ {
		ms.time(func() { ix.Match(synthValueQuestions[i%len(synthValueQuestions)], valueindex.MatchOptions{}) })
	}
	ds.report(b, "")
	ms.report(b, "match-")
}

// TestBuildParallelSameRankings: the retriever and value index built with
// GOMAXPROCS 1 (every step sequential) and with 4 goroutines (the
// documents' tokens and vectors and the values' keys computed in
// parallel) retrieve and match the same, field for field, on a
// 2,000-table schema with values and on Spider's world_1.
func TestBuildParallelSameRankings(t *testing.T) {
	if testing.Short() {
		t.Skip("builds four retrievers")
	}
	db := synthSchema(2000, 20)
	lists := synthValueLists(db, 20)
	questions := append(slices.Clone(synthQuestions), synthValueQuestions...)
	for i := 0; i < len(lists); i += len(lists) / 5 {
		l := lists[i]
		v := l.values[len(l.values)/2]
		questions = append(questions, "Which rows have "+v+"?", "How many with "+v[1:]+" per "+l.column+"?")
	}
	world := spiderDB(t, "world_1")
	type built struct {
		synth, world []*text2sql.Retrieval
		matches      [][]valueindex.Hit
	}
	build := func(procs int) (out built) {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		ix := indexValues(lists)
		h, err := NewHybrid(context.Background(), HybridOptions{Schema: db, Values: ix})
		require.NoError(t, err)
		w, err := NewHybrid(context.Background(), HybridOptions{Schema: world})
		require.NoError(t, err)
		for _, q := range questions {
			out.synth = append(out.synth, retrieve(t, h, q))
			out.world = append(out.world, retrieve(t, w, q))
			out.matches = append(out.matches, ix.Match(q, valueindex.MatchOptions{}))
		}
		return out
	}
	seq, par := build(1), build(4)
	require.Equal(t, seq, par)
	hits := 0
	for i, r := range seq.synth {
		require.NotEmpty(t, r.Tables, r.Question)
		hits += len(seq.matches[i])
	}
	require.NotZero(t, hits, "no value matched: the value index went untested")
}

// BenchmarkRetrieveLatencyCatalog10000: BenchmarkRetrieveLatency10000 with
// the tables spread over 100 schemas, so that each question is routed to
// a namespace first (the namespace index and route), and the build time.
func BenchmarkRetrieveLatencyCatalog10000(b *testing.B) {
	ctx := context.Background()
	db := synthSchema(10000, 20)
	for i, t := range db.Tables {
		t.Schema = fmt.Sprintf("db%02d", i%100)
	}
	t0 := time.Now()
	h, err := NewHybrid(ctx, HybridOptions{Schema: db})
	require.NoError(b, err)
	build := time.Since(t0)
	require.NotNil(b, h.nsBM, "namespaces")
	b.ResetTimer() // also drops metrics reported before it
	retrieveTimes(b, h, synthQuestions).report(b, "")
	b.ReportMetric(build.Seconds(), "build-s")
}

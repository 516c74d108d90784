// Package retriever is the default text2sql.Retriever: hybrid BM25 and
// vector search over the knowledge base's documents, fused with Reciprocal
// Rank Fusion, with per-kind quotas, schema linking through examples and
// foreign keys, and a vector store behind a small interface (in memory, or
// persistent on chromem-go).
//
// Retrieval decides which tables are relevant; what a prompt shows of them
// is always re-read from the schema model (full column lists, keys and
// foreign keys), never from the store.
package retriever

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/embed/hashing"
	"github.com/text2sql-go/text2sql/internal/bm25"
	"github.com/text2sql-go/text2sql/internal/gobfile"
	"github.com/text2sql-go/text2sql/knowledge"
	"github.com/text2sql-go/text2sql/retriever/valueindex"
	"github.com/text2sql-go/text2sql/schema"
)

// Defaults of HybridOptions. The thresholds and caps were chosen by
// measurement on the 972 Spider dev questions whose database is available,
// with the hashing embedder and an empty knowledge base (recall_test.go
// has the measurements and a sweep that reproduces them).
const (
	// DefaultRRFK is the k of Reciprocal Rank Fusion (Cormack, Clarke and
	// Büttcher, SIGIR 2009): an item's fused score is Σ 1/(k + rank).
	DefaultRRFK = 60
	// DefaultLowConfidence is the cosine similarity under which the best
	// match marks a retrieval as low confidence. With the hashing
	// embedder it flags 2.0% of the Spider dev questions and 95.8% of
	// off-topic questions ("What is the capital of France?") asked of the
	// same databases. Other embedders need their own threshold.
	DefaultLowConfidence = 0.14
	// DefaultExampleReuse is the cosine similarity of the question and a
	// verified example's question from which the example is offered for
	// reuse. With the hashing embedder and the other dev questions of the
	// same database as examples, 109 of the 117 matches at 0.95 carry the
	// gold SQL; most others are questions Spider labels two ways.
	DefaultExampleReuse = 0.95
	// DefaultMaxTables caps the tables shown, required tables aside.
	// Measured by eval --recall (strict table recall, mean tables shown):
	// on the catalog of all 873 Spider tables (166 databases), 6 gives
	// 93.3% at 5.17 tables for the Spider dev questions, and on BIRD
	// mini-dev's 75 tables in one catalog 97.2% at 5.38; 5 gives 92.2% at
	// 4.65 and 94.8% at 4.66, 7 gives 93.6% at 5.43 and 98.8% at 6.02.
	// Per Spider database without a budget (retrieval alone), 6 gives
	// 99.7% at 3.93 tables, 5 gives 99.6% at 3.67.
	DefaultMaxTables = 6
	// DefaultBudget is the default HybridOptions.Budget, in tokens.
	// Chosen by measurement (eval --recall): every Spider dev and BIRD
	// mini-dev database's whole schema fits 4,000 (the largest DDL, BIRD's
	// european_football_2, is about 1,800 tokens; Spider's at most 800), so
	// strict table recall there is 100% with a prompt the size of the
	// whole schema's, while catalogs of many databases go through
	// retrieval (the 77 tables of the Spider dev databases together are
	// 4,834 tokens; BIRD's 75 and Spider's 873 more). Showing the whole
	// schema when it fits follows Maamari et al., "The Death of Schema
	// Linking?" (2024): with capable models, a missed table costs more
	// than extra ones.
	DefaultBudget = 4000
	// DefaultWideColumns is the column count above which a table shown
	// by retrieval (not as part of the whole schema) is cut to its keys
	// and the columns the question touches. Measured on BIRD mini-dev
	// (retrieval alone, and its 75 tables as one schema): at 50 the
	// prompt is 8% and 6.5% smaller for 0.08 points of column recall
	// (european_football_2's Match has 115 columns, card_games' cards
	// 74); at 30 it is 14% and 11% smaller for 0.6 points, lost on
	// cryptic names (GSoffered, AdmFName1) no word of the question
	// matches. Spider's tables (at most 49 columns) stay whole.
	DefaultWideColumns = 50
	// minWideColumns is the fewest columns a cut table keeps: its first
	// ones fill up to it, so a question that names none still shows the
	// table's shape.
	minWideColumns = 8
	// DefaultBatchSize is the number of documents embedded per call.
	DefaultBatchSize = 64
	// IndexLayout is the version of the index layout (document IDs, kinds,
	// what is embedded). It enters the fingerprint: changing it rebuilds
	// every index.
	IndexLayout = "text2sql/retriever/index/v1"
)

// defaultNeighbourLead is the default of Hybrid.neighbourLead: with 8
// rather than 0, strict recall at 5 tables rises from 99.1% to 99.3% per
// Spider database and from 93.7% to 94.8% with all in one schema. A table
// the question names gets the same lead, so a neighbour cannot push it
// out: BIRD mini-dev per database, retrieval alone, 94.0% → 96.6%.
var defaultNeighbourLead = 8

// candidatePool is the depth, per kind, of each ranking (BM25 and vector)
// that enters fusion: at least this many, more for large quotas.
const candidatePool = 50

// kindOrder is the order of kinds in ties and statistics.
var kindOrder = []text2sql.ItemKind{text2sql.ItemTable, text2sql.ItemColumn, text2sql.ItemRule, text2sql.ItemExample, text2sql.ItemValue}

// DefaultQuotas returns the default number of items kept per kind: 5
// tables, 5 columns, 3 rules, 3 examples, 3 value lists. A new map on each
// call. The table quota only bounds Retrieval.Items: the tables shown are
// chosen from the whole fused table ranking, up to MaxTables. With the
// other Spider dev questions as examples, 1 example gives 99.8% strict
// table recall, 3 give 99.9%, 5 no more.
func DefaultQuotas() map[text2sql.ItemKind]int {
	return map[text2sql.ItemKind]int{
		text2sql.ItemTable:   5,
		text2sql.ItemColumn:  5,
		text2sql.ItemRule:    3,
		text2sql.ItemExample: 3,
		text2sql.ItemValue:   3,
	}
}

// Reranker reorders retrieval candidates, e.g. with a cross-encoder that
// reads the question and each item together. There is no default.
type Reranker interface {
	// Rerank returns the items to keep, best first. It should set each
	// item's Score to its relevance (higher is better) so that Score and
	// order agree; the retriever keeps the returned order and Score, and
	// ignores changes to other fields, items it did not pass, duplicates,
	// and items beyond a kind's quota. Items it drops are not shown. An
	// error fails the retrieval.
	Rerank(ctx context.Context, question string, items []text2sql.Item) ([]text2sql.Item, error)
}

// ReportingReranker is a Reranker that also reports what it did, e.g. its
// model calls and whether it fell back to the order it was given. The
// retriever calls RerankReport instead of Rerank when the Reranker has
// it, treats the items as it treats Rerank's, and puts the report in
// Retrieval.Rerank (the pipeline adds its calls to the trace). The tables
// the report selects (RerankReport.Tables) that are among the candidates
// are shown first, in its order, up to MaxTables, before the tables
// chosen from the ranking. The report may be nil. Rerankers report per
// call, so one reranker can serve concurrent retrievals.
type ReportingReranker interface {
	Reranker
	RerankReport(ctx context.Context, question string, items []text2sql.Item) ([]text2sql.Item, *text2sql.RerankReport, error)
}

// HybridOptions configure NewHybrid. Zero values mean the documented
// defaults; only Schema is required.
type HybridOptions struct {
	// Schema is the database's schema model, the source of truth for the
	// tables shown. Required.
	Schema *schema.Database
	// Knowledge is the knowledge base; nil means an empty one (every table
	// still gets a document built from the schema).
	Knowledge *knowledge.Base
	// Embedder embeds documents and queries; nil means the offline
	// feature-hashing embedder (embed/hashing, 512 dimensions).
	Embedder text2sql.Embedder
	// Store holds the vectors; nil means a new MemoryStore. Use
	// OpenChromem for a persistent index that survives restarts.
	Store Store
	// Quotas is the number of items kept per kind. A kind missing from the
	// map gets its DefaultQuotas value; 0 means that kind is not retrieved.
	// A negative quota or an unknown kind is an error.
	Quotas map[text2sql.ItemKind]int
	// RRFK is the k of Reciprocal Rank Fusion; 0 means DefaultRRFK (60).
	// Must not be negative.
	RRFK float64
	// LowConfidence is the cosine-similarity threshold under which the best
	// match flags the context as low confidence; 0 means
	// DefaultLowConfidence, a negative value never flags. It depends on the
	// embedder: measure it for another one.
	LowConfidence float64
	// ExampleReuse is the cosine similarity of the question's and a verified
	// example's vectors from which the example is offered as
	// Retrieval.Match; 0 means DefaultExampleReuse (0.95), a negative value
	// turns similarity matching off. An example whose normalised question
	// (lower case, punctuation and spacing folded) equals the question's
	// always matches.
	ExampleReuse float64
	// MaxTables caps the tables shown (retrieved, linked via examples and
	// on join paths) when the whole schema does not fit Budget; required
	// tables are always shown on top, and so is the rest of the first
	// table's namespace (schema, database) when it has at most MaxTables
	// tables and fits Budget beside those chosen. 0 means
	// DefaultMaxTables; must not be negative.
	MaxTables int
	// Budget is the size, in estimated tokens (about four characters
	// each), of the DDL the context may show. When the DDL of every table
	// fits, every table is shown (ReasonWholeSchema for those nothing
	// retrieved pointed to); otherwise tables are chosen as MaxTables says
	// while their DDL fits, the first one always. 0 means DefaultBudget; a
	// negative budget never shows the whole schema and does not bound the
	// chosen tables' DDL.
	Budget int
	// InferJoins adds the join keys column names imply to the ones the
	// schema declares (schema.InferForeignKeys): they link tables on join
	// paths and as bridges as declared keys do (the neighbour preference
	// keeps to declared keys), and the DDL shows them as "-- inferred
	// join, not declared" comments. For schemas that declare
	// few keys; on Spider's and BIRD's schemas stripped of theirs, the
	// inference finds 58–60% of the declared one-column keys at 89–90%
	// precision.
	InferJoins bool
	// WideColumns is the column count above which a table chosen by
	// retrieval is shown with only its keys (primary and foreign, both
	// ways), the columns whose names share a word with the question, the
	// columns of matched values and of retrieved column notes, and at
	// least its first minWideColumns columns (TableRef.Columns lists
	// them; the DDL says how many are left out). Never when the whole
	// schema is shown. 0 means DefaultWideColumns; negative: never.
	WideColumns int
	// Catalog says the schema's namespaces are separate databases (an
	// executor/catalog union): the whole-schema rule then applies to each
	// database, not to their union. The best table's database is shown
	// whole when it fits Budget; a table of another database only when
	// the question names it (its name or a column's) and the best table's
	// database has no table of that name.
	Catalog bool
	// Reranker, when set, reorders the fused candidates before quotas; a
	// ReportingReranker also reports into Retrieval.Rerank.
	Reranker Reranker
	// BatchSize is the number of documents per EmbedDocuments call when the
	// index is rebuilt; 0 means DefaultBatchSize (64).
	BatchSize int
	// Values, when set, is the value index of the database's cell values
	// (valueindex.Build): the values the question names link their
	// tables (ReasonValue, at most MaxValueTables from whole-value
	// matches, ahead of the other candidates but never pushing out a
	// table the question names) and are shown as items of kind ItemValue
	// next to their columns. Its table names must be the schema's (the
	// prefix of valueindex.Builder.Read for a catalog of several
	// databases); hits on names the schema lacks are ignored. Nil means
	// no value matching.
	Values *valueindex.Index
	// ValueMatch tunes the matching of Values; the zero value means
	// valueindex's defaults.
	ValueMatch valueindex.MatchOptions
	// CacheDir, when set, is a directory (e.g. a ChromemStore's) where
	// NewHybrid keeps what it derives from Schema, Knowledge,
	// InferJoins and the embedder, in DerivedFile: the documents, the
	// BM25 indexes, the inferred join keys and each table's DDL size,
	// keyed by those inputs and the running program. A later NewHybrid
	// with the same inputs reads them instead of deriving them (at
	// 10,000 tables most of a second of CPU). "" derives them each time.
	CacheDir string
}

// MaxValueTables is the most tables the value matches of one question
// link; only matches of a whole value (valueindex.Hit.Whole: exact or
// within edit distance, not a word inside a longer value) link. Chosen by
// a sweep on the 972 Spider dev questions whose database is present
// (TestSpiderValueLinking in values_test.go; 1, 2 or 3 tables × linking
// from every match, from scores of 0.9, from exact ones or from whole
// ones × MaxTables 5, 3, 2 per database and all databases as one
// schema): one table from a whole match raises strict recall (per
// database at 5 tables .9928 → .9959, all databases as one schema .9547
// → .9702 at 5 tables, .9794 → .9897 with the default budget) and lowers
// it nowhere; linking two or three tables, or from partial matches,
// loses up to 4 questions at 3 tables, pushing out foreign-key
// neighbours. Partial matches are still shown next to their column when
// their table is shown.
const MaxValueTables = 1

// Stats describes a Hybrid retriever's index.
type Stats struct {
	Documents int                       // documents indexed
	Kinds     map[text2sql.ItemKind]int // documents per kind
	// Fingerprint is the hex SHA-256 of the knowledge fingerprint, the
	// schema (tables, columns, keys), the documents, the embedder's name
	// and dimension, and IndexLayout.
	Fingerprint string
	Rebuilt     bool          // whether NewHybrid embedded the documents (false: the store's index was reused)
	Embedded    int           // documents embedded by NewHybrid
	BuildTime   time.Duration // wall time of NewHybrid
	Embedder    string        // the embedder's Name
	Dimension   int           // the embedder's Dimension
	Stored      int           // records in the store (zero vectors are not stored)
	Values      int           // values of HybridOptions.Values; 0 without a value index
	// LockWait is how long NewHybrid waited for the store's build lock
	// (a BuildLocker such as ChromemStore, when the index had to be
	// built): the time another process's build took, or ~0.
	LockWait time.Duration
}

// Hybrid is the default Retriever. It is immutable after NewHybrid and safe
// for concurrent Retrieve calls (as long as the Store and Embedder are).
type Hybrid struct {
	db        *schema.Database
	emb       text2sql.Embedder
	store     Store
	rerank    Reranker
	quotas    map[text2sql.ItemKind]int
	rrfK      float64
	low       float64
	reuse     float64
	maxTables int
	budget    int                   // < 0: unbounded, whole schema never shown
	ddlTokens map[*schema.Table]int // estimated tokens of each table's DDL
	// wholeSchema: the DDL of every table fits the budget.
	wholeSchema bool
	// namespaces are the tables' namespaces (Table.Schema, lower-cased)
	// when there are several, else nil.
	namespaces  map[*schema.Table]string
	wideColumns int
	// catalog: the namespaces are separate databases (HybridOptions.Catalog).
	catalog bool
	// nsTables are the lower-case table names of each namespace.
	nsTables map[string]map[string]bool
	// neighbourLead is how many positions ahead a candidate table counts
	// when it is a foreign-key neighbour of a chosen one.
	neighbourLead int
	values        *valueindex.Index
	valueMatch    valueindex.MatchOptions

	docs     []knowledge.Document
	byID     map[string]int
	kindDocs map[text2sql.ItemKind]int // documents per kind
	docKinds []text2sql.ItemKind       // each document's kind
	bm       *bm25.Index               // over all documents
	nsBM     *bm25.Index               // one document per namespace (namespaceIndex); nil without namespaces
	nsNames  []string                  // the namespace of each nsBM document
	// docTables are the schema tables each document is about.
	docTables [][]*schema.Table
	examples  map[string]int                    // normalised question → doc index
	graph     map[*schema.Table][]*schema.Table // join paths and bridges: declared and inferred keys
	declared  map[*schema.Table][]*schema.Table // the neighbour preference: declared keys only
	byName    map[string][]*schema.Table        // nameToken of a table's name → tables
	stats     Stats
}

var _ text2sql.Retriever = (*Hybrid)(nil)

// NewHybrid builds a hybrid retriever: it chunks opts.Knowledge into
// documents with Knowledge.Documents(opts.Schema), computes the index
// fingerprint, and either reuses the store's vectors (when the store holds
// the same fingerprint: no embedding calls) or resets the store and embeds
// every document in batches. The documents, the BM25 index and the
// inferred join keys are read from opts.CacheDir when they were derived
// there from the same inputs, else derived and written there; the
// foreign-key graph is built in memory each time.
//
// When the store is a BuildLocker and the index must be built, NewHybrid
// holds its build lock while it reads the fingerprint again, builds and
// commits, so processes sharing a store build it once.
//
// Errors wrap text2sql.ErrInvalidConfig for bad options; embedder and store
// failures are returned as they come, wrapped with context (ErrIndexLocked
// when a ChromemStore's build lock stayed taken past its lock wait).
func NewHybrid(ctx context.Context, opts HybridOptions) (*Hybrid, error) {
	start := time.Now()
	h, err := newHybrid(opts)
	if err != nil {
		return nil, err
	}
	kb := opts.Knowledge
	if kb == nil {
		kb = &knowledge.Base{}
	}
	fp, err := h.derived(opts, kb)
	if err != nil {
		return nil, err
	}
	if err := h.index(); err != nil {
		return nil, err
	}
	h.layout(opts.Catalog)
	h.stats = Stats{
		Documents:   len(h.docs),
		Kinds:       maps.Clone(h.kindDocs),
		Fingerprint: fp,
		Embedder:    h.emb.Name(),
		Dimension:   h.emb.Dimension(),
		Values:      h.values.Len(),
	}
	if err := h.sync(ctx, fp, opts.BatchSize); err != nil {
		return nil, err
	}
	h.stats.BuildTime = time.Since(start)
	return h, nil
}

// derived sets the schema (with inferred keys), the DDL sizes, the
// documents and the BM25 indexes, read from opts.CacheDir when they were
// derived there from the same inputs, and returns the index fingerprint.
func (h *Hybrid) derived(opts HybridOptions, kb *knowledge.Base) (string, error) {
	var file, key string
	if opts.CacheDir != "" {
		if k, ok := derivedKey(opts.Schema, kb, opts.InferJoins, h.emb); ok {
			file, key = filepath.Join(opts.CacheDir, DerivedFile), k
		}
	}
	if file != "" {
		if d, ok := readDerived(file, key); ok && h.restore(opts.Schema, d) == nil {
			return d.Fingerprint, nil
		}
	}
	d, err := h.derive(opts.Schema, opts.InferJoins, kb)
	if err != nil {
		return "", err
	}
	if file != "" {
		d.Key = key
		_ = gobfile.Write(file, d) // a cache: the next call derives again
	}
	return d.Fingerprint, nil
}

// index builds the lookups of the documents and the tables: by ID, by
// kind, examples by question, the foreign-key graphs and table names.
func (h *Hybrid) index() error {
	h.byID = make(map[string]int, len(h.docs))
	h.kindDocs = map[text2sql.ItemKind]int{}
	h.docKinds = make([]text2sql.ItemKind, len(h.docs))
	h.examples = map[string]int{}
	for i, d := range h.docs {
		if _, dup := h.byID[d.ID]; dup || d.ID == "" {
			return fmt.Errorf("retriever: document %d has an empty or duplicate ID %q", i, d.ID)
		}
		h.byID[d.ID] = i
		h.kindDocs[d.Kind]++
		h.docKinds[i] = d.Kind
		if d.Kind == text2sql.ItemExample {
			if n := knowledge.NormalizeQuestion(d.Text); n != "" {
				if _, ok := h.examples[n]; !ok {
					h.examples[n] = i
				}
			}
		}
	}
	ix := h.db.Index()
	h.graph, h.declared = fkGraph(h.db, ix, true), fkGraph(h.db, ix, false)
	h.byName = map[string][]*schema.Table{}
	for _, t := range h.db.Tables {
		if tok := nameToken(t.Name); tok != "" {
			h.byName[tok] = append(h.byName[tok], t)
		}
	}
	return nil
}

// layout decides whether the whole schema fits the budget and records
// the tables of each namespace; catalog is HybridOptions.Catalog.
func (h *Hybrid) layout(catalog bool) {
	total := 0
	for _, n := range h.ddlTokens {
		total += n
	}
	h.wholeSchema = h.budget >= 0 && total <= h.budget
	if catalog && h.namespaces != nil {
		h.catalog, h.wholeSchema = true, false
	}
	if h.namespaces != nil {
		h.nsTables = map[string]map[string]bool{}
		for _, t := range h.db.Tables {
			ns := h.namespaces[t]
			if h.nsTables[ns] == nil {
				h.nsTables[ns] = map[string]bool{}
			}
			h.nsTables[ns][strings.ToLower(t.Name)] = true
		}
	}
}

// sync makes the store hold the vectors of the documents under
// fingerprint fp: it keeps them when the store already has fp, else
// (under the store's build lock when it is a BuildLocker, reading the
// fingerprint again) embeds every document and commits.
func (h *Hybrid) sync(ctx context.Context, fp string, batch int) error {
	have, err := h.store.Fingerprint(ctx)
	if err != nil {
		return fmt.Errorf("retriever: read index fingerprint: %w", err)
	}
	if l, ok := h.store.(BuildLocker); ok && have != fp {
		// Another process may be building the same index: wait for it,
		// and reuse what it committed.
		wait := time.Now()
		release, err := l.LockBuild(ctx)
		h.stats.LockWait = time.Since(wait)
		if err != nil {
			return fmt.Errorf("retriever: lock the index for building: %w", err)
		}
		defer release()
		if have, err = h.store.Fingerprint(ctx); err != nil {
			return fmt.Errorf("retriever: read index fingerprint: %w", err)
		}
	}
	if have != fp {
		if err := h.rebuild(ctx, batch); err != nil {
			return err
		}
		if err := h.store.SetFingerprint(ctx, fp); err != nil {
			return fmt.Errorf("retriever: write index fingerprint: %w", err)
		}
		h.stats.Rebuilt = true
		h.stats.Embedded = len(h.docs)
	}
	if h.stats.Stored, err = h.store.Count(ctx); err != nil {
		return fmt.Errorf("retriever: count index: %w", err)
	}
	return nil
}

// inParallel calls f(i) for each i in [0, n), split into GOMAXPROCS
// contiguous ranges run concurrently when n is at least parallelDocs. f
// must only write what belongs to i.
func inParallel(n int, f func(i int)) {
	parts := 1
	if n >= parallelDocs {
		parts = min(runtime.GOMAXPROCS(0), n/(parallelDocs/2))
	}
	var wg sync.WaitGroup
	for p := range parts {
		lo, hi := p*n/parts, (p+1)*n/parts
		wg.Go(func() {
			for i := lo; i < hi; i++ {
				f(i)
			}
		})
	}
	wg.Wait()
}

// parallelDocs is the fewest documents inParallel splits, each goroutine
// taking at least half of it: tokenizing a document takes microseconds
// (tens for a table of 20 columns), starting a goroutine about one.
const parallelDocs = 64

// newHybrid validates opts and fills in defaults.
func newHybrid(opts HybridOptions) (*Hybrid, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: retriever: "+format, append([]any{text2sql.ErrInvalidConfig}, args...)...)
	}
	if opts.Schema == nil {
		return nil, bad("HybridOptions.Schema is required")
	}
	for i, t := range opts.Schema.Tables {
		if t == nil {
			return nil, bad("schema table %d is nil", i)
		}
	}
	h := &Hybrid{db: opts.Schema, emb: opts.Embedder, store: opts.Store, rerank: opts.Reranker, neighbourLead: defaultNeighbourLead,
		values: opts.Values, valueMatch: opts.ValueMatch}
	if t := opts.ValueMatch.Threshold; t < 0 || t > 1 || math.IsNaN(t) || opts.ValueMatch.MaxHits < 0 {
		return nil, bad("ValueMatch: threshold %v must be in [0, 1] and MaxHits %d not negative", t, opts.ValueMatch.MaxHits)
	}
	if h.emb == nil {
		e, err := hashing.New(0)
		if err != nil {
			return nil, err
		}
		h.emb = e
	}
	if h.emb.Dimension() <= 0 {
		return nil, bad("embedder %q has dimension %d", h.emb.Name(), h.emb.Dimension())
	}
	if h.store == nil {
		h.store = NewMemoryStore()
	}
	h.quotas = DefaultQuotas()
	for k, n := range opts.Quotas {
		if _, ok := h.quotas[k]; !ok {
			return nil, bad("quota for unknown kind %q", k)
		}
		if n < 0 {
			return nil, bad("negative quota %d for kind %q", n, k)
		}
		h.quotas[k] = n
	}
	switch {
	case opts.RRFK == 0:
		h.rrfK = DefaultRRFK
	case opts.RRFK > 0 && !math.IsInf(opts.RRFK, 0):
		h.rrfK = opts.RRFK
	default:
		return nil, bad("RRFK %v must be positive", opts.RRFK)
	}
	if math.IsNaN(opts.LowConfidence) || math.IsNaN(opts.ExampleReuse) {
		return nil, bad("NaN threshold")
	}
	h.low = opts.LowConfidence
	if h.low == 0 {
		h.low = DefaultLowConfidence
	}
	h.reuse = opts.ExampleReuse
	if h.reuse == 0 {
		h.reuse = DefaultExampleReuse
	}
	switch {
	case opts.MaxTables == 0:
		h.maxTables = DefaultMaxTables
	case opts.MaxTables > 0:
		h.maxTables = opts.MaxTables
	default:
		return nil, bad("MaxTables %d is negative", opts.MaxTables)
	}
	if opts.BatchSize < 0 {
		return nil, bad("BatchSize %d is negative", opts.BatchSize)
	}
	h.budget = cmp.Or(opts.Budget, DefaultBudget)
	h.wideColumns = cmp.Or(opts.WideColumns, DefaultWideColumns)
	return h, nil
}

// rebuild resets the store and embeds every document.
func (h *Hybrid) rebuild(ctx context.Context, batch int) error {
	if batch == 0 {
		batch = DefaultBatchSize
	}
	if err := h.store.Reset(ctx); err != nil {
		return fmt.Errorf("retriever: reset index: %w", err)
	}
	dim := h.emb.Dimension()
	for lo := 0; lo < len(h.docs); lo += batch {
		if err := ctx.Err(); err != nil {
			return err
		}
		hi := min(lo+batch, len(h.docs))
		texts := make([]string, hi-lo)
		for i := range texts {
			texts[i] = h.docs[lo+i].Text
		}
		vecs, err := h.emb.EmbedDocuments(ctx, texts)
		if err != nil {
			return fmt.Errorf("retriever: embed documents %d–%d of %d: %w", lo+1, hi, len(h.docs), err)
		}
		if len(vecs) != len(texts) {
			return fmt.Errorf("retriever: embedder %s returned %d vectors for %d texts", h.emb.Name(), len(vecs), len(texts))
		}
		recs := make([]Record, len(texts))
		for i, v := range vecs {
			if len(v) != dim {
				return fmt.Errorf("retriever: embedder %s returned a vector of %d dimensions, want %d", h.emb.Name(), len(v), dim)
			}
			d := h.docs[lo+i]
			recs[i] = Record{ID: d.ID, Kind: d.Kind, Text: d.Text, Vector: v}
		}
		if err := h.store.Add(ctx, recs); err != nil {
			return fmt.Errorf("retriever: store documents: %w", err)
		}
	}
	return nil
}

// Documents returns a copy of the indexed documents, in index order.
func (h *Hybrid) Documents() []knowledge.Document { return slices.Clone(h.docs) }

// Stats returns what NewHybrid built.
func (h *Hybrid) Stats() Stats {
	s := h.stats
	s.Kinds = make(map[text2sql.ItemKind]int, len(h.stats.Kinds))
	for k, v := range h.stats.Kinds {
		s.Kinds[k] = v
	}
	return s
}

// candidate is one document in the fused ranking.
type candidate struct {
	doc     int
	score   float64
	sim     float64
	bmRank  int // 1-based; 0 when BM25 did not find it
	vecRank int // 1-based; 0 when the vector search did not return it
}

// With a reranker, each kind's quota of fused candidates is widened to
// rerankDepth times the quota and at least rerankExtra more, so the
// reranker can promote a candidate the fusion ranked just past the cut.
// The values are the common practice of reranking a few times what is
// shown; they are not tuned here (no reranker ships yet; issue 11 brings
// a cross-encoder and measures them).
const (
	rerankDepth = 3
	rerankExtra = 10
)

// Retrieve implements text2sql.Retriever.
//
// The query is the question plus req.Terms. It is ranked against the
// documents of every kind with a quota twice, by BM25 and by cosine
// similarity of the embedder's vectors (each kind's best documents, at
// least 50, merged into one ranking each), and the two rankings are fused
// with Reciprocal Rank Fusion. An optional Reranker reorders a deeper
// candidate list. Each kind keeps its quota, in rank order, as
// Retrieval.Items, each with its document's Note as Text (a table item
// whose note would only repeat its DDL is left out).
//
// Retrieval.Tables are chosen as chooseTables describes: the tables a
// ReportingReranker selected, then the tables of the items and of the
// fused table ranking, with HybridOptions.Values the table of the value
// the query names next ("value match"), foreign-key neighbours of chosen
// tables first, each followed by the bridge tables joining it to those
// already chosen ("join path"), tables read by retrieved examples' SQL
// ("via example <id>"), at most MaxTables while their DDL fits Budget, then
// every other table when the whole schema fits Budget ("whole schema"),
// then req.RequiredTables ("required"; names the schema lacks are
// ignored). Context.Schema is the
// DDL of those tables rendered from the schema model. The values the query
// names in the shown tables follow the items, one ItemValue item per
// column ("match:table.column", ProvenanceValue; see matchValues). LowConfidence is set
// when the best cosine similarity is under the threshold and no example
// matched the question's text exactly; Match is an example to reuse.
//
// An empty question is an error wrapping text2sql.ErrEmptyQuestion;
// embedder, store and reranker errors are returned wrapped, as is the
// context's error.
func (h *Hybrid) Retrieve(ctx context.Context, req text2sql.RetrieveRequest) (*text2sql.Retrieval, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	question := strings.TrimSpace(req.Question)
	if question == "" {
		return nil, fmt.Errorf("retriever: %w", text2sql.ErrEmptyQuestion)
	}
	query := question
	for _, t := range req.Terms {
		if t = strings.TrimSpace(t); t != "" {
			query += "\n" + t
		}
	}
	vec, err := h.emb.EmbedQuery(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("retriever: embed query: %w", err)
	}
	if len(vec) != h.emb.Dimension() {
		return nil, fmt.Errorf("retriever: embedder %s returned a query vector of %d dimensions, want %d", h.emb.Name(), len(vec), h.emb.Dimension())
	}
	qTokens := queryTokens(query)

	out := &text2sql.Retrieval{Question: req.Question, Dialect: h.db.Dialect}
	cands, exampleHits, best, err := h.rank(ctx, vec, qTokens)
	if err != nil {
		return nil, err
	}
	items, tableCands := h.quota(cands)
	if h.rerank != nil {
		if items, out.Rerank, err = h.applyRerank(ctx, question, items); err != nil {
			return nil, err
		}
	}
	out.Items = h.notes(items)
	out.BestSimilarity = best

	match, err := h.match(ctx, question, len(req.Terms) == 0, exampleHits)
	if err != nil {
		return nil, err
	}
	out.Match = match
	out.LowConfidence = h.low > 0 && best < h.low && (match == nil || match.Similarity < 1)
	h.show(out, items, tableCands, req.RequiredTables, query, qTokens)
	return out, nil
}

// rank ranks the documents of every kind with a quota by BM25 and by
// the similarity of their vectors to vec (each kind's best documents,
// merged into one ranking each) and fuses the two rankings. It returns
// the fused candidates, the vector hits of the examples and the best
// similarity.
func (h *Hybrid) rank(ctx context.Context, vec []float32, qTokens []string) (cands []candidate, exampleHits []Hit, best float64, err error) {
	var active []text2sql.ItemKind
	pool := candidatePool
	for _, kind := range kindOrder {
		if q := h.quotas[kind]; q > 0 && h.kindDocs[kind] > 0 {
			active = append(active, kind)
			pool = max(pool, 4*q)
		}
	}
	// Both rankings cover all documents of the active kinds: each kind's
	// best pool documents, merged by score, so a kind with few documents
	// does not rank them first by default.
	var vec2 []Hit
	var bm []bm25.Hit
	for _, kind := range active {
		hits, err := h.store.Query(ctx, vec, pool, kind)
		if err != nil {
			return nil, nil, 0, fmt.Errorf("retriever: vector search (%s): %w", kind, err)
		}
		if kind == text2sql.ItemExample {
			exampleHits = hits
		}
		vec2 = append(vec2, hits...)
		bm = append(bm, h.bm.SearchFilter(qTokens, pool, h.ofKind(kind))...)
	}
	slices.SortStableFunc(vec2, func(a, b Hit) int { return cmp.Compare(b.Similarity, a.Similarity) })
	slices.SortStableFunc(bm, func(a, b bm25.Hit) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.Doc, b.Doc)
	})
	if len(vec2) > 0 {
		best = vec2[0].Similarity
	}
	return h.fuse(bm, vec2), exampleHits, best, nil
}

// quota keeps each kind's best candidates, in fused order, as items (a
// reranker sees a deeper list and decides the order itself), and
// returns them with the table candidates of the whole ranking.
func (h *Hybrid) quota(cands []candidate) (items []text2sql.Item, tableCands []candidate) {
	used := map[text2sql.ItemKind]int{}
	for _, c := range cands {
		kind := h.docs[c.doc].Kind
		if kind == text2sql.ItemTable {
			tableCands = append(tableCands, c)
		}
		limit := h.quotas[kind]
		if h.rerank != nil && limit > 0 {
			limit = max(rerankDepth*limit, limit+rerankExtra)
		}
		if used[kind] < limit {
			used[kind]++
			items = append(items, h.item(c))
		}
	}
	return items, tableCands
}

// show sets out's tables (chooseTables), the value items of the shown
// tables, and the DDL of the shown tables, wide ones cut to the columns
// the query touches.
func (h *Hybrid) show(out *text2sql.Retrieval, items []text2sql.Item, tableCands []candidate, required []string, query string, qTokens []string) {
	var selected []string
	if out.Rerank != nil {
		selected = out.Rerank.Tables
	}
	valueItems, valueTables := h.matchValues(query)
	tables := h.chooseTables(items, tableCands, selected, required, h.named(qTokens), valueTables, h.namespaceScores(qTokens))
	out.Tables = make([]text2sql.TableRef, len(tables))
	shown := make([]*schema.Table, len(tables))
	isShown := make(map[string]bool, len(tables))
	for i, t := range tables {
		out.Tables[i] = t.ref
		shown[i] = t.table
		isShown[t.ref.Name] = true
	}
	for _, it := range valueItems {
		if isShown[it.Table] {
			out.Items = append(out.Items, it)
		}
	}
	if !h.wholeSchema && h.wideColumns > 0 {
		for i, t := range shown {
			if cut := h.cut(t, query, valueItems, out.Items); cut != nil {
				shown[i] = cut
				for _, c := range cut.Columns {
					out.Tables[i].Columns = append(out.Tables[i].Columns, c.Name)
				}
			}
		}
	}
	out.Schema = h.db.DDL(shown)
	if len(shown) > 0 && shown[0].Dialect != "" {
		// A catalog of several dialects: the question is routed to the
		// best table's database, and is written in its dialect.
		out.Dialect = shown[0].Dialect
	}
}

// cut returns a copy of t with only the columns a question touches, or
// nil when t has no more than wideColumns columns (HybridOptions.WideColumns).
func (h *Hybrid) cut(t *schema.Table, query string, values, items []text2sql.Item) *schema.Table {
	if len(t.Columns) <= h.wideColumns {
		return nil
	}
	keep := map[string]bool{}
	for _, c := range t.PrimaryKey {
		keep[strings.ToLower(c)] = true
	}
	for _, fk := range t.ForeignKeys {
		for _, c := range fk.Columns {
			keep[strings.ToLower(c)] = true
		}
	}
	name := t.QualifiedName()
	for _, o := range h.db.Tables {
		for _, fk := range o.ForeignKeys {
			// A key without RefSchema references its own schema, as in fkGraph.
			if strings.EqualFold(fk.RefTable, t.Name) && strings.EqualFold(cmp.Or(fk.RefSchema, o.Schema), t.Schema) {
				for _, c := range fk.RefColumns {
					keep[strings.ToLower(c)] = true
				}
			}
		}
	}
	for _, it := range append(slices.Clip(values), items...) {
		if it.Column != "" && strings.EqualFold(it.Table, name) {
			keep[strings.ToLower(it.Column)] = true
		}
	}
	words := map[string]bool{}
	for _, w := range bm25.Tokenize(query) {
		words[w] = true
	}
	ct := *t
	ct.Columns = nil
	for i, c := range t.Columns {
		touched := keep[strings.ToLower(c.Name)] || i < minWideColumns
		for _, p := range bm25.Parts(c.Name) {
			touched = touched || words[p]
		}
		if touched {
			ct.Columns = append(ct.Columns, c)
		}
	}
	if len(ct.Columns) == len(t.Columns) {
		return nil
	}
	note := fmt.Sprintf("%d of its %d columns shown: the keys and those the question touches", len(ct.Columns), len(t.Columns))
	if ct.Comment != "" {
		note = ct.Comment + " (" + note + ")"
	}
	ct.Comment = note
	return &ct
}

// ofKind returns the BM25 filter of the documents of kind: nil (no
// filter) when every document is of that kind, as a catalog without a
// knowledge base's are tables; else a test of the documents' kinds, kept
// in one small array rather than read from the documents.
func (h *Hybrid) ofKind(kind text2sql.ItemKind) func(doc int) bool {
	if h.kindDocs[kind] == len(h.docs) {
		return nil
	}
	return func(d int) bool { return h.docKinds[d] == kind }
}

// matchValues matches the query against the value index: one item of
// kind ItemValue per column with matched values (ID "match:table.column",
// Text "Values of table.column matching the question: 'v1', 'v2'.", the
// values quoted by knowledge.Literal), best column first, and the tables
// of the whole-value matches (Hit.Whole), best first, at most
// MaxValueTables. An item's Score is 1/(RRFK + rank) of its column among
// the matched columns, as if the value index were one more ranking of the
// fusion. Matches on tables or columns the schema lacks are left out.
func (h *Hybrid) matchValues(query string) ([]text2sql.Item, []*schema.Table) {
	if h.values == nil {
		return nil, nil
	}
	type col struct {
		table *schema.Table
		name  string
		vals  []string
		whole bool
	}
	var cols []*col
	byKey := map[string]*col{}
	for _, hit := range h.values.Match(query, h.valueMatch) {
		t := h.db.Lookup(hit.Table)
		if t == nil {
			continue
		}
		c := t.Column(hit.Column)
		if c == nil {
			continue
		}
		key := t.QualifiedName() + "." + c.Name
		if byKey[key] == nil {
			byKey[key] = &col{table: t, name: c.Name}
			cols = append(cols, byKey[key])
		}
		byKey[key].vals = append(byKey[key].vals, hit.Value)
		byKey[key].whole = byKey[key].whole || hit.Whole
	}
	var (
		items  []text2sql.Item
		tables []*schema.Table
	)
	for i, c := range cols {
		tname := c.table.QualifiedName()
		var b strings.Builder
		b.WriteString("Values of " + tname + "." + c.name + " matching the question: ")
		for j, v := range c.vals {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString(knowledge.Literal(v))
		}
		b.WriteString(".")
		items = append(items, text2sql.Item{
			ID: "match:" + tname + "." + c.name, Kind: text2sql.ItemValue, Text: b.String(), Table: tname, Column: c.name,
			Score: 1 / (h.rrfK + float64(i+1)), Provenance: text2sql.ProvenanceValue,
		})
		if len(tables) < MaxValueTables && c.whole && !slices.Contains(tables, c.table) {
			tables = append(tables, c.table)
		}
	}
	return items, tables
}

// fuse merges the BM25 and vector rankings with Reciprocal Rank Fusion
// (Cormack, Clarke and Büttcher, SIGIR 2009): score = Σ 1/(k + rank), rank
// 1-based, over the rankings that found the document. Ties (common: ranks
// 1 and 2 against 2 and 1) go to the better BM25 rank, the more precise
// evidence for schema names, then to the higher similarity, then to the
// earlier document.
func (h *Hybrid) fuse(bm []bm25.Hit, vec []Hit) []candidate {
	byDoc := map[int]*candidate{}
	get := func(doc int) *candidate {
		c := byDoc[doc]
		if c == nil {
			c = &candidate{doc: doc}
			byDoc[doc] = c
		}
		return c
	}
	for r, hit := range bm {
		c := get(hit.Doc)
		c.bmRank = r + 1
		c.score += 1 / (h.rrfK + float64(r+1))
	}
	for r, hit := range vec {
		doc, ok := h.byID[hit.ID]
		if !ok {
			continue // a stale record; cannot happen with a matching fingerprint
		}
		c := get(doc)
		c.vecRank = r + 1
		c.sim = hit.Similarity
		c.score += 1 / (h.rrfK + float64(r+1))
	}
	out := make([]candidate, 0, len(byDoc))
	for _, c := range byDoc {
		out = append(out, *c)
	}
	slices.SortFunc(out, func(a, b candidate) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		if c := cmp.Compare(bmOrder(a.bmRank), bmOrder(b.bmRank)); c != 0 {
			return c
		}
		if c := cmp.Compare(b.sim, a.sim); c != 0 {
			return c
		}
		return cmp.Compare(a.doc, b.doc)
	})
	return out
}

// bmOrder orders BM25 ranks with "not found" (0) last.
func bmOrder(r int) int {
	if r == 0 {
		return math.MaxInt
	}
	return r
}

func (h *Hybrid) item(c candidate) text2sql.Item {
	d := h.docs[c.doc]
	prov := text2sql.ProvenanceBoth
	switch {
	case c.vecRank == 0:
		prov = text2sql.ProvenanceBM25
	case c.bmRank == 0:
		prov = text2sql.ProvenanceVector
	}
	return text2sql.Item{
		ID: d.ID, Kind: d.Kind, Text: d.Text, Table: d.Table, Column: d.Column, SQL: d.SQL,
		Score: c.score, Similarity: c.sim, Provenance: prov,
	}
}

// namespaceIndex returns a BM25 index with one document per namespace
// (ns: each table's, nil when the schema has one) holding the tokens of
// every document about its tables, and each document's namespace; nil
// without namespaces.
func namespaceIndex(ns map[*schema.Table]string, docTables [][]*schema.Table, tokens [][]string) (*bm25.Index, []string) {
	if ns == nil {
		return nil, nil
	}
	at := map[string]int{}
	var docs [][]string
	var names []string
	for i, ts := range docTables {
		if len(ts) == 0 {
			continue
		}
		n := ns[ts[0]]
		j, ok := at[n]
		if !ok {
			j = len(docs)
			at[n] = j
			docs = append(docs, nil)
			names = append(names, n)
		}
		docs[j] = append(docs[j], tokens[i]...)
	}
	return bm25.NewTokens(docs, bm25.DefaultParams()), names
}

// namespaceScores returns the BM25 score of the question's tokens against
// each namespace's document (namespaceIndex); nil without namespaces.
func (h *Hybrid) namespaceScores(qTokens []string) map[string]float64 {
	if h.nsBM == nil {
		return nil
	}
	out := map[string]float64{}
	for _, hit := range h.nsBM.SearchTerms(qTokens, h.nsBM.Len()) {
		out[h.nsNames[hit.Doc]] = hit.Score
	}
	return out
}

// named returns the tables the query names: whose name token (its
// stemmed parts joined, "singer_in_concert" → one token) is among the
// query's, so "singers" names singer.
func (h *Hybrid) named(qTokens []string) map[*schema.Table]bool {
	out := map[*schema.Table]bool{}
	for _, tok := range qTokens {
		for _, t := range h.byName[tok] {
			out[t] = true
		}
	}
	return out
}

// notes returns the items as a prompt shows them: each with its
// document's Note as Text, without the table items whose note would only
// repeat the table's DDL.
func (h *Hybrid) notes(items []text2sql.Item) []text2sql.Item {
	out := items[:0:0]
	for _, it := range items {
		if i, ok := h.byID[it.ID]; ok {
			if it.Text = h.docs[i].Note; it.Text == "" {
				continue
			}
		}
		out = append(out, it)
	}
	return out
}

// applyRerank runs the reranker and keeps each kind's quota in its order.
// Items keep their own fields but the reranker's Score. The report is a
// ReportingReranker's, else nil.
func (h *Hybrid) applyRerank(ctx context.Context, question string, items []text2sql.Item) ([]text2sql.Item, *text2sql.RerankReport, error) {
	var (
		ranked []text2sql.Item
		report *text2sql.RerankReport
		err    error
	)
	if rr, ok := h.rerank.(ReportingReranker); ok {
		ranked, report, err = rr.RerankReport(ctx, question, items)
	} else {
		ranked, err = h.rerank.Rerank(ctx, question, items)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("retriever: rerank: %w", err)
	}
	known := make(map[string]text2sql.Item, len(items))
	for _, it := range items {
		known[it.ID] = it
	}
	used := map[text2sql.ItemKind]int{}
	seen := map[string]bool{}
	var out []text2sql.Item
	for _, r := range ranked {
		it, ok := known[r.ID]
		if !ok || seen[r.ID] || used[it.Kind] >= h.quotas[it.Kind] {
			continue // unknown, duplicate, or over quota
		}
		seen[r.ID] = true
		used[it.Kind]++
		it.Score = r.Score // the reranker decides order and score, nothing else
		out = append(out, it)
	}
	return out, report, nil
}

// match finds a verified example to reuse: one whose normalised question
// equals the question's (similarity 1), else the most similar example when
// its cosine similarity reaches the ExampleReuse threshold.
func (h *Hybrid) match(ctx context.Context, question string, plain bool, hits []Hit) (*text2sql.ExampleMatch, error) {
	if i, ok := h.examples[knowledge.NormalizeQuestion(question)]; ok {
		return h.exampleMatch(i, 1), nil
	}
	if h.reuse < 0 || h.kindDocs[text2sql.ItemExample] == 0 {
		return nil, nil
	}
	if !plain || h.quotas[text2sql.ItemExample] == 0 {
		// The query vector carried extra terms (or examples were not
		// searched): compare the question alone.
		v, err := h.emb.EmbedQuery(ctx, question)
		if err != nil {
			return nil, fmt.Errorf("retriever: embed question: %w", err)
		}
		if hits, err = h.store.Query(ctx, v, 1, text2sql.ItemExample); err != nil {
			return nil, fmt.Errorf("retriever: vector search (example): %w", err)
		}
	}
	if len(hits) == 0 || hits[0].Similarity < h.reuse {
		return nil, nil
	}
	i, ok := h.byID[hits[0].ID]
	if !ok {
		return nil, nil
	}
	return h.exampleMatch(i, hits[0].Similarity), nil
}

func (h *Hybrid) exampleMatch(i int, sim float64) *text2sql.ExampleMatch {
	d := h.docs[i]
	return &text2sql.ExampleMatch{ID: strings.TrimPrefix(d.ID, "example:"), Question: d.Text, SQL: d.SQL, Similarity: sim}
}

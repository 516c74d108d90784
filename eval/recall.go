package eval

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/generator"
	"github.com/text2sql-go/text2sql/internal/birdschema"
	"github.com/text2sql-go/text2sql/internal/sqlparse"
	"github.com/text2sql-go/text2sql/retriever"
	"github.com/text2sql-go/text2sql/schema"
)

// GoldRefs are the schema tables and columns a query reads.
type GoldRefs struct {
	// Tables are the schema tables of the FROM and JOIN clauses at any
	// depth (QualifiedName), in order of first appearance; common table
	// expressions are not tables.
	Tables []string `json:"tables"`
	// Columns are the column references, each once.
	Columns []ColumnRef `json:"columns"`
	// Unresolved are table names of the query that match no schema table.
	Unresolved []string `json:"unresolved,omitempty"`
}

// ColumnRef is a column a query reads. Tables has one table when the
// reference is qualified (alias.column, resolved through the query's
// aliases) or fits one of the query's tables; several when a bare name
// fits several of them (then it counts as shown when any of them is).
type ColumnRef struct {
	Column string   `json:"column"` // the column's name as in the schema
	Tables []string `json:"tables"` // the candidate tables (QualifiedName)
}

// ExtractGoldRefs returns the tables and columns sql reads in db. Tables
// are the FROM and JOIN items of the query's syntax tree at any depth
// (internal/sqlparse, in db's dialect; SQLite's without db), looked up in
// db (schema.Database.Lookup). Columns are the column references of the
// tree (sqlparse.ColumnRefs) that name a column of one of those tables: alias.col and
// table.col resolve through the qualifier; a bare name resolves to the
// query's tables that have such a column. "*" is not counted as a column.
// It never fails: what the parser cannot place is not counted.
func ExtractGoldRefs(db *schema.Database, sql string) GoldRefs {
	var refs GoldRefs
	byName := map[string]*schema.Table{} // alias or name (lower) → table
	var tables []*schema.Table
	seen := map[*schema.Table]bool{}
	d := text2sql.DialectSQLite
	if db != nil && db.Dialect != "" {
		d = db.Dialect
	}
	tree := sqlparse.Parse(sql, d)
	for _, r := range sqlparse.Tables(tree) {
		name := r.QualifiedName()
		var t *schema.Table
		if db != nil {
			t = db.Lookup(name)
		}
		if t == nil {
			refs.Unresolved = append(refs.Unresolved, name)
			continue
		}
		if !seen[t] {
			seen[t] = true
			tables = append(tables, t)
			refs.Tables = append(refs.Tables, t.QualifiedName())
		}
		byName[strings.ToLower(r.Name)] = t
		if r.Alias != "" {
			byName[strings.ToLower(r.Alias)] = t
		}
	}
	colSeen := map[string]bool{}
	add := func(col string, ts []*schema.Table) {
		if len(ts) == 0 {
			return
		}
		ref := ColumnRef{}
		for _, t := range ts {
			c := t.Column(col)
			if ref.Column == "" {
				ref.Column = c.Name
			}
			ref.Tables = append(ref.Tables, t.QualifiedName())
		}
		k := strings.ToLower(strings.Join(ref.Tables, ",") + "." + ref.Column)
		if !colSeen[k] {
			colSeen[k] = true
			refs.Columns = append(refs.Columns, ref)
		}
	}
	for _, ref := range sqlparse.ColumnRefs(tree) {
		switch len(ref.Parts) {
		case 1:
			name := ref.Parts[0].Name
			var ts []*schema.Table
			for _, t := range tables {
				if t.Column(name) != nil {
					ts = append(ts, t)
				}
			}
			add(name, ts)
		case 2:
			col := ref.Parts[1].Name
			if t := byName[strings.ToLower(ref.Parts[0].Name)]; t != nil && t.Column(col) != nil {
				add(col, []*schema.Table{t})
			}
		}
	}
	return refs
}

// RecallRecord is one question's retrieval recall.
type RecallRecord struct {
	ID         string `json:"id,omitempty"`         // Question.ID (empty inside a Record)
	DB         string `json:"db,omitempty"`         // the database (empty inside a Record)
	Difficulty string `json:"difficulty,omitempty"` // Question.Difficulty (empty inside a Record)
	// GoldTables are the tables the gold SQL reads; Shown the tables the
	// retriever showed (Retrieval.Tables); Missing the gold tables not
	// shown.
	GoldTables []string `json:"gold_tables"`
	Shown      []string `json:"shown"`             // Retrieval.Tables names, in rank order
	Missing    []string `json:"missing,omitempty"` // gold tables not shown
	// Strict: every gold table was shown.
	Strict bool `json:"strict"`
	// GoldColumns counts the gold column references; ColumnsRecalled
	// those whose table was shown (the prompt shows full tables).
	GoldColumns     int `json:"gold_columns"`
	ColumnsRecalled int `json:"columns_recalled"` // gold columns whose table was shown
	// ColumnsShown counts the columns of the shown tables.
	ColumnsShown int      `json:"columns_shown"`
	Unresolved   []string `json:"unresolved,omitempty"` // gold table names that match no schema table
	// PromptTokens is the estimated size, in tokens (generator.EstimateTokens),
	// of the user message the default generator builds from the retrieval;
	// FullSchemaTokens that of the message it builds from the whole schema's
	// DDL and no notes, the "paste the schema" baseline. Both are 0 when
	// Recall did not measure them (RecallOf alone does not).
	PromptTokens     int `json:"prompt_tokens,omitempty"`
	FullSchemaTokens int `json:"full_schema_tokens,omitempty"`
}

// RecallOf compares the tables a retriever showed with the gold query's
// references.
func RecallOf(db *schema.Database, goldSQL string, c *text2sql.Retrieval) RecallRecord {
	refs := ExtractGoldRefs(db, goldSQL)
	rec := RecallRecord{GoldTables: nonNilStrings(refs.Tables), Shown: []string{}, Unresolved: refs.Unresolved,
		GoldColumns: len(refs.Columns)}
	shown := map[string]bool{}
	// cut are the shown columns of tables shown cut (TableRef.Columns).
	cut := map[string]map[string]bool{}
	if c != nil {
		for _, t := range c.Tables {
			rec.Shown = append(rec.Shown, t.Name)
			shown[strings.ToLower(t.Name)] = true
			if t.Columns != nil {
				cols := map[string]bool{}
				for _, col := range t.Columns {
					cols[strings.ToLower(col)] = true
				}
				cut[strings.ToLower(t.Name)] = cols
				rec.ColumnsShown += len(t.Columns)
				continue
			}
			if db != nil {
				if st := db.Lookup(t.Name); st != nil {
					rec.ColumnsShown += len(st.Columns)
				}
			}
		}
	}
	rec.Strict = len(refs.Unresolved) == 0
	for _, t := range refs.Tables {
		if !shown[strings.ToLower(t)] {
			rec.Missing = append(rec.Missing, t)
			rec.Strict = false
		}
	}
	for _, col := range refs.Columns {
		for _, t := range col.Tables {
			k := strings.ToLower(t)
			if shown[k] && (cut[k] == nil || cut[k][strings.ToLower(col.Column)]) {
				rec.ColumnsRecalled++
				break
			}
		}
	}
	return rec
}

// named returns m[name], adding mk(name) to m first when it has none.
func named[T any](m map[string]*T, name string, mk func(name string) *T) *T {
	v := m[name]
	if v == nil {
		v = mk(name)
		m[name] = v
	}
	return v
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// RecallStats aggregate recall over a set of questions. Fractions are in
// [0, 1] and nil over no question.
type RecallStats struct {
	Name      string `json:"name,omitempty"` // the difficulty or database; empty overall
	Questions int    `json:"questions"`      // questions measured
	// StrictTableRecall is the share of questions whose every gold table
	// was shown (Strict is their number).
	Strict            int      `json:"strict"`
	StrictTableRecall *float64 `json:"strict_table_recall"` // Strict / Questions
	// TableRecall is gold tables shown / gold tables, over all questions.
	TableRecall *float64 `json:"table_recall"`
	// ColumnRecall is gold columns whose table was shown / gold columns.
	ColumnRecall     *float64 `json:"column_recall"`
	MeanTablesShown  float64  `json:"mean_tables_shown"`  // tables shown per question
	MeanColumnsShown float64  `json:"mean_columns_shown"` // columns of the shown tables per question
	MeanGoldTables   float64  `json:"mean_gold_tables"`   // gold tables per question
	MeanGoldColumns  float64  `json:"mean_gold_columns"`  // gold column references per question
	// MeanPromptTokens and MeanFullSchemaTokens average the records'
	// PromptTokens and FullSchemaTokens; PromptRatio is their quotient
	// (nil when not measured): under 1, retrieval made the prompt smaller
	// than pasting the whole schema.
	MeanPromptTokens     float64  `json:"mean_prompt_tokens"`
	MeanFullSchemaTokens float64  `json:"mean_full_schema_tokens"`
	PromptRatio          *float64 `json:"prompt_ratio"`

	goldTables, goldShown, goldCols, colsShown, tablesShown, columnsShown, promptTokens, fullTokens int
}

func (s *RecallStats) add(r *RecallRecord) {
	s.Questions++
	if r.Strict {
		s.Strict++
	}
	s.goldTables += len(r.GoldTables)
	s.goldShown += len(r.GoldTables) - len(r.Missing)
	s.goldCols += r.GoldColumns
	s.colsShown += r.ColumnsRecalled
	s.tablesShown += len(r.Shown)
	s.columnsShown += r.ColumnsShown
	s.promptTokens += r.PromptTokens
	s.fullTokens += r.FullSchemaTokens
}

func (s *RecallStats) finish() {
	s.StrictTableRecall = frac(s.Strict, s.Questions)
	s.TableRecall = frac(s.goldShown, s.goldTables)
	s.ColumnRecall = frac(s.colsShown, s.goldCols)
	if s.Questions > 0 {
		n := float64(s.Questions)
		s.MeanTablesShown = float64(s.tablesShown) / n
		s.MeanColumnsShown = float64(s.columnsShown) / n
		s.MeanGoldTables = float64(s.goldTables) / n
		s.MeanGoldColumns = float64(s.goldCols) / n
		s.MeanPromptTokens = float64(s.promptTokens) / n
		s.MeanFullSchemaTokens = float64(s.fullTokens) / n
	}
	if s.fullTokens > 0 {
		r := float64(s.promptTokens) / float64(s.fullTokens)
		s.PromptRatio = &r
	}
}

// RecallReport is the retrieval recall of a dataset, overall, by
// difficulty and by database.
type RecallReport struct {
	Dataset      string        `json:"dataset"`       // Dataset.Name
	Overall      RecallStats   `json:"overall"`       // every question measured
	ByDifficulty []RecallStats `json:"by_difficulty"` // by Question.Difficulty
	ByDatabase   []RecallStats `json:"by_database"`   // by database ID
	// Excluded counts questions not measured (database missing and not
	// materialised); Exclusions says why.
	Excluded   int         `json:"excluded"`
	Exclusions []Exclusion `json:"exclusions,omitempty"` // by database and reason
	// Materialized lists the databases whose schema came from tables.json
	// (empty databases built by internal/birdschema).
	Materialized []string `json:"materialized,omitempty"`
	// Unresolved counts questions whose gold SQL names a table the schema
	// lacks (they never count as strict).
	Unresolved int `json:"unresolved"`
	// Records are per question, in question order.
	Records []RecallRecord `json:"-"`
}

// RecallReportOf aggregates per-question records (in question order) of
// ds into a report.
func RecallReportOf(ds *Dataset, recs []RecallRecord) *RecallReport {
	r := &RecallReport{Dataset: ds.Name, Records: recs}
	byDiff, byDB := map[string]*RecallStats{}, map[string]*RecallStats{}
	get := func(m map[string]*RecallStats, k string) *RecallStats {
		return named(m, k, func(k string) *RecallStats { return &RecallStats{Name: k} })
	}
	for i := range recs {
		rec := &recs[i]
		r.Overall.add(rec)
		get(byDiff, rec.Difficulty).add(rec)
		get(byDB, rec.DB).add(rec)
		if len(rec.Unresolved) > 0 {
			r.Unresolved++
		}
	}
	r.Overall.finish()
	collect := func(m map[string]*RecallStats, less func(a, b string) bool) []RecallStats {
		out := make([]RecallStats, 0, len(m))
		for _, s := range m {
			s.finish()
			out = append(out, *s)
		}
		sort.Slice(out, func(i, j int) bool { return less(out[i].Name, out[j].Name) })
		return out
	}
	r.ByDifficulty = collect(byDiff, func(a, b string) bool {
		if difficultyOrder[a] != difficultyOrder[b] {
			return difficultyOrder[a] < difficultyOrder[b]
		}
		return a < b
	})
	r.ByDatabase = collect(byDB, func(a, b string) bool { return a < b })
	return r
}

// RetrieverFunc builds the retriever of one database from its schema.
type RetrieverFunc func(ctx context.Context, db string, sch *schema.Database) (text2sql.Retriever, error)

// DefaultRetriever is the module's default retriever for a database with
// no knowledge file: retriever.NewHybrid over the schema alone (feature
// hashing embedder, in-memory store, default quotas and table cap).
func DefaultRetriever(ctx context.Context, _ string, sch *schema.Database) (text2sql.Retriever, error) {
	return retriever.NewHybrid(ctx, retriever.HybridOptions{Schema: sch})
}

// retrievers builds one retriever per database, once.
type retrievers struct {
	dbs  *Databases
	make RetrieverFunc
	mu   sync.Mutex
	m    map[string]*retrieverEntry
}

type retrieverEntry struct {
	once sync.Once
	r    text2sql.Retriever
	err  error
}

func (rs *retrievers) get(ctx context.Context, db string) (text2sql.Retriever, *schema.Database, error) {
	sch, err := rs.dbs.Schema(ctx, db)
	if err != nil {
		return nil, nil, err
	}
	rs.mu.Lock()
	e := rs.m[db]
	if e == nil {
		e = &retrieverEntry{}
		rs.m[db] = e
	}
	rs.mu.Unlock()
	e.once.Do(func() {
		e.r, e.err = rs.make(ctx, db, sch)
		if e.err != nil {
			e.err = fmt.Errorf("eval: retriever for %s: %w", db, e.err)
		}
	})
	return e.r, sch, e.err
}

// RecallOptions configure Recall. Zero values mean the defaults.
type RecallOptions struct {
	// Retriever builds each database's retriever; nil means
	// DefaultRetriever.
	Retriever RetrieverFunc
	// Materialize measures the questions of missing databases on empty
	// databases built from the dataset's tables.json (DatabaseOptions).
	Materialize bool
	// Parallel is the number of questions retrieved at once; 0 means
	// 2 × GOMAXPROCS.
	Parallel int
	// Catalog measures every question against one schema holding every
	// database of the dataset's tables.json, each in the namespace of its
	// db_id ("concert_singer.singer"): schema linking over a big catalog.
	// The retriever is built once, with "catalog" as its database name. A
	// table counts as shown only in the question's own namespace.
	Catalog bool
	// NoForeignKeys builds the retrievers over the schemas with their
	// declared foreign keys removed, as in the many real schemas that
	// declare none (warehouse exports, CSV-loaded databases): how much
	// schema linking leans on them.
	NoForeignKeys bool
	// Progress is called after each question (see Options.Progress).
	Progress func(done, total int)
}

// Recall retrieves the context of every question of ds (the question text
// with its evidence, Question.Prompt) and compares the tables shown with
// the tables and columns of the gold SQL (ExtractGoldRefs, against the
// database's schema). Questions of missing databases are excluded unless
// opts.Materialize and tables.json has their schema; questions with
// expected rows and no gold SQL are excluded. Errors: a retriever or
// executor that fails, or ctx's error.
func Recall(ctx context.Context, ds *Dataset, opts RecallOptions) (*RecallReport, error) {
	dbs := OpenDatabases(ds, DatabaseOptions{Materialize: opts.Materialize})
	defer dbs.Close()
	run, err := newRecallRun(ctx, ds, dbs, opts)
	if err != nil {
		return nil, err
	}
	recs := make([]RecallRecord, len(ds.Questions))
	why := make([]string, len(ds.Questions))
	par := opts.Parallel
	if par <= 0 {
		par = (&Options{}).parallel()
	}
	err = forEach(ctx, len(ds.Questions), par, opts.Progress, func(ctx context.Context, i int) error {
		q := &ds.Questions[i]
		var err error
		if why[i], err = run.excluded(q); err != nil || why[i] != "" {
			return err
		}
		recs[i], err = run.question(ctx, q)
		return err
	})
	if err != nil {
		return nil, err
	}
	var kept []RecallRecord
	var excl exclusionList
	for i := range recs {
		if why[i] == "" {
			kept = append(kept, recs[i])
		} else {
			excl.add(ds.Questions[i].DB, why[i], ds.Questions[i].ID)
		}
	}
	rep := RecallReportOf(ds, kept)
	for _, e := range excl.list {
		rep.Excluded += e.Count
		rep.Exclusions = append(rep.Exclusions, e)
	}
	rep.Materialized = dbs.materialized()
	return rep, nil
}

// recallRun is one Recall: the retrievers of the databases, or of the
// catalog when opts.Catalog.
type recallRun struct {
	ds            *Dataset
	opts          RecallOptions
	rs            *retrievers
	catalog       text2sql.Retriever // nil unless opts.Catalog
	catalogSchema *schema.Database
}

// newRecallRun prepares the retrievers: opts.Retriever (or
// DefaultRetriever), over schemas without foreign keys when
// opts.NoForeignKeys; the catalog's, built now, when opts.Catalog.
func newRecallRun(ctx context.Context, ds *Dataset, dbs *Databases, opts RecallOptions) (*recallRun, error) {
	mk := opts.Retriever
	if mk == nil {
		mk = DefaultRetriever
	}
	if opts.NoForeignKeys {
		keyed := mk
		mk = func(ctx context.Context, db string, sch *schema.Database) (text2sql.Retriever, error) {
			return keyed(ctx, db, withoutForeignKeys(sch))
		}
	}
	run := &recallRun{ds: ds, opts: opts, rs: &retrievers{dbs: dbs, make: mk, m: map[string]*retrieverEntry{}}}
	if !opts.Catalog {
		return run, nil
	}
	if ds.Tables == "" {
		return nil, fmt.Errorf("eval: recall over a catalog needs the dataset's tables.json")
	}
	var err error
	if run.catalogSchema, err = birdschema.Catalog("catalog", ds.Tables); err != nil {
		return nil, err
	}
	if run.catalog, err = mk(ctx, "catalog", run.catalogSchema); err != nil {
		return nil, fmt.Errorf("eval: retriever for the catalog: %w", err)
	}
	return run, nil
}

// excluded returns why q is not measured, "" when it is: it has no gold
// SQL, or its database is missing and not materialized (or tables.json
// has no schema for it).
func (run *recallRun) excluded(q *Question) (string, error) {
	switch {
	case q.GoldSQL == "":
		return "no gold SQL", nil
	case q.Excluded != "" && !run.opts.Materialize:
		return q.Excluded, nil
	case q.Excluded != "":
		sch, err := run.ds.TableSchema(q.DB)
		if err != nil {
			return "", err
		}
		if sch == nil {
			return q.Excluded, nil
		}
	}
	return "", nil
}

// question retrieves q's context and measures its recall and prompt
// sizes; in a catalog, only the tables of q's namespace count as shown.
func (run *recallRun) question(ctx context.Context, q *Question) (RecallRecord, error) {
	r, sch, err := run.rs.get(ctx, q.DB)
	if err != nil {
		return RecallRecord{}, err
	}
	if run.catalog != nil {
		r = run.catalog
	}
	c, err := r.Retrieve(ctx, text2sql.RetrieveRequest{Question: q.Prompt()})
	if err != nil {
		return RecallRecord{}, fmt.Errorf("eval: retrieve question %s: %w", q.ID, err)
	}
	shown, full := c, sch
	if run.catalog != nil {
		shown, full = inNamespace(c, q.DB), run.catalogSchema
	}
	rec := RecallOf(sch, q.GoldSQL, shown)
	rec.ID, rec.DB, rec.Difficulty = q.ID, q.DB, q.Difficulty
	if rec.PromptTokens, rec.FullSchemaTokens, err = promptSizes(full, c); err != nil {
		return RecallRecord{}, fmt.Errorf("eval: prompt of question %s: %w", q.ID, err)
	}
	return rec, nil
}

// withoutForeignKeys returns a copy of db whose tables declare no foreign
// keys; db is not changed.
func withoutForeignKeys(db *schema.Database) *schema.Database {
	out := *db
	out.Tables = make([]*schema.Table, len(db.Tables))
	for i, t := range db.Tables {
		c := *t
		c.ForeignKeys = nil
		out.Tables[i] = &c
	}
	return &out
}

// inNamespace returns a copy of c whose tables of namespace ns are named
// as in that database alone ("singer" for "concert_singer.singer"); other
// tables keep their qualified names, so they match no gold table.
func inNamespace(c *text2sql.Retrieval, ns string) *text2sql.Retrieval {
	out := *c
	out.Tables = make([]text2sql.TableRef, len(c.Tables))
	for i, t := range c.Tables {
		if name, ok := strings.CutPrefix(t.Name, ns+"."); ok {
			t.Name = name
		}
		out.Tables[i] = t
	}
	return &out
}

// promptSizes estimates the tokens of the default generator's user message
// for c and for the whole schema of sch with no notes.
func promptSizes(sch *schema.Database, c *text2sql.Retrieval) (prompt, full int, err error) {
	gen, err := generator.New(nil, generator.Options{Dialect: sch.Dialect})
	if err != nil {
		return 0, 0, err
	}
	_, user, err := gen.Prompt(text2sql.GenerateRequest{Question: c.Question, Retrieval: c})
	if err != nil {
		return 0, 0, err
	}
	whole := &text2sql.Retrieval{Question: c.Question, Dialect: c.Dialect, Schema: sch.DDL(sch.Tables)}
	for _, t := range sch.Tables {
		whole.Tables = append(whole.Tables, text2sql.TableRef{Name: t.QualifiedName(), Reason: text2sql.ReasonRetrieved})
	}
	_, wholeUser, err := gen.Prompt(text2sql.GenerateRequest{Question: c.Question, Retrieval: whole})
	if err != nil {
		return 0, 0, err
	}
	return generator.EstimateTokens(user), generator.EstimateTokens(wholeUser), nil
}

func (r *RecallReport) markdown(b *strings.Builder) {
	r.markdownBody(b, "## Retrieval recall\n\n")
}

func (r *RecallReport) markdownBody(b *strings.Builder, title string) {
	b.WriteString(title)
	if len(r.Materialized) > 0 {
		fmt.Fprintf(b, "Schemas of %d databases come from tables.json (empty databases).\n\n", len(r.Materialized))
	}
	o := r.Overall
	fmt.Fprintf(b, "%d questions: strict table recall **%s** (%d), table recall %s, column recall %s; %.2f tables (%.1f columns) shown on average for %.2f gold tables (%.2f gold columns).",
		o.Questions, pct(o.StrictTableRecall), o.Strict, pct(o.TableRecall), pct(o.ColumnRecall), o.MeanTablesShown, o.MeanColumnsShown, o.MeanGoldTables, o.MeanGoldColumns)
	if o.PromptRatio != nil {
		fmt.Fprintf(b, " The user prompt averages %.0f tokens, %s of the %.0f of a prompt with the whole schema.", o.MeanPromptTokens, ratio(o.PromptRatio), o.MeanFullSchemaTokens)
	}
	fmt.Fprintln(b)
	fmt.Fprintln(b)
	writeExclusions(b, r.Exclusions)
	table := func(name string, ss []RecallStats) {
		fmt.Fprintf(b, "| %s | questions | strict table recall | table recall | column recall | tables shown | columns shown | prompt tokens | vs whole schema |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n", name)
		for _, s := range ss {
			fmt.Fprintf(b, "| %s | %d | %s | %s | %s | %.2f | %.1f | %.0f | %s |\n", s.Name, s.Questions, pct(s.StrictTableRecall), pct(s.TableRecall),
				pct(s.ColumnRecall), s.MeanTablesShown, s.MeanColumnsShown, s.MeanPromptTokens, ratio(s.PromptRatio))
		}
		fmt.Fprintln(b)
	}
	table("difficulty", r.ByDifficulty)
	table("database", r.ByDatabase)
}

// ratio formats a quotient such as 0.62 as "0.62×", nil as "n/a".
func ratio(f *float64) string {
	if f == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.2f×", *f)
}

// WriteRecords writes the per-question records as JSON lines, in question
// order: what eval --recall --records writes, for diffing runs.
func (r *RecallReport) WriteRecords(w io.Writer) error { return writeLines(w, r.Records) }

// WriteMarkdown writes the recall report as Markdown.
func (r *RecallReport) WriteMarkdown(w io.Writer) error {
	b := &strings.Builder{}
	r.markdownBody(b, fmt.Sprintf("# Retrieval recall: %s\n\n", r.Dataset))
	_, err := io.WriteString(w, b.String())
	return err
}

// Package catalog puts several named databases behind one guarded
// executor, so that one question can be asked of all of them: the schema
// model is their union with every table named <database>.<table>, the
// knowledge bases are merged under the same names, and a statement is
// split by the databases it reads.
//
// A statement that reads one database runs there, its table names written
// back as that database knows them, through that database's own guard.
// One that reads several must be a WITH query in which every common table
// expression that reads a database reads exactly one (and no other CTE),
// and the rest reads only CTEs: each such CTE runs as a step on its
// database (through its guard, under the row cap), the steps' rows are
// loaded into a private SQLite database made for this execution alone,
// and the rest of the statement runs there through the SQLite guard. Any
// other shape is refused with KindCrossDatabase before anything runs,
// with a message that says how to write it, so the repair loop can.
//
// The splitting is analysis, not a security decision: every statement
// that reaches a database is the one its guard checked on the engine's
// own terms.
package catalog

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"time"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/executor"
	"github.com/text2sql-go/text2sql/executor/internal/execkit"
	"github.com/text2sql-go/text2sql/internal/stagekit"
	"github.com/text2sql-go/text2sql/knowledge"
	"github.com/text2sql-go/text2sql/schema"
)

// Member is what a catalog needs of a database's executor; the SQLite,
// PostgreSQL, MySQL and MCP executors provide it.
type Member interface {
	text2sql.Executor
	text2sql.Guard
	Schema() *schema.Database
}

// Database is one named database of a catalog.
type Database struct {
	// Name names the database in table names (<Name>.<table>): letters,
	// digits and '_', not starting with a digit, unique in the catalog
	// regardless of case.
	Name     string
	Executor Member
	// Knowledge is the database's knowledge base, its table names as the
	// database knows them; nil for none.
	Knowledge *knowledge.Base
}

// Options configures New. Zero values mean the defaults; negative values
// are an error.
type Options struct {
	// MaxRows caps the rows of each step and of the merged result
	// (default executor.DefaultMaxRows, 1000); a request's own MaxRows
	// takes precedence. A step with more rows than the cap is an error
	// (KindTooLarge), not a truncated merge: a merge of partial rows
	// would be a wrong answer.
	MaxRows int
	// Timeout bounds one execution, every step and the merge together
	// (default executor.DefaultTimeout, 10s); a request's own Timeout
	// takes precedence.
	Timeout time.Duration
	// TempDir is where the private merge database of a statement across
	// databases is written (mode 0600) and removed after it ran; "" means
	// os.TempDir.
	TempDir string
	// MaxResultBytes bounds the bytes of the steps' rows together (their
	// strings and blobs plus executor.ValueOverhead per value), what one
	// execution across databases holds in memory and writes to its merge
	// database, and the merged result's as the SQLite executor counts it
	// (default executor.DefaultMaxResultBytes, 32 MiB). Past it the
	// execution fails with KindTooLarge: each step is bounded by its
	// member, but a statement may have any number of steps.
	MaxResultBytes int
}

// Catalog is several databases behind one executor. It implements
// text2sql.Executor and text2sql.Guard and is safe for concurrent use
// when its members are.
type Catalog struct {
	dbs    []Database
	opts   Options
	schema *schema.Database
	index  *schema.Index
	kb     *knowledge.Base
	// origin maps each catalog table to its database (an index into dbs)
	// and the member's own table.
	origin map[*schema.Table]origin
	// mixed: the members are of several dialects.
	mixed bool
	// shared is, per member, the schema all its tables are in (left out
	// of their catalog names), or "".
	shared []string
	closed atomic.Bool
}

type origin struct {
	db    int
	table *schema.Table
}

// New returns a catalog of dbs. It fails, wrapping
// text2sql.ErrInvalidConfig, on no databases, a missing executor, a name
// that is not an identifier or is given twice, or a negative option.
//
// The union schema's dialect is the members' when they share one; for
// members of several dialects (Mixed) it is SQLite's, where merges run,
// and each table carries its database's (schema.Table.Dialect), so its
// DDL is quoted for it and a statement reading one database is written
// in that database's dialect. Its name is the members' names joined by
// "+". Foreign keys stay inside their database.
func New(dbs []Database, opts Options) (*Catalog, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: catalog: "+format, append([]any{text2sql.ErrInvalidConfig}, args...)...)
	}
	if len(dbs) == 0 {
		return nil, bad("no databases")
	}
	if opts.MaxRows < 0 || opts.Timeout < 0 || opts.MaxResultBytes < 0 {
		return nil, bad("negative MaxRows, Timeout or MaxResultBytes")
	}
	if opts.MaxResultBytes == 0 {
		opts.MaxResultBytes = executor.DefaultMaxResultBytes
	}
	c := &Catalog{dbs: append([]Database(nil), dbs...), opts: opts, origin: map[*schema.Table]origin{}}
	seen := map[string]bool{}
	var names []string
	for _, d := range c.dbs {
		switch {
		case !identifier(d.Name):
			return nil, bad("database name %q: use letters, digits and '_', not starting with a digit", d.Name)
		case seen[strings.ToLower(d.Name)]:
			return nil, bad("database name %q given twice", d.Name)
		case d.Executor == nil || d.Executor.Schema() == nil:
			return nil, bad("database %s: no executor or no schema", d.Name)
		}
		seen[strings.ToLower(d.Name)] = true
		names = append(names, d.Name)
		if d.Executor.Schema().Dialect != c.dbs[0].Executor.Schema().Dialect {
			c.mixed = true
		}
	}
	// Databases of several dialects: the union is SQLite's, where merges
	// run (its lexer also reads the others' quoted names), and each
	// table keeps its own dialect.
	dialect := c.dbs[0].Executor.Schema().Dialect
	if c.mixed {
		dialect = text2sql.DialectSQLite
	}
	c.schema = &schema.Database{Name: strings.Join(names, "+"), Dialect: dialect}
	c.shared = make([]string, len(c.dbs))
	for i, d := range c.dbs {
		c.shared[i] = sharedSchema(d.Executor.Schema())
	}
	for i, d := range c.dbs {
		for _, t := range d.Executor.Schema().Tables {
			ct := c.qualify(i, t)
			if c.mixed {
				ct.Dialect = d.Executor.Schema().Dialect
			}
			c.schema.Tables = append(c.schema.Tables, ct)
			c.origin[ct] = origin{db: i, table: t}
		}
	}
	c.index = c.schema.Index()
	c.kb = c.knowledge()
	return c, nil
}

// identifier reports whether s is a plain identifier.
func identifier(s string) bool {
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return s != ""
}

// qualify returns a copy of member i's table t named in the catalog:
// schema <db>, or <db>.<schema> when the member's tables are in several
// schemas (a PostgreSQL database whose tables are all in public is
// <db>.<table>), its foreign keys pointing at tables of the same
// database.
func (c *Catalog) qualify(i int, t *schema.Table) *schema.Table {
	db, shared := c.dbs[i].Name, c.shared[i]
	ns := func(sch string) string {
		if sch == shared {
			sch = ""
		}
		return namespace(db, sch)
	}
	ct := *t
	ct.Schema = ns(t.Schema)
	ct.Columns = append([]schema.Column(nil), t.Columns...)
	ct.ForeignKeys = make([]schema.ForeignKey, len(t.ForeignKeys))
	for k, fk := range t.ForeignKeys {
		fk.RefSchema = ns(fk.RefSchema)
		ct.ForeignKeys[k] = fk
	}
	return &ct
}

// sharedSchema is the schema every table of db is in, or "".
func sharedSchema(db *schema.Database) string {
	if len(db.Tables) == 0 {
		return ""
	}
	s := db.Tables[0].Schema
	for _, t := range db.Tables[1:] {
		if t.Schema != s {
			return ""
		}
	}
	return s
}

func namespace(db, sch string) string {
	if sch == "" {
		return db
	}
	return db + "." + sch
}

// Name returns the catalog name of a member's table name ("singer" of
// database concert → "concert.singer").
func Name(db, table string) string { return db + "." + table }

// Schema returns the union schema: every member's tables, named
// <database>.<table>. The caller must not change it.
func (c *Catalog) Schema() *schema.Database { return c.schema }

// Knowledge returns the members' knowledge bases merged: notes, rules,
// value lists and examples with their tables named as in Schema, rule and
// example ids prefixed with "<database>.". How tables are named and
// databases combined is not among its rules: every prompt needs it, so
// it goes to the generator's instructions (Rule), not to retrieval.
func (c *Catalog) Knowledge() *knowledge.Base { return c.kb }

// Mixed reports whether the members are of several dialects.
func (c *Catalog) Mixed() bool { return c.mixed }

// Dialect returns the dialect of the named member, or "" when there is
// no such member.
func (c *Catalog) Dialect(db string) text2sql.Dialect {
	for _, d := range c.dbs {
		if strings.EqualFold(d.Name, db) {
			return d.Executor.Schema().Dialect
		}
	}
	return ""
}

// Members returns the databases, in the order New was given them.
func (c *Catalog) Members() []Database { return append([]Database(nil), c.dbs...) }

// Databases returns the members' names, in the order New was given them.
func (c *Catalog) Databases() []string {
	out := make([]string, len(c.dbs))
	for i, d := range c.dbs {
		out[i] = d.Name
	}
	return out
}

// Rule is the instruction every prompt over the catalog needs: how tables
// are named and how databases may be combined; for
// generator.Options.Instructions.
func (c *Catalog) Rule() string {
	names := c.Databases()
	if c.mixed {
		for i, d := range c.dbs {
			names[i] += " (" + stagekit.DialectName(d.Executor.Schema().Dialect) + ")"
		}
	}
	rule := "The tables belong to the separate databases " + strings.Join(names, ", ") +
		": write every table as <database>.<table>, exactly as the schema names it. " +
		"A query reads tables of one database; to combine databases, write WITH name AS (...), ... SELECT ...: " +
		"each CTE that reads tables reads those of one database only and no other CTE, and the final SELECT reads only the CTEs. " +
		"The final SELECT runs in SQLite on the CTEs' rows, so filter and aggregate inside each CTE."
	if c.mixed {
		rule += " Write a query that reads one database, and each CTE, in that database's dialect, quoting names as its DDL does; write the final SELECT of a combination in SQLite's."
	}
	return rule
}

// knowledge merges the members' knowledge bases.
func (c *Catalog) knowledge() *knowledge.Base {
	kb := &knowledge.Base{}
	for i, d := range c.dbs {
		if d.Knowledge == nil {
			continue
		}
		name := func(table string) string { return Name(d.Name, table) }
		for _, n := range d.Knowledge.Tables {
			n.Table = name(n.Table)
			kb.Tables = append(kb.Tables, n)
		}
		for _, n := range d.Knowledge.Columns {
			n.Table = name(n.Table)
			kb.Columns = append(kb.Columns, n)
		}
		for _, v := range d.Knowledge.Values {
			v.Table = name(v.Table)
			kb.Values = append(kb.Values, v)
		}
		for _, r := range d.Knowledge.Rules {
			r.ID = d.Name + "." + r.ID
			tables := make([]string, len(r.Tables))
			for i, t := range r.Tables {
				tables[i] = name(t)
			}
			r.Tables = tables
			kb.Rules = append(kb.Rules, r)
		}
		for _, e := range d.Knowledge.Examples {
			e.ID = d.Name + "." + e.ID
			e.SQL = c.qualifySQL(i, e.SQL)
			kb.Examples = append(kb.Examples, e)
		}
	}
	return kb
}

// DataVersion identifies the data of every member: their versions joined
// as "name=version" by ";". It fails when a member cannot tell its own.
func (c *Catalog) DataVersion(ctx context.Context) (string, error) {
	parts := make([]string, len(c.dbs))
	for i, d := range c.dbs {
		v, ok := d.Executor.(interface {
			DataVersion(context.Context) (string, error)
		})
		if !ok {
			return "", fmt.Errorf("catalog: database %s cannot tell its data version", d.Name)
		}
		s, err := v.DataVersion(ctx)
		if err != nil {
			return "", fmt.Errorf("catalog: database %s: %w", d.Name, err)
		}
		parts[i] = d.Name + "=" + s
	}
	return strings.Join(parts, ";"), nil
}

// Close closes every member that has a Close method; the catalog is
// closed after the first call.
func (c *Catalog) Close() error {
	if c.closed.Swap(true) {
		return nil
	}
	var errs []error
	for _, d := range c.dbs {
		if cl, ok := d.Executor.(io.Closer); ok {
			if err := cl.Close(); err != nil {
				errs = append(errs, fmt.Errorf("catalog: database %s: %w", d.Name, err))
			}
		}
	}
	return errors.Join(errs...)
}

// Check checks sql without running it: it is split as Execute splits it
// and each step is checked by its database's guard. The final statement
// of a query across databases reads only the steps' rows; the SQLite
// guard checks it when it runs. A refusal is a *text2sql.SQLError.
func (c *Catalog) Check(ctx context.Context, sql string) error {
	if err := execkit.Ready(ctx, &c.closed); err != nil {
		return err
	}
	p, se := c.split(sql)
	if se != nil {
		return se
	}
	for _, s := range p.steps {
		if err := c.dbs[s.db].Executor.Check(ctx, s.sql); err != nil {
			return err
		}
	}
	return nil
}

// Execute runs req.SQL: on the one database it reads, or as steps and a
// merge (see the package documentation). Refusals and engine errors are
// in Result.Error; Result.Steps lists what ran where. The error return is
// non-nil only when the catalog is closed, ctx is done, or a member or
// the merge database cannot work.
func (c *Catalog) Execute(ctx context.Context, req text2sql.ExecuteRequest) (*text2sql.Result, error) {
	start := time.Now()
	if err := execkit.Ready(ctx, &c.closed); err != nil {
		return nil, err
	}
	p, se := c.split(req.SQL)
	if se != nil {
		return execkit.Finish(&text2sql.Result{Error: se}, start)
	}
	maxRows, timeout := execkit.Limits(req, c.opts.MaxRows, c.opts.Timeout)
	deadline := start.Add(timeout)
	if p.final == "" {
		s := p.steps[0]
		res, err := c.dbs[s.db].Executor.Execute(ctx, text2sql.ExecuteRequest{SQL: s.sql, MaxRows: maxRows, Timeout: timeout})
		if err != nil || res == nil {
			return nil, nilResult(err, c.dbs[s.db].Name)
		}
		res.Steps = []text2sql.ResultStep{{Database: c.dbs[s.db].Name, SQL: s.sql, RowCount: res.RowCount, Duration: res.Duration}}
		return res, nil
	}
	return c.merge(ctx, p, maxRows, deadline, start)
}

// nilResult is the error of a member that returned no result: its own
// error, or text2sql.ErrNilResult when it gave none.
func nilResult(err error, db string) error {
	if err == nil {
		err = text2sql.ErrNilResult
	}
	return fmt.Errorf("catalog: database %s: %w", db, err)
}

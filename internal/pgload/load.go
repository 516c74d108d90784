// Package pgload copies a SQLite database into a schema of a PostgreSQL
// database (CopySQLite), choosing column types from the values, for the
// CLI's load command and for tests that run SQLite benchmarks (Spider,
// BIRD) on PostgreSQL. It is a data loader, not part of the guarded
// executors: it writes to the destination and must be given a login that
// may create schemas.
package pgload

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/birdschema"
	"github.com/text2sql-go/text2sql/internal/sqltext"
	"github.com/text2sql-go/text2sql/schema"
)

// CopyOptions configures CopySQLite.
type CopyOptions struct {
	// Replace drops the target schema and everything in it (DROP SCHEMA …
	// CASCADE) before copying. Without it, copying into an existing
	// schema is an error.
	Replace bool
	// FoldNames lower-cases every table and column name that PostgreSQL
	// would fold anyway (letters, digits and underscores, not starting
	// with a digit), so that SQL written for SQLite with unquoted
	// mixed-case names ("SELECT Name FROM Singer") runs unchanged. Names
	// that need quoting in any case ("Line Items"), and names that would
	// collide once folded, keep their exact spelling. Without FoldNames
	// every name is kept exactly, quoted where needed.
	FoldNames bool
}

// CopyReport says what CopySQLite made.
type CopyReport struct {
	Schema string        `json:"schema"` // the PostgreSQL schema
	Tables []CopiedTable `json:"tables"` // in the source's order
	// Notes are the things that did not carry over as they were: a
	// primary or foreign key the data violates, a view PostgreSQL cannot
	// parse, NUL bytes or invalid UTF-8 removed from text.
	Notes []string `json:"notes"`
}

// CopiedTable is one copied table or view.
type CopiedTable struct {
	Source  string           `json:"source"` // the name in SQLite
	Name    string           `json:"name"`   // the name in PostgreSQL
	Kind    schema.TableKind `json:"kind"`   // table or view
	Rows    int64            `json:"rows"`   // rows copied (0 for a view)
	Columns []CopiedColumn   `json:"columns"`
}

// CopiedColumn is one copied column and the type chosen for it.
type CopiedColumn struct {
	Source   string `json:"source"`   // the name in SQLite
	Name     string `json:"name"`     // the name in PostgreSQL
	Declared string `json:"declared"` // the declared SQLite type, possibly empty
	Type     string `json:"type"`     // the PostgreSQL type: bigint, double precision, numeric, text or bytea; "" in a view
	// Mixed is set when the column held values of several SQLite storage
	// classes and became text (e.g. integers and text).
	Mixed bool `json:"mixed,omitempty"`
}

// CopySQLite copies the tables of a SQLite database (src, any SQLite
// driver with the pragma table-valued functions, e.g. go-sqlite3; it is
// only read) into a new schema of a PostgreSQL database (dst, the pgx
// driver), in one transaction: all or nothing.
//
// Types follow the values, not only the declarations, since SQLite lets
// any column hold any value. Per column, from the storage classes present:
// only integers → bigint; integers and reals → double precision (numeric
// when declared DECIMAL, NUMERIC or MONEY); any text, or blobs mixed with
// other values → text (numbers written as SQLite prints them); only blobs
// → bytea. An empty or all-NULL column takes its type from the
// declaration (INT… → bigint, REAL/FLOAT/DOUBLE → double precision,
// DECIMAL/NUMERIC → numeric, BLOB → bytea, anything else — dates
// included, which SQLite stores as text — → text). NOT NULL is kept.
// Text loses NUL bytes and invalid UTF-8, which PostgreSQL refuses
// (noted in the report).
//
// Primary keys are added after the data when the data satisfies them;
// foreign keys are added NOT VALID (kept in the catalog, not checked
// against the rows) and then validated when the rows allow it. Views are
// created from their SQLite text when PostgreSQL accepts it. Whatever
// does not carry over is noted in the report, not an error.
//
// Identifiers are quoted exactly (see CopyOptions.FoldNames). The error
// wraps text2sql.ErrInvalidConfig for an empty schema name, an existing
// schema without Replace, or a dst of another driver.
func CopySQLite(ctx context.Context, src, dst *sql.DB, schemaName string, opts CopyOptions) (*CopyReport, error) {
	if schemaName == "" {
		return nil, fmt.Errorf("%w: postgres: copy: empty schema name", text2sql.ErrInvalidConfig)
	}
	source, err := schema.InspectSQLite(ctx, src)
	if err != nil {
		return nil, fmt.Errorf("postgres: copy: read the SQLite schema: %w", err)
	}
	plan, err := planCopy(ctx, src, source, opts.FoldNames)
	if err != nil {
		return nil, err
	}
	rep := &CopyReport{Schema: schemaName}
	conn, err := dst.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("postgres: copy: connect: %w", err)
	}
	defer conn.Close()
	err = conn.Raw(func(dc any) error {
		c, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("%w: postgres: copy: the destination must use the pgx driver, not %T", text2sql.ErrInvalidConfig, dc)
		}
		tx, err := c.Conn().Begin(ctx)
		if err != nil {
			return err
		}
		defer tx.Rollback(context.Background()) //nolint:errcheck // after Commit it is a no-op
		if err := copyInto(ctx, tx, src, plan, schemaName, opts, rep); err != nil {
			return err
		}
		return tx.Commit(ctx)
	})
	if err != nil {
		if errors.Is(err, text2sql.ErrInvalidConfig) {
			return nil, err
		}
		return nil, fmt.Errorf("postgres: copy into schema %s: %w", schemaName, err)
	}
	return rep, nil
}

// tablePlan is how one source table is copied.
type tablePlan struct {
	src  *schema.Table
	out  CopiedTable
	cols []colPlan
	view string // the view's SELECT text
}

type colPlan struct {
	out     CopiedColumn
	notNull bool
	expr    string // the SQLite expression read
}

// planCopy chooses names and types.
func planCopy(ctx context.Context, src *sql.DB, source *schema.Database, fold bool) ([]*tablePlan, error) {
	var names []string
	for _, t := range source.Tables {
		names = append(names, t.Name)
	}
	tableNames := foldAll(names, fold)
	var plans []*tablePlan
	for ti, t := range source.Tables {
		p := &tablePlan{src: t, out: CopiedTable{Source: t.Name, Name: tableNames[ti], Kind: t.Kind}}
		var cn []string
		for _, c := range t.Columns {
			cn = append(cn, c.Name)
		}
		colNames := foldAll(cn, fold)
		var classes []map[string]int
		if t.Kind == schema.KindTable && len(t.Columns) > 0 {
			var err error
			if classes, err = storageClasses(ctx, src, t); err != nil {
				return nil, err
			}
		}
		for ci, c := range t.Columns {
			cp := colPlan{out: CopiedColumn{Source: c.Name, Name: colNames[ci], Declared: c.Type}, notNull: c.NotNull}
			var seen map[string]int
			if classes != nil {
				seen = classes[ci]
			}
			if t.Kind == schema.KindTable {
				cp.out.Type, cp.out.Mixed = chooseType(c.Type, seen)
			}
			q := sqliteQuote(c.Name)
			switch cp.out.Type {
			case "bigint":
				cp.expr = "CAST(" + q + " AS INTEGER)"
			case "double precision":
				cp.expr = "CAST(" + q + " AS REAL)"
			case "numeric":
				cp.expr = q + " + 0"
			case "bytea":
				cp.expr = "CAST(" + q + " AS BLOB)"
			default:
				cp.expr = "CAST(" + q + " AS TEXT)"
			}
			p.cols = append(p.cols, cp)
			p.out.Columns = append(p.out.Columns, cp.out)
		}
		if t.Kind == schema.KindView {
			var ddl string
			if err := src.QueryRowContext(ctx, `SELECT sql FROM sqlite_master WHERE type = 'view' AND name = ?`, t.Name).Scan(&ddl); err != nil {
				return nil, fmt.Errorf("postgres: copy: view %s: %w", t.Name, err)
			}
			p.view = viewBody(ddl)
		}
		plans = append(plans, p)
	}
	return plans, nil
}

// storageClasses counts, per column of t, the SQLite storage classes of
// its non-NULL values.
func storageClasses(ctx context.Context, src *sql.DB, t *schema.Table) ([]map[string]int, error) {
	var sel []string
	for _, c := range t.Columns {
		sel = append(sel, "typeof("+sqliteQuote(c.Name)+")")
	}
	rows, err := src.QueryContext(ctx, "SELECT "+strings.Join(sel, ", ")+" FROM "+sqliteQuote(t.Name))
	if err != nil {
		return nil, fmt.Errorf("postgres: copy: read %s: %w", t.Name, err)
	}
	defer rows.Close()
	out := make([]map[string]int, len(t.Columns))
	for i := range out {
		out[i] = map[string]int{}
	}
	vals := make([]string, len(t.Columns))
	ptrs := make([]any, len(vals))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, fmt.Errorf("postgres: copy: read %s: %w", t.Name, err)
		}
		for i, v := range vals {
			if v != "null" {
				out[i][v]++
			}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: copy: read %s: %w", t.Name, err)
	}
	return out, nil
}

// chooseType picks the PostgreSQL type of a column from its declared type
// and the storage classes of its values (see CopySQLite).
func chooseType(declared string, seen map[string]int) (typ string, mixed bool) {
	d := strings.ToUpper(declared)
	has := func(subs ...string) bool {
		for _, s := range subs {
			if strings.Contains(d, s) {
				return true
			}
		}
		return false
	}
	decimal := has("DEC", "NUMERIC", "MONEY")
	switch {
	case seen["text"] > 0:
		return "text", len(seen) > 1
	case seen["blob"] > 0:
		if len(seen) == 1 {
			return "bytea", false
		}
		return "text", true
	case seen["real"] > 0:
		if decimal {
			return "numeric", false
		}
		return "double precision", false
	case seen["integer"] > 0:
		return "bigint", false
	}
	// No values: SQLite's affinity rules on the declaration.
	switch {
	case has("INT"):
		return "bigint", false
	case has("CHAR", "CLOB", "TEXT"):
		return "text", false
	case has("BLOB"):
		return "bytea", false
	case has("REAL", "FLOA", "DOUB"):
		return "double precision", false
	case decimal:
		return "numeric", false
	case has("BOOL"):
		return "bigint", false
	}
	return "text", false
}

// foldAll returns the PostgreSQL names of names: exact, or folded (see
// CopyOptions.FoldNames) where that causes no collision.
func foldAll(names []string, fold bool) []string {
	out := append([]string(nil), names...)
	if !fold {
		return out
	}
	count := map[string]int{}
	for _, n := range names {
		count[birdschema.PostgresName(n)]++
	}
	for i, n := range names {
		if f := birdschema.PostgresName(n); count[f] == 1 {
			out[i] = f
		}
	}
	return out
}

func sqliteQuote(n string) string { return `"` + strings.ReplaceAll(n, `"`, `""`) + `"` }

// viewBody returns the SELECT of a CREATE VIEW statement: what follows
// its first top-level AS.
func viewBody(ddl string) string {
	for _, t := range sqltext.Lex(ddl) {
		if t.Is("as") {
			return strings.TrimSpace(ddl[t.Pos+len(t.Text):])
		}
	}
	return ""
}

// copyInto runs the copy inside tx: the schema, the tables and their
// rows, then the keys and the views, each of those in a savepoint so
// that one the data or PostgreSQL refuses becomes a note in rep.
func copyInto(ctx context.Context, tx pgx.Tx, src *sql.DB, plans []*tablePlan, schemaName string, opts CopyOptions, rep *CopyReport) error {
	c := &copier{tx: tx, schema: schemaName, rep: rep}
	if err := c.createSchema(ctx, opts.Replace); err != nil {
		return err
	}
	byName := map[string]*tablePlan{}
	for _, p := range plans {
		byName[strings.ToLower(p.src.Name)] = p
	}
	for _, p := range plans {
		if p.src.Kind != schema.KindTable {
			continue
		}
		if err := c.createTable(ctx, src, p); err != nil {
			return err
		}
	}
	for _, p := range plans {
		if p.src.Kind == schema.KindTable {
			c.primaryKey(ctx, p)
		}
	}
	for _, p := range plans {
		if p.src.Kind != schema.KindTable {
			continue
		}
		for i, fk := range p.src.ForeignKeys {
			c.foreignKey(ctx, p, i, fk, byName[strings.ToLower(fk.RefTable)])
		}
	}
	// Views last, with the copied tables on the search path.
	if _, err := tx.Exec(ctx, "SET LOCAL search_path TO "+pgx.Identifier{schemaName}.Sanitize()); err != nil {
		return err
	}
	for _, p := range plans {
		if p.src.Kind == schema.KindView {
			c.createView(ctx, p)
		}
	}
	for _, p := range plans {
		rep.Tables = append(rep.Tables, p.out)
	}
	return nil
}

// copier writes the copy into one schema of a transaction.
type copier struct {
	tx     pgx.Tx
	schema string // the target schema's name
	rep    *CopyReport
}

// note adds a note to the report.
func (c *copier) note(format string, args ...any) {
	c.rep.Notes = append(c.rep.Notes, fmt.Sprintf(format, args...))
}

// table returns the quoted name of table name in the target schema.
func (c *copier) table(name string) string { return pgx.Identifier{c.schema, name}.Sanitize() }

// createSchema creates the target schema, dropping one of that name
// first when replace, else refusing when it exists.
func (c *copier) createSchema(ctx context.Context, replace bool) error {
	sch := pgx.Identifier{c.schema}.Sanitize()
	if replace {
		if _, err := c.tx.Exec(ctx, "DROP SCHEMA IF EXISTS "+sch+" CASCADE"); err != nil {
			return err
		}
	} else {
		var exists bool
		if err := c.tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)`, c.schema).Scan(&exists); err != nil {
			return err
		}
		if exists {
			return fmt.Errorf("%w: postgres: copy: schema %s exists (replace it with CopyOptions.Replace / --replace)", text2sql.ErrInvalidConfig, c.schema)
		}
	}
	_, err := c.tx.Exec(ctx, "CREATE SCHEMA "+sch)
	return err
}

// createTable creates p's table and copies its rows from src.
func (c *copier) createTable(ctx context.Context, src *sql.DB, p *tablePlan) error {
	var defs []string
	for _, cp := range p.cols {
		d := pgx.Identifier{cp.out.Name}.Sanitize() + " " + cp.out.Type
		if cp.notNull {
			d += " NOT NULL"
		}
		defs = append(defs, d)
	}
	ident := pgx.Identifier{c.schema, p.out.Name}
	if _, err := c.tx.Exec(ctx, "CREATE TABLE "+ident.Sanitize()+" (\n  "+strings.Join(defs, ",\n  ")+"\n)"); err != nil {
		return fmt.Errorf("create table %s: %w", p.out.Name, err)
	}
	n, notes, err := copyRows(ctx, c.tx, src, p, ident)
	if err != nil {
		return fmt.Errorf("copy rows of %s: %w", p.src.Name, err)
	}
	p.out.Rows = n
	c.rep.Notes = append(c.rep.Notes, notes...)
	return nil
}

// try runs stmt in a savepoint: data that violates one key keeps the
// rest.
func (c *copier) try(ctx context.Context, stmt string) error {
	sp, err := c.tx.Begin(ctx)
	if err != nil {
		return err
	}
	if _, err := sp.Exec(ctx, stmt); err != nil {
		sp.Rollback(ctx) //nolint:errcheck
		return err
	}
	return sp.Commit(ctx)
}

// primaryKey adds p's primary key, if it has one of copied columns.
func (c *copier) primaryKey(ctx context.Context, p *tablePlan) {
	if len(p.src.PrimaryKey) == 0 {
		return
	}
	cols, ok := p.quotedColumns(p.src.PrimaryKey)
	if !ok {
		return
	}
	stmt := "ALTER TABLE " + c.table(p.out.Name) + " ADD PRIMARY KEY (" + strings.Join(cols, ", ") + ")"
	if err := c.try(ctx, stmt); err != nil {
		c.note("%s: primary key (%s) not added: %s", p.out.Name, strings.Join(p.src.PrimaryKey, ", "), pgMessage(err))
	}
}

// foreignKey adds fk, p's i-th foreign key, to ref (nil: no such copied
// table): NOT VALID first, so that rows that violate it keep it, then
// validated.
func (c *copier) foreignKey(ctx context.Context, p *tablePlan, i int, fk schema.ForeignKey, ref *tablePlan) {
	if ref == nil || ref.src.Kind != schema.KindTable {
		c.note("%s: foreign key to %s not added: no such table", p.out.Name, fk.RefTable)
		return
	}
	refCols := fk.RefColumns
	if len(refCols) == 0 {
		refCols = ref.src.PrimaryKey
	}
	from, ok1 := p.quotedColumns(fk.Columns)
	to, ok2 := ref.quotedColumns(refCols)
	if !ok1 || !ok2 || len(from) != len(to) {
		c.note("%s: foreign key (%s) to %s not added: columns do not match", p.out.Name, strings.Join(fk.Columns, ", "), fk.RefTable)
		return
	}
	name := pgx.Identifier{fmt.Sprintf("%s_fk%d", truncateName(p.out.Name, 50), i+1)}.Sanitize()
	table := c.table(p.out.Name)
	stmt := "ALTER TABLE " + table + " ADD CONSTRAINT " + name + " FOREIGN KEY (" + strings.Join(from, ", ") +
		") REFERENCES " + c.table(ref.out.Name) + " (" + strings.Join(to, ", ") + ") NOT VALID"
	if err := c.try(ctx, stmt); err != nil {
		c.note("%s: foreign key (%s) to %s not added: %s", p.out.Name, strings.Join(fk.Columns, ", "), fk.RefTable, pgMessage(err))
		return
	}
	if err := c.try(ctx, "ALTER TABLE "+table+" VALIDATE CONSTRAINT "+name); err != nil {
		c.note("%s: foreign key (%s) to %s kept NOT VALID: %s", p.out.Name, strings.Join(fk.Columns, ", "), fk.RefTable, pgMessage(err))
	}
}

// createView creates p's view from its SELECT.
func (c *copier) createView(ctx context.Context, p *tablePlan) {
	if p.view == "" {
		c.note("view %s not created: no SELECT found in its definition", p.src.Name)
		return
	}
	if err := c.try(ctx, "CREATE VIEW "+c.table(p.out.Name)+" AS "+p.view); err != nil {
		c.note("view %s not created: %s", p.src.Name, pgMessage(err))
	}
}

// quotedColumns returns the quoted copied names of source columns cols;
// false when one is not a column of p.
func (p *tablePlan) quotedColumns(cols []string) ([]string, bool) {
	var out []string
	for _, col := range cols {
		i := slices.IndexFunc(p.cols, func(cp colPlan) bool { return strings.EqualFold(cp.out.Source, col) })
		if i < 0 {
			return nil, false
		}
		out = append(out, pgx.Identifier{p.cols[i].out.Name}.Sanitize())
	}
	return out, true
}

func truncateName(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

// pgMessage returns the server's message of err, or its text.
func pgMessage(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Message + " (SQLSTATE " + pe.Code + ")"
	}
	return err.Error()
}

// copyRows streams the rows of one table into PostgreSQL with COPY.
func copyRows(ctx context.Context, tx pgx.Tx, src *sql.DB, p *tablePlan, ident pgx.Identifier) (int64, []string, error) {
	var exprs, cols []string
	for _, cp := range p.cols {
		exprs = append(exprs, cp.expr)
		cols = append(cols, cp.out.Name)
	}
	rows, err := src.QueryContext(ctx, "SELECT "+strings.Join(exprs, ", ")+" FROM "+sqliteQuote(p.src.Name))
	if err != nil {
		return 0, nil, err
	}
	defer rows.Close()
	s := &rowSource{rows: rows, plan: p, vals: make([]any, len(cols))}
	n, err := tx.CopyFrom(ctx, ident, cols, s)
	if err == nil {
		err = s.err
	}
	var notes []string
	if s.cleaned > 0 {
		notes = append(notes, fmt.Sprintf("%s: %d text values lost NUL bytes or invalid UTF-8", p.out.Name, s.cleaned))
	}
	return n, notes, err
}

// rowSource adapts SQLite rows to pgx.CopyFromSource.
type rowSource struct {
	rows    *sql.Rows
	plan    *tablePlan
	vals    []any
	err     error
	cleaned int
}

// Next reads the next row and converts its values.
func (s *rowSource) Next() bool {
	if s.err != nil || !s.rows.Next() {
		if s.err == nil {
			s.err = s.rows.Err()
		}
		return false
	}
	raw := make([]any, len(s.vals))
	ptrs := make([]any, len(raw))
	for i := range raw {
		ptrs[i] = &raw[i]
	}
	if err := s.rows.Scan(ptrs...); err != nil {
		s.err = err
		return false
	}
	for i, v := range raw {
		s.vals[i] = s.convert(s.plan.cols[i].out.Type, v)
	}
	return true
}

// convert turns a value read with the column's SQLite expression into
// the Go value pgx encodes for the column's type.
func (s *rowSource) convert(typ string, v any) any {
	if v == nil {
		return nil
	}
	switch typ {
	case "text":
		var str string
		switch x := v.(type) {
		case string:
			str = x
		case []byte:
			str = string(x)
		default:
			str = fmt.Sprint(x)
		}
		if strings.IndexByte(str, 0) >= 0 || !utf8.ValidString(str) {
			s.cleaned++
			str = strings.ToValidUTF8(strings.ReplaceAll(str, "\x00", ""), "\uFFFD")
		}
		return str
	case "bytea":
		switch x := v.(type) {
		case []byte:
			return x
		case string:
			return []byte(x)
		}
	}
	return v
}

// Values returns the current row.
func (s *rowSource) Values() ([]any, error) { return s.vals, nil }

// Err returns the first error reading or converting rows.
func (s *rowSource) Err() error { return s.err }

package mcpexec

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/executor/postgres"
	"github.com/text2sql-go/text2sql/guard"
	"github.com/text2sql-go/text2sql/schema"
)

// The information_schema queries of a PostgreSQL server: every table and
// view outside the system schemas that no extension owns, their columns,
// and their primary and foreign keys (composite keys in key order).
const (
	columnsQuery = `SELECT c.table_schema, c.table_name, t.table_type, c.column_name, c.data_type, c.is_nullable
FROM information_schema.columns c
JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
WHERE c.table_schema NOT IN ('pg_catalog', 'information_schema')
  AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_depend d WHERE d.classid = 'pg_catalog.pg_class'::pg_catalog.regclass
    AND d.objid = (pg_catalog.quote_ident(c.table_schema) || '.' || pg_catalog.quote_ident(c.table_name))::pg_catalog.regclass AND d.deptype = 'e')
ORDER BY c.table_schema, c.table_name, c.ordinal_position`
	keysQuery = `SELECT kcu.table_schema, kcu.table_name, kcu.constraint_name, tc.constraint_type, kcu.column_name,
  rk.table_schema AS ref_schema, rk.table_name AS ref_table, rk.column_name AS ref_column
FROM information_schema.table_constraints tc
JOIN information_schema.key_column_usage kcu
  ON kcu.constraint_schema = tc.constraint_schema AND kcu.constraint_name = tc.constraint_name AND kcu.table_name = tc.table_name
LEFT JOIN information_schema.referential_constraints rc
  ON rc.constraint_schema = tc.constraint_schema AND rc.constraint_name = tc.constraint_name
LEFT JOIN information_schema.key_column_usage rk
  ON rk.constraint_schema = rc.unique_constraint_schema AND rk.constraint_name = rc.unique_constraint_name
  AND rk.ordinal_position = kcu.position_in_unique_constraint
WHERE tc.constraint_type IN ('PRIMARY KEY', 'FOREIGN KEY') AND tc.table_schema NOT IN ('pg_catalog', 'information_schema')
ORDER BY kcu.table_schema, kcu.table_name, kcu.constraint_name, kcu.ordinal_position`
)

// fromInformationSchema reads the schema of a PostgreSQL server through
// the query tool; the guard is PostgreSQL's parser.
func (e *Executor) fromInformationSchema(ctx context.Context) error {
	d := e.opts.Dialect
	if d == "" {
		d = text2sql.DialectPostgres
	}
	if d != text2sql.DialectPostgres {
		return fmt.Errorf("%w: mcpexec: the schema of a %s server is read from describe_schema only", text2sql.ErrInvalidConfig, d)
	}
	if !e.ownServer {
		if err := e.checkServerTimeout(ctx); err != nil {
			return err
		}
	}
	cols, err := e.query(ctx, columnsQuery)
	if err != nil {
		return err
	}
	keys, err := e.query(ctx, keysQuery)
	if err != nil {
		return err
	}
	db := &schema.Database{Name: "mcp", Dialect: d}
	tables := map[[2]string]*schema.Table{}
	for _, r := range cols {
		k := [2]string{r.str(0), r.str(1)}
		t := tables[k]
		if t == nil {
			t = &schema.Table{Schema: k[0], Name: k[1], Kind: schema.KindTable}
			if r.str(2) == "VIEW" {
				t.Kind = schema.KindView
			}
			tables[k] = t
			db.Tables = append(db.Tables, t)
		}
		t.Columns = append(t.Columns, schema.Column{Name: r.str(3), Type: r.str(4), NotNull: r.str(5) == "NO"})
	}
	var fk *schema.ForeignKey
	var fkName string
	for _, r := range keys {
		t := tables[[2]string{r.str(0), r.str(1)}]
		if t == nil {
			continue
		}
		if r.str(3) == "PRIMARY KEY" {
			t.PrimaryKey = append(t.PrimaryKey, r.str(4))
			continue
		}
		if fk == nil || fkName != r.str(0)+"."+r.str(1)+"."+r.str(2) {
			t.ForeignKeys = append(t.ForeignKeys, schema.ForeignKey{RefSchema: r.str(5), RefTable: r.str(6)})
			fk, fkName = &t.ForeignKeys[len(t.ForeignKeys)-1], r.str(0)+"."+r.str(1)+"."+r.str(2)
		}
		fk.Columns = append(fk.Columns, r.str(4))
		fk.RefColumns = append(fk.RefColumns, r.str(7))
	}
	e.schema = db
	guard, err := e.postgresGuard(ctx, db)
	if err != nil {
		return err
	}
	e.guard, e.wrapLimit = guard, true
	return nil
}

// statementTimeoutQuery reads the statement_timeout of the server's
// sessions, in milliseconds (pg_settings' unit for it): the login's,
// the database's or the DSN's, as the server applied them.
const statementTimeoutQuery = "SELECT setting FROM pg_catalog.pg_settings WHERE name = 'statement_timeout'"

// checkServerTimeout reads the server's statement_timeout into
// e.serverTimeout and fails with ErrUnboundedServer when it is unset or
// longer than the executor's time limit, unless the options allow it.
func (e *Executor) checkServerTimeout(ctx context.Context) error {
	rows, err := e.query(ctx, statementTimeoutQuery)
	if err != nil {
		return err
	}
	var ms int64
	if len(rows) != 1 {
		return fmt.Errorf("mcpexec: reading the server's statement_timeout: %d rows", len(rows))
	}
	if _, err := fmt.Sscan(rows[0].str(0), &ms); err != nil {
		return fmt.Errorf("mcpexec: reading the server's statement_timeout %q: %w", rows[0].str(0), err)
	}
	e.serverTimeout = time.Duration(ms) * time.Millisecond
	limit := e.opts.Timeout
	if ms > 0 && e.serverTimeout <= limit || e.opts.AllowUnboundedServer {
		return nil
	}
	has := "no statement_timeout"
	if ms > 0 {
		has = "statement_timeout " + e.serverTimeout.String()
	}
	return fmt.Errorf("%w: its sessions have %s, the time limit is %v, so a statement stopped at the limit would run on "+
		"on the server, holding one of the MCP server's connections. Give the login the MCP server connects as a "+
		"statement_timeout of at most %v: text2sql grant --statement-timeout %v prints ALTER ROLE ... SET statement_timeout "+
		"(or add options=-c%%20statement_timeout%%3D%d to the server's DSN)",
		ErrUnboundedServer, has, limit, limit, limit, limit.Milliseconds())
}

// postgresGuard is PostgreSQL's parse-tree guard with the server's own
// catalog read through the query tool (so attribute notation, (k).f,
// cannot call a function of the server's that the allow-list refuses,
// and no name may resolve to the database's own operators, functions or
// tainted types), scoped to the server session's search path and db, so
// that only db's relations are read and are sent qualified; and the
// refusal of backslashes in '…' strings, since the server's
// standard_conforming_strings is not this executor's to pin. The search
// path itself is not this executor's to pin either: names are decided on
// the one the server reports.
func (e *Executor) postgresGuard(ctx context.Context, db *schema.Database) (text2sql.Guard, error) {
	rows, err := e.query(ctx, postgres.CatalogQuery)
	if err != nil {
		return nil, err
	}
	procs := make([]postgres.CatalogRow, 0, len(rows))
	for _, r := range rows {
		procs = append(procs, postgres.CatalogRow{Name: r.str(0), Volatility: r.str(1), Callable: r.str(2) == "true", Core: r.str(3) == "true",
			Extension: r.str(4) == "true", Schema: r.str(5)})
	}
	objRows, err := e.query(ctx, postgres.ObjectsQuery)
	if err != nil {
		return nil, err
	}
	objs := make([]postgres.CatalogObject, 0, len(objRows))
	for _, r := range objRows {
		var oid int64
		fmt.Sscan(r.str(3), &oid)
		objs = append(objs, postgres.CatalogObject{Kind: r.str(0), Schema: r.str(1), Name: r.str(2), OID: oid, Tainted: r.str(4) == "true", Column: r.str(5)})
	}
	version, err := e.query(ctx, "SELECT current_setting('server_version_num')::int")
	if err != nil {
		return nil, err
	}
	num := 0
	if len(version) == 1 {
		fmt.Sscan(version[0].str(0), &num)
	}
	paths, err := e.query(ctx, "SELECT to_json(current_schemas(false))::text")
	if err != nil {
		return nil, err
	}
	var path []string
	if len(paths) == 1 {
		if err := json.Unmarshal([]byte(paths[0].str(0)), &path); err != nil {
			return nil, fmt.Errorf("mcpexec: search_path: %w", err)
		}
	}
	return pgGuard{postgres.NewGuard(postgres.CatalogFrom(procs, objs, num), nil).Scoped(path, db)}, nil
}

// pgGuard is postgres.Guard, then the backslash refusal.
type pgGuard struct{ pg *postgres.Guard }

func (g pgGuard) Check(ctx context.Context, sql string) error {
	if _, serr := g.Prepare(sql); serr != nil {
		return serr
	}
	return nil
}

// Prepare checks sql and returns the text to send (see
// postgres.Guard.Prepare).
func (g pgGuard) Prepare(sql string) (string, *text2sql.SQLError) {
	text, serr := g.pg.Prepare(sql)
	if serr != nil {
		return "", serr
	}
	if serr := guard.BackslashInString(sql); serr != nil {
		return "", serr
	}
	return text, nil
}

// row is one result row.
type row []any

func (r row) str(i int) string {
	if i >= len(r) || r[i] == nil {
		return ""
	}
	return fmt.Sprint(r[i])
}

// maxCatalogRows bounds the catalog queries' rows: a column each, so a
// schema of 10,000 tables of 100 columns.
const maxCatalogRows = 1_000_000

// query runs one of this package's own catalog queries. The guard would
// refuse them (they read information_schema, which generated SQL may
// not); they are constants of this package, not input.
func (e *Executor) query(ctx context.Context, sql string) ([]row, error) {
	res, err := e.call(ctx, sql, maxCatalogRows, e.opts.ConnectTimeout)
	if err != nil {
		return nil, err
	}
	if res.Error != nil {
		return nil, fmt.Errorf("mcpexec: reading the schema: %w", res.Error)
	}
	out := make([]row, len(res.Rows))
	for i, r := range res.Rows {
		out[i] = r
	}
	return out, nil
}

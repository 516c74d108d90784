package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"unicode"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/spf13/cobra"
	"mvdan.cc/sh/v3/shell"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/executor/mcpexec"
	"github.com/text2sql-go/text2sql/executor/mysql"
	"github.com/text2sql-go/text2sql/executor/postgres"
	"github.com/text2sql-go/text2sql/executor/sqlite"
	"github.com/text2sql-go/text2sql/internal/pgload"
	"github.com/text2sql-go/text2sql/schema"
)

// guarded is what the commands need of an executor; the SQLite,
// PostgreSQL and MySQL executors all provide it.
type guarded interface {
	text2sql.Executor
	text2sql.Guard
	Schema() *schema.Database
	Close() error
}

// openExecutor opens the guarded executor the flags name: the SQLite file
// at path, or, with --dsn, a PostgreSQL server (postgres:// URL or
// key=value DSN) or a MySQL/MariaDB server (mysql:// URL or the driver's
// user@tcp(host)/db form), or the database behind --mcp, or the catalog
// of several of them.
func (o *options) openExecutor(ctx context.Context, path string) (guarded, error) {
	switch {
	case o.members != nil:
		return o.openCatalog(ctx)
	case o.mcp != "":
		return o.openSource(ctx, member{flag: "mcp", spec: o.mcp})
	case o.dsn != "":
		return o.openSource(ctx, member{flag: "dsn", spec: o.dsn})
	}
	return o.openSource(ctx, member{flag: "db", spec: path})
}

// openSource opens the executor of one --db, --dsn or --mcp value (its
// NAME= already split off).
func (o *options) openSource(ctx context.Context, m member) (guarded, error) {
	pg := m.flag == "dsn" && isPostgresDSN(m.spec)
	if err := o.caller.usage(pg); err != nil {
		return nil, err
	}
	switch {
	case m.flag == "mcp":
		return o.openMCP(ctx, m.spec)
	case m.flag == "db":
		snapshot, err := o.schemaSnapshot(m.spec)
		if err != nil {
			return nil, err
		}
		ex, err := sqlite.Open(m.spec, sqlite.Options{MaxRows: o.maxRows, Timeout: o.timeout, SchemaSnapshot: snapshot})
		if err != nil {
			return nil, err
		}
		return ex, nil
	case pg:
		opts := postgres.Options{MaxRows: o.maxRows, Timeout: o.timeout}
		if err := o.caller.apply(&opts); err != nil {
			return nil, err
		}
		ex, err := postgres.Open(ctx, m.spec, opts)
		if err != nil {
			return nil, err
		}
		return ex, nil
	case mysql.IsDSN(m.spec):
		ex, err := mysql.Open(ctx, m.spec, mysql.Options{MaxRows: o.maxRows, Timeout: o.timeout})
		if err != nil {
			return nil, err
		}
		return ex, nil
	}
	return nil, &exitErr{code: exitUsage, err: errors.New("--dsn must be a postgres://… or mysql://… DSN")}
}

// openMCP opens the database behind an --mcp server, [NAME=]SERVER: a URL
// is a streamable HTTP endpoint, anything else a command line (shell
// quoting, $VARIABLES expanded from the environment) run on stdio. NAME
// names the database.
func (o *options) openMCP(ctx context.Context, v string) (guarded, error) {
	if o.caller.decides() {
		return nil, &exitErr{code: exitUsage, err: errors.New("--mcp: the MCP server decides who runs the statements; --run-as, --rls-claims and --login-map do not apply")}
	}
	name, spec := mcpSpec(v)
	opts := mcpexec.Options{MaxRows: o.maxRows, Timeout: o.timeout}
	if strings.HasPrefix(spec, "http://") || strings.HasPrefix(spec, "https://") {
		opts.URL = spec
	} else {
		args, err := shell.Fields(spec, os.Getenv)
		if err != nil || len(args) == 0 {
			return nil, &exitErr{code: exitUsage, err: fmt.Errorf("--mcp %q: not a command line: %v", v, err)}
		}
		opts.Command = args
	}
	ex, err := mcpexec.Open(ctx, opts)
	if err != nil {
		return nil, err
	}
	if name != "" {
		ex.Schema().Name = name
	}
	return ex, nil
}

// mcpSpec splits --mcp's [NAME=]SERVER: NAME is a word of letters,
// digits, '_' and '-' before the first '='.
func mcpSpec(v string) (name, spec string) {
	if i := strings.IndexByte(v, '='); i > 0 && strings.IndexFunc(v[:i], func(r rune) bool {
		return !(r == '_' || r == '-' || unicode.IsLetter(r) || unicode.IsDigit(r))
	}) < 0 {
		return v[:i], v[i+1:]
	}
	return "", v
}

// isPostgresDSN reports whether s is a PostgreSQL DSN: a postgres:// or
// postgresql:// URL, or a key=value string naming a host or database.
func isPostgresDSN(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://") ||
		!strings.Contains(s, "://") && (strings.Contains(s, "host=") || strings.Contains(s, "dbname="))
}

// indexKey identifies the database for the persistent index: the
// absolute path of a file, or the DSN without its password.
func (o *options) indexKey(path string) (string, error) {
	if o.members != nil {
		return o.catalogKey()
	}
	if o.mcp != "" {
		return "mcp:" + o.mcp, nil // hashed into a directory name, never stored
	}
	if o.dsn == "" {
		return filepath.Abs(path)
	}
	if isPostgresDSN(o.dsn) {
		if cfg, err := pgx.ParseConfig(o.dsn); err == nil {
			return fmt.Sprintf("postgres://%s@%s:%d/%s?search_path=%s", cfg.User, cfg.Host, cfg.Port, cfg.Database, cfg.RuntimeParams["search_path"]), nil
		}
	}
	if d, err := mysql.DSN(o.dsn); err == nil {
		if i := strings.LastIndexByte(d, '@'); i >= 0 {
			user := d[:i]
			if j := strings.IndexByte(user, ':'); j >= 0 {
				user = user[:j]
			}
			return "mysql://" + user + "@" + d[i+1:], nil
		}
	}
	return o.dsn, nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func loadCmd(o *options) *cobra.Command {
	var (
		schemaName    string
		replace, fold bool
	)
	c := &cobra.Command{
		Use:   "load --db FILE.sqlite --dsn postgres://… --schema NAME",
		Short: "Copy a SQLite database into a PostgreSQL schema",
		Long: `Copy the tables of a SQLite database (opened read-only) into a new schema
of a PostgreSQL database, in one transaction, then print what was made.

Column types follow the values: integers → bigint, reals → double precision
(numeric when declared DECIMAL/NUMERIC), text or mixed values → text, blobs
→ bytea. Primary keys are added when the data satisfies them, foreign keys
NOT VALID and then validated where the rows allow, views when PostgreSQL
accepts their SQL; what does not carry over is listed as a note.

Names are kept exactly (quoted where needed); --fold-names lower-cases the
names PostgreSQL would fold anyway, so SQL written for SQLite with unquoted
mixed-case names runs unchanged.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.db == "" || o.dsn == "" || schemaName == "" {
				return &exitErr{code: exitUsage, err: errors.New("load needs --db FILE.sqlite, --dsn postgres://… and --schema NAME")}
			}
			if !isPostgresDSN(o.dsn) {
				return &exitErr{code: exitUsage, err: errors.New("load copies into PostgreSQL: --dsn must be a postgres://… DSN")}
			}
			if st, err := os.Stat(o.db); err != nil || !st.Mode().IsRegular() {
				return &exitErr{code: exitUsage, err: fmt.Errorf("--db %s: not a readable file", o.db)}
			}
			srcDSN, err := sqlite.DSN(o.db, true)
			if err != nil {
				return err
			}
			src, err := sql.Open("sqlite3", srcDSN)
			if err != nil {
				return err
			}
			defer src.Close()
			cfg, err := pgx.ParseConfig(o.dsn)
			if err != nil {
				return &exitErr{code: exitUsage, err: fmt.Errorf("--dsn: %w", err)}
			}
			dst := stdlib.OpenDB(*cfg)
			defer dst.Close()
			rep, err := pgload.CopySQLite(cmd.Context(), src, dst, schemaName, pgload.CopyOptions{Replace: replace, FoldNames: fold})
			if err != nil {
				if errors.Is(err, text2sql.ErrInvalidConfig) {
					return &exitErr{code: exitUsage, err: err}
				}
				return err
			}
			if o.json {
				return writeJSON(cmd.OutOrStdout(), rep)
			}
			printCopy(cmd, rep)
			return nil
		},
	}
	c.Flags().StringVar(&schemaName, "schema", "", "PostgreSQL schema to create (exact name)")
	c.Flags().BoolVar(&replace, "replace", false, "drop the schema first if it exists (DROP SCHEMA … CASCADE)")
	c.Flags().BoolVar(&fold, "fold-names", false, "lower-case plain table and column names, as PostgreSQL folds unquoted names")
	return c
}

func printCopy(cmd *cobra.Command, rep *pgload.CopyReport) {
	w := cmd.OutOrStdout()
	fmt.Fprintf(w, "copied %d tables and views into schema %s\n\n", len(rep.Tables), rep.Schema)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SQLITE\tPOSTGRESQL\tKIND\tROWS\tCOLUMNS")
	for _, t := range rep.Tables {
		var cols []string
		for _, c := range t.Columns {
			s := strings.TrimSpace(schema.Quote(text2sql.DialectPostgres, c.Name) + " " + c.Type)
			if c.Mixed {
				s += " (mixed)"
			}
			cols = append(cols, s)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", t.Source, schema.Quote(text2sql.DialectPostgres, t.Name), t.Kind, t.Rows, strings.Join(cols, ", "))
	}
	tw.Flush()
	if len(rep.Notes) > 0 {
		fmt.Fprintln(w, "\nnotes:")
		for _, n := range rep.Notes {
			fmt.Fprintln(w, "  "+n)
		}
	}
}

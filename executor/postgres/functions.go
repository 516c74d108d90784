package postgres

import (
	"context"
	"database/sql"
	_ "embed" // the built-in catalog snapshot
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/jmoiron/sqlx"
)

// The function allow-list is derived from a catalog — the server's own
// pg_proc when the executor has a server (LoadCatalog), or a snapshot of
// PostgreSQL 15's pg_catalog embedded in this package (BuiltinCatalog) —
// by one rule rather than from a list of remembered names. A function
// name is allowed when:
//
//   - it is a function, aggregate or window function of pg_catalog;
//   - every overload of it that SQL can call (no argument or result of
//     type internal, trigger or a handler type) is immutable or stable,
//     so it only computes a value from its arguments, the database
//     and the session — or it is one of the volatile functions that
//     only draw random numbers or read the clock (volatileAllowed);
//   - it is in no denied category (deniedCategories): reading server
//     files or running programs, large objects, managing the server or
//     other sessions, statistics of other sessions, replication,
//     settings, sleeping, advisory locks, sequences, notifications,
//     transaction ids and snapshots, and functions that run a query or
//     dump a whole table, schema or database given as text
//     (query_to_xml, table_to_xml, ts_stat, …).
//
// The same rule decides the functions of trusted extensions (see Guard:
// members a superuser owns), called without a schema or with theirs:
// PostGIS's st_distance, pg_trgm's similarity. Other functions of other
// schemas (the application's own) are allowed only by name through
// Options.AllowFunctions.

// volatileAllowed are the volatile pg_catalog functions that change
// nothing: random numbers and the clock.
var volatileAllowed = []string{"random", "random_normal", "clock_timestamp", "timeofday", "gen_random_uuid",
	"array_shuffle", "array_sample"}

// deniedCategories are the pg_catalog functions refused whatever their
// volatility, by category; the patterns are path.Match globs on the name.
var deniedCategories = []struct {
	what     string // completes "function … is not allowed: it …"
	patterns []string
}{
	{"reads server files, runs programs or reads the server's configuration files", []string{"pg_read_file*", "pg_read_binary_file*",
		"pg_ls_*", "pg_stat_file", "pg_current_logfile", "pg_file_*", "pg_logdir_ls", "pg_config", "pg_control_*",
		"pg_hba_file_rules", "pg_ident_file_mappings", "pg_show_all_file_settings", "pg_import_system_collations"}},
	{"works on large objects", []string{"lo_*", "loread", "lowrite"}},
	{"manages the server or other sessions", []string{"pg_terminate_backend", "pg_cancel_backend", "pg_reload_conf",
		"pg_rotate_logfile*", "pg_promote", "pg_switch_wal", "pg_create_restore_point", "pg_backup_*", "pg_start_backup",
		"pg_stop_backup", "pg_wal_replay_*", "pg_log_*", "pg_blocking_pids", "pg_safe_snapshot_blocking_pids",
		"pg_isolation_test_session_is_blocked", "pg_get_backend_memory_contexts", "pg_get_shmem_allocations",
		"pg_lock_status", "pg_cursor", "pg_prepared_statement", "pg_prepared_xact", "pg_nextoid",
		"pg_stop_making_pinned_objects", "binary_upgrade_*", "pg_extension_config_dump", "pg_event_trigger_*"}},
	{"reads or resets statistics, which show other sessions' queries", []string{"pg_stat_*"}},
	{"manages replication", []string{"*replication*", "pg_logical_*", "pg_*_slot*"}},
	{"reads or changes settings", []string{"set_config", "current_setting", "pg_show_all_settings", "pg_settings_get_flags", "setseed"}},
	{"sleeps", []string{"pg_sleep*"}},
	{"takes advisory locks", []string{"pg_advisory*", "pg_try_advisory*"}},
	{"uses sequences", []string{"nextval", "setval", "currval", "lastval", "pg_sequence_last_value"}},
	{"sends or reads notifications", []string{"pg_notify", "pg_listening_channels", "pg_notification_queue_usage"}},
	{"assigns or reads transaction ids and snapshots", []string{"txid_*", "pg_current_xact_id*", "pg_current_snapshot",
		"pg_export_snapshot", "pg_xact_*", "pg_last_*"}},
	{"runs a query or dumps a table, schema or database given as text", []string{"query_to_xml*", "cursor_to_xml*",
		"table_to_xml*", "schema_to_xml*", "database_to_xml*", "ts_stat", "ts_rewrite"}},
	{"reaches other servers", []string{"dblink*", "postgres_fdw_*"}},
	{"reads the definitions or comments of objects given by oid or name, those of relations not exposed too",
		[]string{"pg_get_*def*", "pg_get_expr", "pg_get_function_*", "pg_get_serial_sequence", "obj_description", "shobj_description",
			"col_description", "pg_describe_object", "pg_identify_object*", "pg_get_object_address"}},
	{"reads a value of a type given as data, running that type's input function (a domain's CHECK, say)",
		[]string{"array_in", "record_in", "domain_in", "range_in", "multirange_in", "pg_input_is_valid", "pg_input_error_info"}},
	{"loads libraries or reads the server's installation files", []string{"*_validator", "pg_available_extension*",
		"pg_extension_update_paths", "pg_tablespace_location", "pg_relation_filepath"}},
}

// denied returns what a denied category's function does, or "".
func denied(name string) string {
	for _, c := range deniedCategories {
		for _, p := range c.patterns {
			if ok, _ := path.Match(p, name); ok {
				return c.what
			}
		}
	}
	return ""
}

// Catalog is what the statement check knows of a server's functions: the
// pg_catalog functions the allow-list is derived from (see the rule
// above) and the name of every function in every schema, which attribute
// notation (t.f, (expr).f) could call. It is immutable and safe for
// concurrent use.
type Catalog struct {
	allowed map[string]bool
	why     map[string]string // a refused pg_catalog name → the reason
	known   map[string]bool
	// extSchemas maps the name of a trusted extension's function to the
	// schemas that have one (the rule decides its name with pg_catalog's).
	extSchemas map[string][]string
	// major is the server's major version (0: not known), for the
	// constructs the parser knows and older servers read otherwise.
	major int
	// trust is what the catalog knows of untrusted code (see Guard).
	trust trust
}

// proc is one pg_proc row as the rule reads it.
type proc struct {
	name       string
	volatility byte // 'i' immutable, 's' stable, 'v' volatile
	callable   bool // no argument or result SQL cannot hold
	core       bool // in pg_catalog, made by initdb
	// ext says it is a trusted extension's (see member), in schema.
	ext    bool
	schema string
}

func newCatalog(procs []proc) *Catalog {
	c := &Catalog{allowed: map[string]bool{}, why: map[string]string{}, known: map[string]bool{}, extSchemas: map[string][]string{}}
	vol := map[string]bool{}
	for _, n := range volatileAllowed {
		vol[n] = true
	}
	for _, p := range procs {
		c.known[p.name] = true
		if !(p.core || p.ext) || !p.callable {
			continue
		}
		if p.ext && !slices.Contains(c.extSchemas[p.name], p.schema) {
			c.extSchemas[p.name] = append(c.extSchemas[p.name], p.schema)
		}
		if _, seen := c.allowed[p.name]; !seen {
			c.allowed[p.name] = true
			if what := denied(p.name); what != "" {
				c.allowed[p.name] = false
				c.why[p.name] = "it " + what
			}
		}
		if p.volatility == 'v' && !vol[p.name] && c.allowed[p.name] {
			c.allowed[p.name] = false
			c.why[p.name] = "it is volatile (it may change state)"
		}
	}
	return c
}

// catalogSQL lists pg_proc: name, volatility, whether SQL can call it
// (no argument of type internal, no result of a pseudo-type only the
// server uses), whether it is a built-in of pg_catalog, whether it is a
// trusted member of an extension named in trusted (nil: any; see member)
// and its schema. Procedures are left out: a query cannot call them.
func catalogSQL(trusted []string) string {
	return `SELECT p.proname AS name, p.provolatile::text AS volatility,
	NOT (p.prorettype = ANY ('{internal,trigger,event_trigger,language_handler,fdw_handler,index_am_handler,table_am_handler,tsm_handler}'::regtype[]::oid[])
	     OR 'internal'::regtype = ANY (p.proargtypes::oid[])) AS callable,
	p.pronamespace = 'pg_catalog'::pg_catalog.regnamespace::pg_catalog.oid AND p.oid < ` + builtinOID + ` AS core,
	` + strings.ReplaceAll(member("pg_catalog.pg_proc", "p.oid", "p.proowner"), "$EXT", extensionFilter(trusted)) + ` AS extension,
	p.pronamespace::regnamespace::text AS schema
FROM pg_proc p WHERE p.prokind <> 'p'`
}

// LoadCatalog reads the catalog of the server db is connected to,
// trusting every installed extension (see Guard). An error is a failing
// query.
func LoadCatalog(ctx context.Context, db *sql.DB) (*Catalog, error) {
	return loadCatalog(ctx, db, nil)
}

// loadCatalog is LoadCatalog trusting only the extensions named (nil:
// all).
//
// The queries run in a read-only transaction whose search path is
// pg_catalog alone, so that their own operators resolve to no operator of
// the database's, and without JIT compilation (which costs the trust
// query seconds).
func loadCatalog(ctx context.Context, db *sql.DB, extensions []string) (*Catalog, error) {
	tx, err := sqlx.NewDb(db, "pgx").BeginTxx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("postgres: catalog: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // read-only, nothing to keep
	if _, err := tx.ExecContext(ctx, "SET LOCAL search_path TO pg_catalog; SET LOCAL jit = off"); err != nil {
		return nil, fmt.Errorf("postgres: catalog: %w", err)
	}
	var rows []CatalogRow
	if err := sqlx.SelectContext(ctx, tx, &rows, catalogSQL(extensions)); err != nil {
		return nil, fmt.Errorf("postgres: function catalog: %w", err)
	}
	c := newCatalog(procsOf(rows))
	var num int
	if err := tx.QueryRowContext(ctx, `SHOW server_version_num`).Scan(&num); err != nil {
		return nil, fmt.Errorf("postgres: server version: %w", err)
	}
	c.major = num / 10000
	var objs []CatalogObject
	if err := sqlx.SelectContext(ctx, tx, &objs, objectsSQL(extensions)); err != nil {
		return nil, fmt.Errorf("postgres: trust of operators, functions and types: %w", err)
	}
	c.trust = newTrust(objs, extensions)
	return c, nil
}

// ObjectsQuery lists, as CatalogObjects, the untrusted functions and
// operators, the types and which are tainted, and the catalog's
// watermark, trusting every installed extension (see Guard).
var ObjectsQuery = objectsSQL(nil)

// newerSyntax are the parse nodes of the SQL/JSON and MERGE constructs
// added after PostgreSQL 15, every node of them (their parts too, so a
// construct missed at its top is caught by a part), by the major version
// that has them. An older server parses the same text as a call of an
// ordinary function by that name (JSON_SCALAR(x) as json_scalar(x),
// JSON(x) as json(x)), which the check did not decide; so they are
// refused on older servers (KindDialect).
var newerSyntax = map[string]int{
	"JsonObjectConstructor": 16, "JsonArrayConstructor": 16, "JsonArrayQueryConstructor": 16, "JsonAggConstructor": 16,
	"JsonObjectAgg": 16, "JsonArrayAgg": 16, "JsonIsPredicate": 16, "JsonConstructorExpr": 16, "JsonKeyValue": 16,
	"JsonFormat": 16, "JsonOutput": 16, "JsonReturning": 16, "JsonValueExpr": 16,
	"JsonFuncExpr": 17, "JsonParseExpr": 17, "JsonScalarExpr": 17, "JsonSerializeExpr": 17, "JsonExpr": 17,
	"JsonArgument": 17, "JsonBehavior": 17, "JsonTable": 17, "JsonTableColumn": 17, "JsonTablePath": 17,
	"JsonTablePathScan": 17, "JsonTablePathSpec": 17, "JsonTableSiblingJoin": 17, "MergeSupportFunc": 17,
}

// tooNew reports whether the parse node named node needs a newer server
// than the catalog's, and that version.
func (c *Catalog) tooNew(node string) (int, bool) {
	v, ok := newerSyntax[node]
	return v, ok && c.major > 0 && c.major < v
}

func procsOf(rows []CatalogRow) []proc {
	procs := make([]proc, 0, len(rows))
	for _, r := range rows {
		p := proc{name: r.Name, callable: r.Callable, core: r.Core, ext: r.Extension, schema: r.Schema}
		if r.Volatility != "" {
			p.volatility = r.Volatility[0]
		}
		procs = append(procs, p)
	}
	return procs
}

// CatalogQuery is the query LoadCatalog reads the functions with,
// trusting every extension; its rows are CatalogRows. For a server
// reached without database/sql (an MCP server's query tool): run it
// there with search_path pg_catalog and give the rows to CatalogFrom.
var CatalogQuery = catalogSQL(nil)

// CatalogRow is one row of CatalogQuery: a function's name, volatility
// ("i", "s" or "v"), whether SQL can call it, whether it is a built-in of
// pg_catalog, whether a trusted extension's (see Guard), and its schema.
type CatalogRow struct {
	Name       string `db:"name"`
	Volatility string `db:"volatility"`
	Callable   bool   `db:"callable"`
	Core       bool   `db:"core"`
	Extension  bool   `db:"extension"`
	Schema     string `db:"schema"`
}

// CatalogFrom is the Catalog of CatalogQuery's and ObjectsQuery's rows
// read elsewhere, for a server whose server_version_num is versionNum (0:
// not known).
func CatalogFrom(rows []CatalogRow, objs []CatalogObject, versionNum int) *Catalog {
	c := newCatalog(procsOf(rows))
	c.major = versionNum / 10000
	c.trust = newTrust(objs, nil)
	return c
}

//go:embed catalog.tsv
var builtinTSV string

// BuiltinCatalog returns the catalog of PostgreSQL 15's pg_catalog as
// shipped in this package (catalog.tsv), for the check without a server.
// It knows no function of other schemas, so a server's own catalog
// (LoadCatalog) is what an executor uses.
func BuiltinCatalog() *Catalog { return builtin() }

// builtin is read from catalog.tsv on first use, so that a program that
// never checks PostgreSQL statements does not pay for it at start-up.
var builtin = sync.OnceValue(func() *Catalog { return newCatalog(parseTSV(builtinTSV)) })

// parseTSV reads catalog.tsv: a line per distinct pg_catalog row of
// catalogQuery, "name<TAB>volatility<TAB>callable(t|f)".
func parseTSV(s string) []proc {
	var procs []proc
	for _, line := range strings.Split(s, "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 3 || f[1] == "" {
			continue
		}
		procs = append(procs, proc{name: f[0], volatility: f[1][0], callable: f[2] == "t", core: true})
	}
	return procs
}

// formatTSV writes the pg_catalog rows of procs in the form parseTSV
// reads, sorted and without duplicates.
func formatTSV(procs []proc) string {
	seen := map[string]bool{}
	var lines []string
	for _, p := range procs {
		if !p.core {
			continue
		}
		cl := "f"
		if p.callable {
			cl = "t"
		}
		line := p.name + "\t" + string(p.volatility) + "\t" + cl
		if !seen[line] {
			seen[line] = true
			lines = append(lines, line)
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n") + "\n"
}

// otherDialect maps functions of other SQL dialects that PostgreSQL does
// not have to the PostgreSQL way of doing the same, for the hint of a
// KindDialect refusal.
var otherDialect = map[string]string{
	"strftime":          "to_char(ts, 'YYYY-MM-DD') or EXTRACT(YEAR FROM ts)",
	"julianday":         "date arithmetic (d2 - d1) or EXTRACT(EPOCH FROM …)",
	"datetime":          "a cast: CAST(x AS timestamp)",
	"unixepoch":         "EXTRACT(EPOCH FROM ts)",
	"ifnull":            "coalesce(x, y)",
	"nvl":               "coalesce(x, y)",
	"isnull":            "x IS NULL or coalesce(x, y)",
	"iif":               "CASE WHEN … THEN … ELSE … END",
	"if":                "CASE WHEN … THEN … ELSE … END",
	"group_concat":      "string_agg(x, ',')",
	"instr":             "strpos(string, substring)",
	"locate":            "strpos(string, substring)",
	"charindex":         "strpos(string, substring)",
	"len":               "length(x)",
	"total":             "coalesce(sum(x), 0)",
	"printf":            "format('%s', x) or to_char",
	"typeof":            "pg_typeof(x)",
	"unicode":           "ascii(x)",
	"hex":               "to_hex(n) or encode(bytes, 'hex')",
	"date_format":       "to_char(ts, 'YYYY-MM-DD')",
	"curdate":           "current_date",
	"curtime":           "current_time",
	"getdate":           "now()",
	"sysdate":           "now()",
	"datediff":          "date subtraction: d2 - d1, or EXTRACT(EPOCH FROM ts2 - ts1)",
	"dateadd":           "ts + interval '1 day'",
	"timestampdiff":     "EXTRACT(EPOCH FROM ts2 - ts1) or age(ts2, ts1)",
	"year":              "EXTRACT(YEAR FROM x)",
	"month":             "EXTRACT(MONTH FROM x)",
	"day":               "EXTRACT(DAY FROM x)",
	"str_to_date":       "to_date(text, format) or to_timestamp(text, format)",
	"last_insert_rowid": "nothing: queries here cannot insert",
	"zeroblob":          "nothing: build bytea values with decode(…)",
	"randomblob":        "gen_random_uuid() or random()",
	"mid":               "substr(x, start, length)",
	"ucase":             "upper(x)",
	"lcase":             "lower(x)",
	"truncate":          "trunc(x, digits)",
	"rand":              "random()",
}

package schema

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/jmoiron/sqlx"

	text2sql "github.com/text2sql-go/text2sql"
)

// InspectPostgres reads the schema of a PostgreSQL database through
// database/sql (any driver; the module's executor uses
// github.com/jackc/pgx/v5/stdlib), from the system catalogs:
//
//   - Relations of the given schemas: ordinary and partitioned tables and
//     foreign tables (KindTable), views (KindView) and materialized views
//     (KindMaterializedView). Partitions are left out: their parent
//     stands for them. An empty schemas list means every schema except
//     the system ones (pg_catalog, information_schema, pg_toast and the
//     other pg_* schemas). Names are exact, as stored: a table created as
//     "Riskitems" is Name "Riskitems", which Quote renders quoted.
//   - Every table's Schema is set, "public" included.
//   - Columns in attribute order, with the type as format_type prints it
//     ("integer", "character varying(20)", "text[]", "numeric(10,2)", a
//     user type schema-qualified when it is not on the connection's
//     search_path) and NOT NULL.
//   - COMMENT ON TABLE/VIEW/COLUMN texts in Table.Comment and
//     Column.Comment. For a column of an enum type, or an array of one,
//     the labels in sort order are added to the comment:
//     "enum mood: 'sad', 'ok', 'happy'", after the COMMENT ON text and
//     "; " when there is one.
//   - Primary keys in key order; foreign keys in creation order with
//     RefSchema, RefTable and RefColumns (which may lie outside the
//     inspected schemas).
//
// The service's audit log (AuditTable) is left out. Tables are sorted by
// schema, then case-insensitively by name (ties by byte order).
// Database.Name is current_database(). Relations the connection's role
// cannot see in the catalogs are simply absent. Errors are those of the
// catalog queries, wrapped.
func InspectPostgres(ctx context.Context, db *sql.DB, schemas []string) (*Database, error) {
	out := &Database{Dialect: text2sql.DialectPostgres}
	if err := db.QueryRowContext(ctx, `SELECT current_database()`).Scan(&out.Name); err != nil {
		return nil, fmt.Errorf("schema: postgres: current database: %w", err)
	}
	if len(schemas) == 0 {
		var err error
		if schemas, err = postgresSchemas(ctx, db); err != nil {
			return nil, err
		}
	}
	// The schema list travels as one JSON text parameter, which every
	// driver can bind.
	js, err := json.Marshal(schemas)
	if err != nil {
		return nil, err
	}
	list := string(js)
	byOID, err := postgresRelations(ctx, db, list, out)
	if err != nil {
		return nil, err
	}
	if len(out.Tables) == 0 {
		return out, nil
	}
	if err := postgresColumns(ctx, db, list, byOID); err != nil {
		return nil, err
	}
	if err := postgresKeys(ctx, db, list, byOID); err != nil {
		return nil, err
	}
	return out, nil
}

// postgresRelations adds the relations of the schemas in list (a JSON
// array) to out.Tables, sorted, and returns them by their pg_class OID.
func postgresRelations(ctx context.Context, db *sql.DB, list string, out *Database) (map[int64]*Table, error) {
	byOID := map[int64]*Table{}
	rels, err := selectRows[struct {
		OID     int64  `db:"oid"`
		Schema  string `db:"schema"`
		Name    string `db:"name"`
		Kind    string `db:"kind"`
		Comment string `db:"comment"`
	}](ctx, db, `
		SELECT c.oid::int8 AS oid, n.nspname AS schema, c.relname AS name, c.relkind::text AS kind,
		       COALESCE(obj_description(c.oid, 'pg_class'), '') AS comment
		FROM pg_catalog.pg_class c
		JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname IN (SELECT json_array_elements_text($1::json))
		  AND c.relname <> $2
		  AND c.relkind IN ('r', 'p', 'f', 'v', 'm')
		  AND NOT c.relispartition
		  AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_depend d
		                  WHERE d.classid = 'pg_catalog.pg_class'::pg_catalog.regclass AND d.objid = c.oid AND d.deptype = 'e')`, list, AuditTable)
	if err != nil {
		return nil, fmt.Errorf("schema: postgres: relations: %w", err)
	}
	for _, r := range rels {
		t := &Table{Schema: r.Schema, Name: r.Name, Comment: r.Comment, Kind: KindTable}
		switch r.Kind {
		case "v":
			t.Kind = KindView
		case "m":
			t.Kind = KindMaterializedView
		}
		byOID[r.OID] = t
		out.Tables = append(out.Tables, t)
	}
	sort.SliceStable(out.Tables, func(i, j int) bool {
		a, b := out.Tables[i], out.Tables[j]
		if a.Schema != b.Schema {
			return a.Schema < b.Schema
		}
		if la, lb := strings.ToLower(a.Name), strings.ToLower(b.Name); la != lb {
			return la < lb
		}
		return a.Name < b.Name
	})
	return byOID, nil
}

// postgresColumns adds the columns of the relations in byOID, in
// attribute order, with enum labels added to their comments.
func postgresColumns(ctx context.Context, db *sql.DB, list string, byOID map[int64]*Table) error {
	cols, err := selectRows[struct {
		Rel     int64  `db:"rel"`
		Name    string `db:"name"`
		Type    string `db:"type"`
		NotNull bool   `db:"not_null"`
		Comment string `db:"comment"`
		Enum    string `db:"enum"`
		Labels  string `db:"labels"`
	}](ctx, db, `
		SELECT a.attrelid::int8 AS rel, a.attname AS name, pg_catalog.format_type(a.atttypid, a.atttypmod) AS type,
		       a.attnotnull AS not_null,
		       COALESCE(pg_catalog.col_description(a.attrelid, a.attnum), '') AS comment,
		       COALESCE(et.typname, '') AS enum,
		       COALESCE((SELECT string_agg(quote_literal(e.enumlabel), ', ' ORDER BY e.enumsortorder)
		                 FROM pg_catalog.pg_enum e WHERE e.enumtypid = et.oid), '') AS labels
		FROM pg_catalog.pg_attribute a
		JOIN pg_catalog.pg_class c ON c.oid = a.attrelid
		JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
		JOIN pg_catalog.pg_type t ON t.oid = a.atttypid
		LEFT JOIN pg_catalog.pg_type et
		       ON et.oid = CASE WHEN t.typcategory = 'A' THEN t.typelem ELSE t.oid END AND et.typtype = 'e'
		WHERE n.nspname IN (SELECT json_array_elements_text($1::json))
		  AND c.relname <> $2
		  AND c.relkind IN ('r', 'p', 'f', 'v', 'm') AND NOT c.relispartition
		  AND a.attnum > 0 AND NOT a.attisdropped
		ORDER BY a.attrelid, a.attnum`, list, AuditTable)
	if err != nil {
		return fmt.Errorf("schema: postgres: columns: %w", err)
	}
	for _, r := range cols {
		c := Column{Name: r.Name, Type: r.Type, NotNull: r.NotNull, Comment: r.Comment}
		if r.Labels != "" {
			note := "enum " + r.Enum + ": " + r.Labels
			if c.Comment != "" {
				c.Comment += "; " + note
			} else {
				c.Comment = note
			}
		}
		if t := byOID[r.Rel]; t != nil {
			t.Columns = append(t.Columns, c)
		}
	}
	return nil
}

// postgresKeys adds the primary and foreign keys of the relations in
// byOID.
func postgresKeys(ctx context.Context, db *sql.DB, list string, byOID map[int64]*Table) error {
	// One row per key column, in key order; the referenced column of a
	// foreign key is the one at the same position of confkey.
	keys, err := selectRows[struct {
		Con       int64  `db:"con"`
		Rel       int64  `db:"rel"`
		Type      string `db:"type"`
		Column    string `db:"col"`
		RefSchema string `db:"ref_schema"`
		RefTable  string `db:"ref_table"`
		RefColumn string `db:"ref_col"`
	}](ctx, db, `
		SELECT con.oid::int8 AS con, con.conrelid::int8 AS rel, con.contype::text AS type, a.attname AS col,
		       COALESCE(rn.nspname, '') AS ref_schema, COALESCE(rc.relname, '') AS ref_table,
		       COALESCE(ra.attname, '') AS ref_col
		FROM pg_catalog.pg_constraint con
		JOIN pg_catalog.pg_class c ON c.oid = con.conrelid
		JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
		CROSS JOIN LATERAL unnest(con.conkey) WITH ORDINALITY AS k(attnum, ord)
		JOIN pg_catalog.pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.attnum
		LEFT JOIN pg_catalog.pg_class rc ON rc.oid = con.confrelid
		LEFT JOIN pg_catalog.pg_namespace rn ON rn.oid = rc.relnamespace
		LEFT JOIN pg_catalog.pg_attribute ra ON ra.attrelid = con.confrelid AND ra.attnum = con.confkey[k.ord]
		WHERE con.contype IN ('p', 'f')
		  AND n.nspname IN (SELECT json_array_elements_text($1::json))
		ORDER BY con.conrelid, con.contype DESC, con.oid, k.ord`, list)
	if err != nil {
		return fmt.Errorf("schema: postgres: keys: %w", err)
	}
	lastCon := int64(-1)
	for _, r := range keys {
		t := byOID[r.Rel]
		if t == nil {
			continue
		}
		switch r.Type {
		case "p":
			t.PrimaryKey = append(t.PrimaryKey, r.Column)
		case "f":
			if r.Con != lastCon {
				t.ForeignKeys = append(t.ForeignKeys, ForeignKey{RefSchema: r.RefSchema, RefTable: r.RefTable})
			}
			fk := &t.ForeignKeys[len(t.ForeignKeys)-1]
			fk.Columns = append(fk.Columns, r.Column)
			fk.RefColumns = append(fk.RefColumns, r.RefColumn)
		}
		lastCon = r.Con
	}
	return nil
}

// postgresSchemas lists the non-system schemas, sorted.
func postgresSchemas(ctx context.Context, db *sql.DB) ([]string, error) {
	out, err := selectRows[string](ctx, db, `
		SELECT nspname FROM pg_catalog.pg_namespace
		WHERE nspname <> 'information_schema' AND nspname NOT LIKE 'pg\_%'
		ORDER BY nspname COLLATE "C"`)
	if err != nil {
		return nil, fmt.Errorf("schema: postgres: schemas: %w", err)
	}
	return out, nil
}

// selectRows reads every row of query into a T with sqlx: a struct whose
// db tags name the query's columns, or a scalar for one column. Any
// database/sql driver works: the query is passed as written (no bind
// variable rewriting).
func selectRows[T any](ctx context.Context, db *sql.DB, query string, args ...any) ([]T, error) {
	var out []T
	if err := sqlx.SelectContext(ctx, sqlx.NewDb(db, ""), &out, query, args...); err != nil {
		return nil, err
	}
	return out, nil
}

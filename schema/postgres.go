package schema

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

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
// Tables are sorted by schema, then case-insensitively by name (ties by
// byte order). Database.Name is current_database(). Relations the
// connection's role cannot see in the catalogs are simply absent. Errors
// are those of the catalog queries, wrapped.
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

	byOID := map[uint32]*Table{}
	rows, err := db.QueryContext(ctx, `
		SELECT c.oid::int8, n.nspname, c.relname, c.relkind::text, COALESCE(obj_description(c.oid, 'pg_class'), '')
		FROM pg_catalog.pg_class c
		JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname IN (SELECT json_array_elements_text($1::json))
		  AND c.relkind IN ('r', 'p', 'f', 'v', 'm')
		  AND NOT c.relispartition`, list)
	if err != nil {
		return nil, fmt.Errorf("schema: postgres: relations: %w", err)
	}
	err = scanAll(rows, func() error {
		var oid int64
		var kind string
		t := &Table{}
		if err := rows.Scan(&oid, &t.Schema, &t.Name, &kind, &t.Comment); err != nil {
			return err
		}
		switch kind {
		case "v":
			t.Kind = KindView
		case "m":
			t.Kind = KindMaterializedView
		default:
			t.Kind = KindTable
		}
		byOID[uint32(oid)] = t
		out.Tables = append(out.Tables, t)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("schema: postgres: relations: %w", err)
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
	if len(out.Tables) == 0 {
		return out, nil
	}

	rows, err = db.QueryContext(ctx, `
		SELECT a.attrelid::int8, a.attname, pg_catalog.format_type(a.atttypid, a.atttypmod), a.attnotnull,
		       COALESCE(pg_catalog.col_description(a.attrelid, a.attnum), ''),
		       COALESCE(et.typname, ''),
		       COALESCE((SELECT string_agg(quote_literal(e.enumlabel), ', ' ORDER BY e.enumsortorder)
		                 FROM pg_catalog.pg_enum e WHERE e.enumtypid = et.oid), '')
		FROM pg_catalog.pg_attribute a
		JOIN pg_catalog.pg_class c ON c.oid = a.attrelid
		JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
		JOIN pg_catalog.pg_type t ON t.oid = a.atttypid
		LEFT JOIN pg_catalog.pg_type et
		       ON et.oid = CASE WHEN t.typcategory = 'A' THEN t.typelem ELSE t.oid END AND et.typtype = 'e'
		WHERE n.nspname IN (SELECT json_array_elements_text($1::json))
		  AND c.relkind IN ('r', 'p', 'f', 'v', 'm') AND NOT c.relispartition
		  AND a.attnum > 0 AND NOT a.attisdropped
		ORDER BY a.attrelid, a.attnum`, list)
	if err != nil {
		return nil, fmt.Errorf("schema: postgres: columns: %w", err)
	}
	err = scanAll(rows, func() error {
		var oid int64
		var c Column
		var enumName, labels string
		if err := rows.Scan(&oid, &c.Name, &c.Type, &c.NotNull, &c.Comment, &enumName, &labels); err != nil {
			return err
		}
		if labels != "" {
			note := "enum " + enumName + ": " + labels
			if c.Comment != "" {
				c.Comment += "; " + note
			} else {
				c.Comment = note
			}
		}
		if t := byOID[uint32(oid)]; t != nil {
			t.Columns = append(t.Columns, c)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("schema: postgres: columns: %w", err)
	}

	// One row per key column, in key order; the referenced column of a
	// foreign key is the one at the same position of confkey.
	rows, err = db.QueryContext(ctx, `
		SELECT con.oid::int8, con.conrelid::int8, con.contype::text, a.attname,
		       COALESCE(rn.nspname, ''), COALESCE(rc.relname, ''), COALESCE(ra.attname, '')
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
		return nil, fmt.Errorf("schema: postgres: keys: %w", err)
	}
	lastCon := int64(-1)
	err = scanAll(rows, func() error {
		var conOID, relOID int64
		var typ, col, refSchema, refTable, refCol string
		if err := rows.Scan(&conOID, &relOID, &typ, &col, &refSchema, &refTable, &refCol); err != nil {
			return err
		}
		t := byOID[uint32(relOID)]
		if t == nil {
			return nil
		}
		switch typ {
		case "p":
			t.PrimaryKey = append(t.PrimaryKey, col)
		case "f":
			if conOID != lastCon {
				t.ForeignKeys = append(t.ForeignKeys, ForeignKey{RefSchema: refSchema, RefTable: refTable})
			}
			fk := &t.ForeignKeys[len(t.ForeignKeys)-1]
			fk.Columns = append(fk.Columns, col)
			fk.RefColumns = append(fk.RefColumns, refCol)
		}
		lastCon = conOID
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("schema: postgres: keys: %w", err)
	}
	return out, nil
}

// postgresSchemas lists the non-system schemas, sorted.
func postgresSchemas(ctx context.Context, db *sql.DB) ([]string, error) {
	rows, err := db.QueryContext(ctx, `
		SELECT nspname FROM pg_catalog.pg_namespace
		WHERE nspname <> 'information_schema' AND nspname NOT LIKE 'pg\_%'
		ORDER BY nspname COLLATE "C"`)
	if err != nil {
		return nil, fmt.Errorf("schema: postgres: schemas: %w", err)
	}
	var out []string
	err = scanAll(rows, func() error {
		var s string
		if err := rows.Scan(&s); err != nil {
			return err
		}
		out = append(out, s)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("schema: postgres: schemas: %w", err)
	}
	return out, nil
}

// scanAll calls f for each row, then closes rows and returns the first
// error of f, the iteration or the close.
func scanAll(rows *sql.Rows, f func() error) error {
	defer rows.Close()
	for rows.Next() {
		if err := f(); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	return rows.Close()
}

package postgres

import (
	"strconv"
	"strings"
)

// Which code a statement may reach is decided by trust, on the server's
// own catalog:
//
//   - trusted objects are those of pg_catalog and the members of trusted
//     extensions (pg_depend's 'e' entries; Options.TrustedExtensions,
//     every installed extension by default): code the server or a
//     packaged extension ships;
//   - every other function and operator is untrusted: its code is
//     whoever created it. The server may resolve a name the statement
//     writes (f(x), a = b) or implies (x IN (subquery), CASE x WHEN,
//     BETWEEN, JOIN … USING) to such an object on the search path, when
//     the operator's operands are of trusted types (or domains over
//     them), which every statement has;
//   - a type is tainted when untrusted code is attached to it: its
//     input/output functions, a domain CHECK calling an untrusted
//     function or operator, a cast whose function is untrusted, a default
//     operator class, an operator family member or range support
//     function that is untrusted, or an untrusted operator taking it —
//     and so is every array, domain, composite (a table's row type),
//     range and multirange built on a tainted type, and every type with
//     an implicit cast to one. The server runs that code when it coerces
//     a value to the type, compares, sorts or hashes it, without the
//     statement naming anything else.
//
// Trusted are also the objects a superuser made in pg_catalog's place or
// added to an extension (see member): superusers are as trusted as the
// server. A relation whose index or statistics expressions call
// untrusted code is refused whole: the planner evaluates them for any
// query on it.
//
// A statement is refused when a name it uses may resolve to an untrusted
// function or operator on the search path, when it names a tainted type,
// or when it reads a column of a tainted type; and the whole database is
// refused (every statement) when untrusted code is attached to a trusted
// type (a superuser's cast between two built-in types, say), since the
// server may apply it to any value. What the check decided by name, the
// server confirms in the statement's own transaction (see probe.go).

// objectsSQL is the query that lists, as CatalogObjects, what the check
// needs to know of trust in the server's catalog: the untrusted functions
// and operators (schema and name), every type (schema, name, oid and
// whether it is tainted), the columns of tainted types, the trusted types
// that are tainted ("global"), and the catalog's watermark. trusted names
// the trusted extensions; nil means every installed one.
func objectsSQL(trusted []string) string {
	return strings.NewReplacer("$EXT", extensionFilter(trusted), "$WATERMARK", watermarkSQL).Replace(objectsTemplate)
}

// extensionFilter is the condition on pg_extension e that selects the
// trusted extensions.
func extensionFilter(trusted []string) string {
	if trusted == nil {
		return "true"
	}
	return "e.extname = ANY (" + textArray(trusted) + ")"
}

// watermarkSQL renders what changes when code is attached to a type in a
// way the trust query sees and no name in a statement shows: casts,
// operators (one on a database's own type taints it), operator classes
// and families, domain constraints, range types, extensions, indexes,
// extended statistics, rules and inheritance. Each is an index look-up
// (pg_inherits, small, is counted). A statement's probe
// compares it with the catalog's (see probe.go).
const watermarkSQL = `pg_catalog.concat_ws('/', (SELECT pg_catalog.max(oid) FROM pg_catalog.pg_cast),
	(SELECT pg_catalog.max(oid) FROM pg_catalog.pg_operator),
	(SELECT pg_catalog.max(oid) FROM pg_catalog.pg_opclass), (SELECT pg_catalog.max(oid) FROM pg_catalog.pg_amop),
	(SELECT pg_catalog.max(oid) FROM pg_catalog.pg_amproc),
	(SELECT pg_catalog.max(oid) FROM pg_catalog.pg_constraint WHERE contypid > 0),
	(SELECT pg_catalog.max(rngtypid) FROM pg_catalog.pg_range), (SELECT pg_catalog.max(oid) FROM pg_catalog.pg_extension),
	(SELECT pg_catalog.max(indexrelid) FROM pg_catalog.pg_index), (SELECT pg_catalog.max(oid) FROM pg_catalog.pg_statistic_ext),
	(SELECT pg_catalog.max(oid) FROM pg_catalog.pg_rewrite), (SELECT pg_catalog.count(*) FROM pg_catalog.pg_inherits))`

// memberSQL is the condition that object oid of catalog class is a
// member of a trusted extension ($EXT filters pg_extension e).
const memberSQL = `(EXISTS (SELECT 1 FROM pg_catalog.pg_depend d JOIN pg_catalog.pg_extension e ON e.oid = d.refobjid
	WHERE d.classid = '$CLASS'::pg_catalog.regclass::pg_catalog.oid AND d.objid = $OID AND d.deptype = 'e'
	AND d.refclassid = 'pg_catalog.pg_extension'::pg_catalog.regclass::pg_catalog.oid AND $EXT)
	AND EXISTS (SELECT 1 FROM pg_catalog.pg_roles r WHERE r.oid = $OWNER AND r.rolsuper))`

// member renders memberSQL for one catalog class, oid and owner
// expression. An extension's owner may add any object of theirs to it
// (ALTER EXTENSION … ADD), and since PostgreSQL 13 a database owner may
// create the trusted extensions (citext, hstore, pgcrypto, pg_trgm…)
// whose scripts run as the bootstrap superuser: so a member is trusted
// only when a superuser owns it, as the script's objects are.
func member(class, oid, owner string) string {
	return strings.NewReplacer("$CLASS", class, "$OID", oid, "$OWNER", owner).Replace(memberSQL)
}

// builtinOID is PostgreSQL's FirstNormalObjectId: objects made by initdb
// have smaller oids, so one created in pg_catalog later does not pass
// for a built-in.
const builtinOID = "16384"

var objectsTemplate = `WITH RECURSIVE
bad_proc AS MATERIALIZED (
	SELECT p.oid, n.nspname, p.proname FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
	WHERE p.oid >= ` + builtinOID + ` AND NOT ` + member("pg_catalog.pg_proc", "p.oid", "p.proowner") + `),
bad_op AS MATERIALIZED (
	SELECT o.oid, n.nspname, o.oprname, o.oprleft, o.oprright FROM pg_catalog.pg_operator o JOIN pg_catalog.pg_namespace n ON n.oid = o.oprnamespace
	WHERE o.oid >= ` + builtinOID + ` AND NOT ` + member("pg_catalog.pg_operator", "o.oid", "o.oprowner") + `),
good_type AS MATERIALIZED (
	SELECT t.oid FROM pg_catalog.pg_type t
	WHERE t.oid < ` + builtinOID + ` OR ` + member("pg_catalog.pg_type", "t.oid", "t.typowner") + `
	   OR t.typelem <> 0 AND t.typcategory = 'A' AND ` + member("pg_catalog.pg_type", "t.typelem", "t.typowner") + `),
good_base AS MATERIALIZED (
	SELECT oid FROM good_type UNION SELECT t.oid FROM pg_catalog.pg_type t WHERE t.typbasetype IN (SELECT oid FROM good_type)),
symbol_op AS MATERIALIZED (
	SELECT * FROM bad_op o WHERE (o.oprleft = 0 OR o.oprleft IN (SELECT oid FROM good_base))
		AND (o.oprright = 0 OR o.oprright IN (SELECT oid FROM good_base))),
pair AS MATERIALIZED (
	SELECT c.castsource AS l, c.casttarget AS r FROM pg_catalog.pg_cast c WHERE c.castfunc IN (SELECT oid FROM bad_proc)
	UNION ALL SELECT a.amproclefttype, a.amprocrighttype FROM pg_catalog.pg_amproc a WHERE a.amproc IN (SELECT oid FROM bad_proc)
	UNION ALL SELECT a.amoplefttype, a.amoprighttype FROM pg_catalog.pg_amop a WHERE a.amopopr IN (SELECT oid FROM bad_op)),
seed AS MATERIALIZED (
	SELECT t.oid FROM pg_catalog.pg_type t
	WHERE ARRAY[t.typinput::oid, t.typoutput::oid, t.typreceive::oid, t.typsend::oid, t.typmodin::oid, t.typmodout::oid, t.typanalyze::oid]
	      && ARRAY(SELECT oid FROM bad_proc)
	UNION SELECT c.contypid FROM pg_catalog.pg_constraint c JOIN pg_catalog.pg_depend d
		ON d.classid = 'pg_catalog.pg_constraint'::pg_catalog.regclass::pg_catalog.oid AND d.objid = c.oid
	WHERE c.contypid <> 0 AND (d.refclassid = 'pg_catalog.pg_proc'::pg_catalog.regclass::pg_catalog.oid AND d.refobjid IN (SELECT oid FROM bad_proc)
		OR d.refclassid = 'pg_catalog.pg_operator'::pg_catalog.regclass::pg_catalog.oid AND d.refobjid IN (SELECT oid FROM bad_op))
	UNION SELECT x FROM pair, LATERAL unnest(ARRAY[pair.l, pair.r]) AS x
	WHERE x <> 0 AND (x NOT IN (SELECT oid FROM good_type) OR pair.l IN (SELECT oid FROM good_type) AND pair.r IN (SELECT oid FROM good_type))
	UNION SELECT o.opcintype FROM pg_catalog.pg_opclass o
	WHERE o.opcdefault AND o.oid >= ` + builtinOID + ` AND NOT ` + member("pg_catalog.pg_opclass", "o.oid", "o.opcowner") + `
	UNION SELECT r.rngtypid FROM pg_catalog.pg_range r
	WHERE ARRAY[r.rngcanonical::oid, r.rngsubdiff::oid] && ARRAY(SELECT oid FROM bad_proc)
	UNION SELECT x FROM bad_op o, LATERAL unnest(ARRAY[o.oprleft, o.oprright]) AS x
	WHERE x <> 0 AND x NOT IN (SELECT oid FROM good_base)),
edge AS MATERIALIZED (
	SELECT t.typelem AS parent, t.oid AS child FROM pg_catalog.pg_type t WHERE t.typelem <> 0
	UNION ALL SELECT t.typbasetype, t.oid FROM pg_catalog.pg_type t WHERE t.typbasetype <> 0
	UNION ALL SELECT a.atttypid, c.reltype FROM pg_catalog.pg_attribute a JOIN pg_catalog.pg_class c ON c.oid = a.attrelid
	WHERE a.attnum > 0 AND NOT a.attisdropped AND c.reltype <> 0
	UNION ALL SELECT c.casttarget, c.castsource FROM pg_catalog.pg_cast c WHERE c.castcontext = 'i'
	UNION ALL SELECT r.rngsubtype, r.rngtypid FROM pg_catalog.pg_range r
	UNION ALL SELECT r.rngtypid, (pg_catalog.to_jsonb(r) ->> 'rngmultitypid')::oid FROM pg_catalog.pg_range r
	WHERE pg_catalog.to_jsonb(r) ? 'rngmultitypid'),
bad_dep AS MATERIALIZED (
	SELECT d.classid, d.objid FROM pg_catalog.pg_depend d
	WHERE d.refclassid = 'pg_catalog.pg_proc'::pg_catalog.regclass::pg_catalog.oid AND d.refobjid IN (SELECT oid FROM bad_proc)
	   OR d.refclassid = 'pg_catalog.pg_operator'::pg_catalog.regclass::pg_catalog.oid AND d.refobjid IN (SELECT oid FROM bad_op)),
bad_rel(oid) AS (
	SELECT i.indrelid FROM pg_catalog.pg_index i JOIN bad_dep d ON d.classid = 'pg_catalog.pg_class'::pg_catalog.regclass::pg_catalog.oid AND d.objid = i.indexrelid
	UNION SELECT s.stxrelid FROM pg_catalog.pg_statistic_ext s JOIN bad_dep d ON d.classid = 'pg_catalog.pg_statistic_ext'::pg_catalog.regclass::pg_catalog.oid AND d.objid = s.oid
	UNION SELECT ad.adrelid FROM pg_catalog.pg_attrdef ad JOIN bad_dep d ON d.classid = 'pg_catalog.pg_attrdef'::pg_catalog.regclass::pg_catalog.oid AND d.objid = ad.oid
		JOIN pg_catalog.pg_attribute a ON a.attrelid = ad.adrelid AND a.attnum = ad.adnum WHERE a.attgenerated = 'v'
	UNION SELECT w.ev_class FROM pg_catalog.pg_rewrite w JOIN bad_dep d ON d.classid = 'pg_catalog.pg_rewrite'::pg_catalog.regclass::pg_catalog.oid AND d.objid = w.oid
	UNION SELECT w.ev_class FROM pg_catalog.pg_rewrite w JOIN pg_catalog.pg_depend d ON d.classid = 'pg_catalog.pg_rewrite'::pg_catalog.regclass::pg_catalog.oid
		AND d.objid = w.oid AND d.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass::pg_catalog.oid AND d.refobjid < ` + builtinOID + `
	UNION SELECT x.parent FROM (SELECT h.inhrelid AS child, h.inhparent AS parent FROM pg_catalog.pg_inherits h
		UNION ALL SELECT d.refobjid, w.ev_class FROM pg_catalog.pg_rewrite w JOIN pg_catalog.pg_depend d
			ON d.classid = 'pg_catalog.pg_rewrite'::pg_catalog.regclass::pg_catalog.oid AND d.objid = w.oid AND d.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass::pg_catalog.oid
		) x JOIN bad_rel b ON b.oid = x.child),
tainted(oid) AS (
	SELECT oid FROM seed
	UNION SELECT e.child FROM edge e JOIN tainted s ON s.oid = e.parent)
SELECT 'function' AS kind, nspname::text AS schema, proname::text AS name, 0::int8 AS oid, false AS tainted, '' AS "column" FROM bad_proc
UNION ALL SELECT CASE WHEN oid IN (SELECT oid FROM symbol_op) THEN 'operator' ELSE 'typed_operator' END, nspname::text, oprname::text, oid::int8, false, ''
	FROM bad_op
UNION ALL SELECT 'type', n.nspname::text, t.typname::text, t.oid::int8, t.oid IN (SELECT oid FROM tainted),
	CASE WHEN t.typrelid <> 0 THEN ` + relationState("t.typrelid") + ` ELSE '' END
	FROM pg_catalog.pg_type t JOIN pg_catalog.pg_namespace n ON n.oid = t.typnamespace
UNION ALL SELECT 'column', n.nspname::text, c.relname::text, 0, true, a.attname::text
	FROM pg_catalog.pg_attribute a JOIN pg_catalog.pg_class c ON c.oid = a.attrelid JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
	WHERE a.atttypid IN (SELECT oid FROM tainted) AND a.attnum > 0 AND NOT a.attisdropped AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
UNION ALL SELECT 'extension_operator', n.nspname::text, o.oprname::text, o.oid::int8, false, ''
	FROM pg_catalog.pg_operator o JOIN pg_catalog.pg_namespace n ON n.oid = o.oprnamespace
	WHERE o.oid >= ` + builtinOID + ` AND o.oid NOT IN (SELECT oid FROM bad_op)
UNION ALL SELECT 'relation', n.nspname::text, c.relname::text, c.oid::int8, true, ''
	FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE c.oid IN (SELECT oid FROM bad_rel)
UNION ALL SELECT 'view', n.nspname::text, c.relname::text, c.oid::int8, false, pg_catalog.pg_get_viewdef(c.oid)
	FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
	WHERE c.relkind IN ('v', 'm') AND n.nspname NOT IN ('pg_catalog', 'information_schema')
UNION ALL SELECT 'state', n.nspname::text, c.relname::text, c.oid::int8, false, ` + relationState("c.oid") + `
	FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
	WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f', 'c') AND n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')
UNION ALL SELECT 'global', n.nspname::text, t.typname::text, t.oid::int8, true, ''
	FROM pg_catalog.pg_type t JOIN pg_catalog.pg_namespace n ON n.oid = t.typnamespace
	WHERE t.oid IN (SELECT oid FROM tainted) AND t.oid IN (SELECT oid FROM good_type)
UNION ALL SELECT 'watermark', '', $WATERMARK, 0, false, ''`

// relationState renders a relation's state: what changes when its columns
// or their types change (ALTER TABLE … ADD COLUMN, ALTER TYPE … ADD
// ATTRIBUTE), when its rules do (CREATE OR REPLACE VIEW, CREATE RULE) or
// when it is made anew: its catalog row's version (xmin), its columns'
// types and its rules' versions. The probe compares the states of the
// relations a statement reads and the composite types it names with the
// catalog's.
func relationState(oid string) string {
	return strings.ReplaceAll(`pg_catalog.concat_ws('|', (SELECT rs_c.xmin::text FROM pg_catalog.pg_class rs_c WHERE rs_c.oid = $R),
	(SELECT pg_catalog.string_agg(rs_a.attnum::text || '=' || rs_a.atttypid::text, ',' ORDER BY rs_a.attnum) FROM pg_catalog.pg_attribute rs_a
		WHERE rs_a.attrelid = $R AND rs_a.attnum > 0 AND NOT rs_a.attisdropped),
	(SELECT pg_catalog.string_agg(rs_w.oid::text || '=' || rs_w.xmin::text, ',' ORDER BY rs_w.oid) FROM pg_catalog.pg_rewrite rs_w WHERE rs_w.ev_class = $R))`, "$R", oid)
}

// CatalogObject is one row of ObjectsQuery (see Guard for the trust it
// describes). Kind is one of:
//
//   - "function", "operator": an untrusted function or operator, by
//     Schema and Name (the operator's symbol) and OID, whose operands
//     may be of any statement's (trusted) types;
//   - "typed_operator": an untrusted operator that takes a type of the
//     database's own, which it taints (see Guard);
//   - "extension_operator": a trusted extension's operator, by Schema and
//     Name, which a statement may also write OPERATOR(schema.op);
//   - "type": a type by Schema, Name and OID, Tainted when untrusted code
//     is attached to it, with its relation's state in Column when it is a
//     composite (relationState);
//   - "column": Column of relation Schema.Name has a tainted type;
//   - "relation": relation Schema.Name has an index expression or
//     predicate, an extended statistics expression or a virtual generated
//     column that calls untrusted code, which the planner or a read runs,
//     or is a view whose rule does so or reads the system catalog, or is
//     the ancestor (inheritance, partitioning) of such a relation or a
//     view reading one, which the planner opens too;
//   - "view": Column is view (or materialized view) Schema.Name's
//     definition (pg_get_viewdef), which the check reads as a statement:
//     a view runs its functions as the caller (see NewGuard);
//   - "state": Column is relation Schema.Name's state (relationState);
//   - "global": the trusted type Schema.Name (OID) is tainted, so every
//     statement is refused;
//   - "watermark": Name is the catalog's watermark (see probe.go).
type CatalogObject struct {
	Kind    string `db:"kind"`
	Schema  string `db:"schema"`
	Name    string `db:"name"`
	OID     int64  `db:"oid"`
	Tainted bool   `db:"tainted"`
	Column  string `db:"column"`
}

// typeEntry is one type of the catalog.
type typeEntry struct {
	schema  string
	oid     int64
	tainted bool
	state   string // a composite's relationState, else ""
}

// trust is what the catalog knows of untrusted code (see objectsSQL).
type trust struct {
	// funcs and ops map an untrusted function's name or operator's
	// symbol to the schemas that have one.
	funcs, ops map[string][]string
	// types maps a type name to every type of that name.
	types map[string][]typeEntry
	// columns maps "schema.relation" to its columns of tainted types.
	columns map[string][]string
	// typedOps are the oids of the untrusted operators that taint their
	// types instead of their symbols; typedSyms maps their symbols to
	// their schemas.
	typedOps  []string
	typedSyms map[string][]string
	// extOps maps the symbols of trusted extensions' operators to their
	// schemas.
	extOps map[string][]string
	// relations are the "schema.relation" names of tainted relations;
	// states their states (relationState) for every relation.
	relations map[string]bool
	states    map[string]string
	// views maps a view to its definition.
	views map[string]string
	// global names the trusted types that are tainted.
	global []string
	// watermark is the catalog's at load time (see watermarkSQL).
	watermark string
	// extensions are the trusted extensions (nil: all).
	extensions []string
}

func newTrust(objs []CatalogObject, extensions []string) trust {
	t := trust{funcs: map[string][]string{}, ops: map[string][]string{}, types: map[string][]typeEntry{},
		columns: map[string][]string{}, extensions: extensions, typedOps: []string{}, typedSyms: map[string][]string{}, extOps: map[string][]string{}, relations: map[string]bool{},
		states: map[string]string{}, views: map[string]string{}}
	for _, o := range objs {
		switch o.Kind {
		case "function":
			t.funcs[o.Name] = append(t.funcs[o.Name], o.Schema)
		case "operator":
			t.ops[o.Name] = append(t.ops[o.Name], o.Schema)
		case "extension_operator":
			t.extOps[o.Name] = append(t.extOps[o.Name], o.Schema)
		case "typed_operator":
			t.typedOps = append(t.typedOps, strconv.FormatInt(o.OID, 10))
			t.typedSyms[o.Name] = append(t.typedSyms[o.Name], o.Schema)
		case "type":
			t.types[o.Name] = append(t.types[o.Name], typeEntry{o.Schema, o.OID, o.Tainted, o.Column})
		case "column":
			k := o.Schema + "." + o.Name
			t.columns[k] = append(t.columns[k], o.Column)
		case "relation":
			t.relations[o.Schema+"."+o.Name] = true
		case "view":
			t.views[o.Schema+"."+o.Name] = o.Column
		case "state":
			t.states[o.Schema+"."+o.Name] = o.Column
		case "global":
			t.global = append(t.global, o.Schema+"."+o.Name)
		case "watermark":
			t.watermark = o.Name
		}
	}
	return t
}

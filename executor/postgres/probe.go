package postgres

import (
	"strings"
)

// The probe has the server confirm, inside the statement's own
// transaction and so with the catalog as the statement will see it, what
// the check assumed of the names it left to the server:
//
//   - no code was attached to a type since the catalog was read: its
//     watermark (see watermarkSQL) is unchanged, the type names the
//     statement writes resolve only to the types the check saw (created,
//     moved or renamed types have other oids or names; a composite's
//     columns are part of what it saw), and the relations it reads have
//     the columns, column types and rules the check saw (relationState);
//   - no function, in any schema, has a name taken for a column in
//     attribute position;
//   - no function called and no operator applied without a schema may
//     resolve to an untrusted one on the search path (AllowFunctions
//     names, and the operators that taint their own types, excepted).
//
// The query fails when an assumption fails: with probeChanged in its
// message when the catalog changed (the executor then reads it again and
// checks anew), else with the names found (see probeError). Its text is
// fixed and its values are parameters, so the executor prepares it once
// per connection (probeStatement) and the server plans it once, for any
// values: the schema-qualified types and the relations are therefore
// looked up one by one through pg_type's and pg_class's name indexes (a
// correlated subquery per name), where a join would let the generic plan
// hash the whole of pg_class, whose size grows with the schema.
var probeQuery = `SELECT pg_catalog.int4in(pg_catalog.textout(m)) FROM (
SELECT '` + probeChanged + `' AS m WHERE ` + watermarkSQL + ` <> $1::text
	OR EXISTS (SELECT 1 FROM pg_catalog.pg_type t JOIN pg_catalog.pg_namespace n ON n.oid = t.typnamespace
		WHERE t.typname = ANY ($2::text[]) AND (n.nspname = ANY ($3::text[]) OR $3::text[] IS NULL) AND NOT ` + typeSeen + ` = ANY ($4::text[]))
	OR EXISTS (SELECT 1 FROM ROWS FROM (pg_catalog.unnest($5::text[]), pg_catalog.unnest($6::text[])) AS q(s, nm)
		WHERE (SELECT NOT ` + typeSeen + ` = ANY ($4::text[]) FROM pg_catalog.pg_type t
			WHERE t.typname = q.nm AND t.typnamespace = (SELECT n.oid FROM pg_catalog.pg_namespace n WHERE n.nspname = q.s)))
	OR EXISTS (SELECT 1 FROM ROWS FROM (pg_catalog.unnest($12::text[]), pg_catalog.unnest($13::text[]), pg_catalog.unnest($14::text[])) AS r(s, nm, st)
		WHERE (SELECT ` + relationState("c.oid") + ` FROM pg_catalog.pg_class c
			WHERE c.relname = r.nm AND c.relnamespace = (SELECT n.oid FROM pg_catalog.pg_namespace n WHERE n.nspname = r.s)) <> r.st)
UNION ALL (SELECT '` + probePrefix + `' || pg_catalog.string_agg(DISTINCT w, ', ') FROM (
	SELECT 'function ' || p.proname FROM pg_catalog.pg_proc p WHERE p.proname = ANY ($7::text[])
	UNION ALL SELECT 'function ' || n.nspname || '.' || p.proname FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
		WHERE p.proname = ANY ($8::text[]) AND (n.nspname = ANY ($3::text[]) OR $3::text[] IS NULL) AND p.oid >= ` + builtinOID + `
		AND NOT ` + probeMember("pg_proc", "p.oid", "p.proowner") + `
	UNION ALL SELECT 'operator ' || n.nspname || '.' || o.oprname FROM pg_catalog.pg_operator o JOIN pg_catalog.pg_namespace n ON n.oid = o.oprnamespace
		WHERE o.oprname = ANY ($10::text[]) AND (n.nspname = ANY ($3::text[]) OR $3::text[] IS NULL) AND o.oid >= ` + builtinOID + `
		AND NOT o.oid::text = ANY ($11::text[]) AND NOT ` + probeMember("pg_operator", "o.oid", "o.oprowner") + `
) f(w) HAVING pg_catalog.count(*) > 0)
LIMIT 1) probe`

// typeSeen renders type t as the check saw it: "oid/state", the state a
// composite's (see relationState).
var typeSeen = `(t.oid::text || '/' || CASE WHEN t.typrelid <> 0 THEN ` + relationState("t.typrelid") + ` ELSE '' END)`

// probeStatement names probeQuery prepared on a connection.
const probeStatement = "text2sql_probe"

// probeMember renders the condition that object oid of catalog class,
// owned by owner, is a trusted member of an extension named in $9 (any
// extension when $9 is NULL; see member).
func probeMember(class, oid, owner string) string {
	return strings.ReplaceAll(member("pg_catalog."+class, oid, owner), "$EXT", "(e.extname = ANY ($9::text[]) OR $9::text[] IS NULL)")
}

// The probe's messages: the catalog changed since it was read, or the
// untrusted objects found.
const (
	probeChanged = "catalog changed"
	probePrefix  = "found: "
)

// probe holds probeQuery's parameters for one statement, $1 to $14; a
// nil list is NULL.
type probe struct {
	watermark string
	// typeNames are the unqualified type names written, path the
	// schemas they resolve in (nil: any), typeOIDs every type the check
	// saw them resolve to ("oid/state", see typeSeen); typeSchemas and
	// qualified the schema-qualified type names written.
	typeNames, path, typeOIDs, typeSchemas, qualified []string
	// attributes are names taken for columns; calls the allowed
	// functions called without a schema; extensions the trusted ones
	// (nil: all); operators the symbols applied, and typedOps the
	// untrusted operators that taint their types instead.
	attributes, calls, extensions, operators, typedOps []string
	// relSchemas, relNames and relStates are the relations read and the
	// states the check saw.
	relSchemas, relNames, relStates []string
}

// probe returns the probe of what the check learned of a statement, nil
// for a Guard over the built-in catalog (BuiltinCatalog), which knows
// none of a server's objects to confirm.
func (c *Guard) probe(r resolution) *probe {
	if c.cat.trust.watermark == "" {
		return nil
	}
	p := &probe{watermark: c.cat.trust.watermark, attributes: r.columns, operators: r.operators,
		extensions: c.cat.trust.extensions, typeOIDs: []string{}, typedOps: append([]string{}, c.cat.trust.typedOps...)}
	if c.scope != nil {
		p.path = append([]string{"pg_catalog"}, c.scope.path...)
	}
	for _, fn := range r.calls {
		if !c.extra[fn] {
			p.calls = append(p.calls, fn)
		}
	}
	for _, t := range r.types {
		if t.schema == "" {
			p.typeNames = append(p.typeNames, t.name)
		} else {
			p.typeSchemas, p.qualified = append(p.typeSchemas, t.schema), append(p.qualified, t.name)
		}
		p.typeOIDs = append(p.typeOIDs, t.seen...)
	}
	for _, r := range r.relations {
		p.relSchemas, p.relNames = append(p.relSchemas, r.table.Schema), append(p.relNames, r.table.Name)
		p.relStates = append(p.relStates, c.cat.trust.states[r.table.Schema+"."+r.table.Name])
	}
	return p
}

// lists returns the list parameters $2 to $14 in order.
func (p *probe) lists() [][]string {
	return [][]string{p.typeNames, p.path, p.typeOIDs, p.typeSchemas, p.qualified, p.attributes, p.calls, p.extensions, p.operators, p.typedOps,
		p.relSchemas, p.relNames, p.relStates}
}

// params returns the parameters in text format, for the protocol's Bind.
func (p *probe) params() [][]byte {
	out := [][]byte{[]byte(p.watermark)}
	for _, l := range p.lists() {
		out = append(out, arrayText(l))
	}
	return out
}

// args returns the parameters for database/sql (pgx encodes []string as
// text[], nil as NULL).
func (p *probe) args() []any {
	out := []any{p.watermark}
	for _, l := range p.lists() {
		out = append(out, l)
	}
	return out
}

// arrayEscaper escapes an element of a text[] value in text format.
var arrayEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`)

// arrayText renders l as a text[] value in PostgreSQL's text format, nil
// for a nil list (NULL).
func arrayText(l []string) []byte {
	if l == nil {
		return nil
	}
	var b strings.Builder
	b.WriteByte('{')
	for i, s := range l {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('"')
		b.WriteString(arrayEscaper.Replace(s))
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return []byte(b.String())
}

package postgres

import (
	"regexp"
	"strconv"
	"strings"
	"sync"
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
// checks anew), else with the names found (see probeError). Its values
// are parameters, so the executor prepares each text once per connection
// and the server plans it once, for any values: the schema-qualified
// types and the relations are therefore looked up one by one through
// pg_type's and pg_class's name indexes (a correlated subquery per name),
// where a join would let the generic plan hash the whole of pg_class,
// whose size grows with the schema.
//
// The query holds only the conditions whose lists the statement fills
// (see probeChecks, probeFinds): a condition on an empty list holds for
// no row, and the server still opens every catalog and index a plan
// names, which is most of the probe's cost.
const probeTemplate = `SELECT pg_catalog.int4in(pg_catalog.textout(m)) FROM (
SELECT '` + probeChanged + `' AS m WHERE $CHECKS
$FINDS
LIMIT 1) probe`

// probeChecks are the conditions of probeTemplate that the catalog
// changed, OR'ed: the watermark's, then those on the unqualified and the
// qualified type names and the relations. Each names its parameters
// $name (see probe.values).
var probeChecks = []string{
	watermarkSQL + ` <> $watermark::text`,
	`EXISTS (SELECT 1 FROM pg_catalog.pg_type t JOIN pg_catalog.pg_namespace n ON n.oid = t.typnamespace
		WHERE t.typname = ANY ($typeNames::text[]) AND (n.nspname = ANY ($path::text[]) OR $path::text[] IS NULL) AND NOT ` + typeSeen + ` = ANY ($typeOIDs::text[]))`,
	`EXISTS (SELECT 1 FROM ROWS FROM (pg_catalog.unnest($typeSchemas::text[]), pg_catalog.unnest($qualified::text[])) AS q(s, nm)
		WHERE (SELECT NOT ` + typeSeen + ` = ANY ($typeOIDs::text[]) FROM pg_catalog.pg_type t
			WHERE t.typname = q.nm AND t.typnamespace = (SELECT n.oid FROM pg_catalog.pg_namespace n WHERE n.nspname = q.s)))`,
	`EXISTS (SELECT 1 FROM ROWS FROM (pg_catalog.unnest($relSchemas::text[]), pg_catalog.unnest($relNames::text[]), pg_catalog.unnest($relStates::text[])) AS r(s, nm, st)
		WHERE (SELECT ` + relationState("c.oid") + ` FROM pg_catalog.pg_class c
			WHERE c.relname = r.nm AND c.relnamespace = (SELECT n.oid FROM pg_catalog.pg_namespace n WHERE n.nspname = r.s)) <> r.st)`,
}

// probeFinds are the queries of probeTemplate for untrusted objects,
// UNION'ed: the functions with a name taken for a column, those a call
// without a schema may resolve to, the operators a symbol may resolve to.
var probeFinds = []string{
	`SELECT 'function ' || p.proname FROM pg_catalog.pg_proc p WHERE p.proname = ANY ($attributes::text[])`,
	`SELECT 'function ' || n.nspname || '.' || p.proname FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
		WHERE p.proname = ANY ($calls::text[]) AND (n.nspname = ANY ($path::text[]) OR $path::text[] IS NULL) AND p.oid >= ` + builtinOID + `
		AND NOT ` + probeMember("pg_proc", "p.oid", "p.proowner"),
	`SELECT 'operator ' || n.nspname || '.' || o.oprname FROM pg_catalog.pg_operator o JOIN pg_catalog.pg_namespace n ON n.oid = o.oprnamespace
		WHERE o.oprname = ANY ($operators::text[]) AND (n.nspname = ANY ($path::text[]) OR $path::text[] IS NULL) AND o.oid >= ` + builtinOID + `
		AND NOT o.oid::text = ANY ($typedOps::text[]) AND NOT ` + probeMember("pg_operator", "o.oid", "o.oprowner"),
}

// probeVariant is the probe's text for one set of conditions, with its
// parameters' names in order ($1, $2, …).
type probeVariant struct {
	once   sync.Once
	stmt   stmt
	params []string
}

// probeVariants are the texts, by the bits of the conditions they hold
// (see probe.variant), made when first needed.
var probeVariants [1 << 6]probeVariant

// probeParam is a parameter name of probeChecks and probeFinds.
var probeParam = regexp.MustCompile(`\$[a-zA-Z]+`)

// variant returns the text of the conditions mask selects: bit i-1 for
// probeChecks[i] (the watermark's is always there), bit 3+i for
// probeFinds[i].
func variant(mask uint) *probeVariant {
	v := &probeVariants[mask]
	v.once.Do(func() {
		checks := []string{probeChecks[0]}
		var finds []string
		for i := range 3 {
			if mask&(1<<i) != 0 {
				checks = append(checks, probeChecks[i+1])
			}
			if mask&(1<<(3+i)) != 0 {
				finds = append(finds, probeFinds[i])
			}
		}
		found := ""
		if len(finds) > 0 {
			found = `UNION ALL (SELECT '` + probePrefix + `' || pg_catalog.string_agg(DISTINCT w, ', ') FROM (
	` + strings.Join(finds, "\n\tUNION ALL ") + `
) f(w) HAVING pg_catalog.count(*) > 0)`
		}
		text := strings.NewReplacer("$CHECKS", strings.Join(checks, "\n\tOR "), "$FINDS", found).Replace(probeTemplate)
		num := map[string]string{}
		text = probeParam.ReplaceAllStringFunc(text, func(name string) string {
			if num[name] == "" {
				v.params = append(v.params, name[1:])
				num[name] = "$" + strconv.Itoa(len(v.params))
			}
			return num[name]
		})
		v.stmt = stmt{probeStatement + strconv.FormatUint(uint64(mask), 16), text}
	})
	return v
}

// typeSeen renders type t as the check saw it: "oid/state", the state a
// composite's (see relationState).
var typeSeen = `(t.oid::text || '/' || CASE WHEN t.typrelid <> 0 THEN ` + relationState("t.typrelid") + ` ELSE '' END)`

// probeStatement starts the names of the probe's texts prepared on a
// connection.
const probeStatement = stmtPrefix + "probe_"

// probeMember renders the condition that object oid of catalog class,
// owned by owner, is a trusted member of an extension named in
// $extensions (any extension when it is NULL; see member).
func probeMember(class, oid, owner string) string {
	return strings.ReplaceAll(member("pg_catalog."+class, oid, owner), "$EXT", "(e.extname = ANY ($extensions::text[]) OR $extensions::text[] IS NULL)")
}

// The probe's messages: the catalog changed since it was read, or the
// untrusted objects found.
const (
	probeChanged = "catalog changed"
	probePrefix  = "found: "
)

// probe holds the probe's parameters for one statement (see
// probeChecks); a nil list is NULL.
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

// lists returns the list parameters by name (see probeChecks).
func (p *probe) lists() map[string][]string {
	return map[string][]string{"typeNames": p.typeNames, "path": p.path, "typeOIDs": p.typeOIDs, "typeSchemas": p.typeSchemas,
		"qualified": p.qualified, "attributes": p.attributes, "calls": p.calls, "extensions": p.extensions, "operators": p.operators,
		"typedOps": p.typedOps, "relSchemas": p.relSchemas, "relNames": p.relNames, "relStates": p.relStates}
}

// variant returns the probe's text for the lists the statement filled.
func (p *probe) variant() *probeVariant {
	var mask uint
	for i, l := range [][]string{p.typeNames, p.qualified, p.relNames, p.attributes, p.calls, p.operators} {
		if len(l) > 0 {
			mask |= 1 << i
		}
	}
	return variant(mask)
}

// statement returns the probe's text and its parameters in text format,
// for the protocol's Bind.
func (p *probe) statement() (stmt, [][]byte) {
	v, lists := p.variant(), p.lists()
	out := make([][]byte, len(v.params))
	for i, name := range v.params {
		if name == "watermark" {
			out[i] = []byte(p.watermark)
		} else {
			out[i] = arrayText(lists[name])
		}
	}
	return v.stmt, out
}

// args returns the probe's text and its parameters for database/sql
// (pgx encodes []string as text[], nil as NULL).
func (p *probe) args() (string, []any) {
	v, lists := p.variant(), p.lists()
	out := make([]any, len(v.params))
	for i, name := range v.params {
		if name == "watermark" {
			out[i] = p.watermark
		} else {
			out[i] = lists[name]
		}
	}
	return v.stmt.text, out
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

package sqlparse

import (
	"sort"
	"strings"
)

// TableRef is a table a query reads, as written in a FROM or JOIN clause.
type TableRef struct {
	Schema string // qualifier, if written ("sales" in sales.orders)
	Name   string // identifier without quotes
	Alias  string // alias, if any
}

// QualifiedName returns schema.name, or the name alone without a schema:
// the form schema.Database.Lookup takes.
func (r TableRef) QualifiedName() string {
	if r.Schema == "" {
		return r.Name
	}
	return r.Schema + "." + r.Name
}

// Tables returns the tables the tree under n reads, as written in FROM
// and JOIN clauses at any depth (subqueries, CTE bodies, derived tables),
// in source order, each once (case-insensitive on schema.name), leaving
// out unqualified names of the CTEs declared anywhere under n. A
// table-valued function is not a table; its arguments are still walked.
// Schema is the part before the name (b in a.b.c).
//
// Tables inside tokens the parser skipped as an error (COUNT(*) FROM t
// inside a parenthesis a model left unclosed) are not found: what the
// tree cannot place, no pass guesses at.
func Tables(n Node) []TableRef {
	ctes := map[string]bool{}
	type found struct {
		pos int
		ref TableRef
	}
	var all []found
	Inspect(n, func(n Node) bool {
		switch v := n.(type) {
		case *CTE:
			if v.Name != nil {
				ctes[strings.ToLower(v.Name.Name)] = true
			}
		case *TableName:
			parts := v.Parts
			r := TableRef{Name: parts[len(parts)-1].Name}
			if len(parts) > 1 {
				r.Schema = parts[len(parts)-2].Name
			}
			if v.Alias != nil {
				r.Alias = v.Alias.Name
			}
			all = append(all, found{v.Pos, r})
		}
		return true
	})
	sort.SliceStable(all, func(i, j int) bool { return all[i].pos < all[j].pos })
	var out []TableRef
	seen := map[string]bool{}
	for _, f := range all {
		r := f.ref
		if r.Schema == "" && ctes[strings.ToLower(r.Name)] {
			continue
		}
		key := strings.ToLower(r.Schema + "." + r.Name)
		if !seen[key] {
			seen[key] = true
			out = append(out, r)
		}
	}
	return out
}

// ColumnRefs returns the column references of the tree under n, in the
// order Inspect visits them: every *ColumnRef (t.c, s.t.c) and every bare
// name in the place of an expression (an *Ident there; returned wrapped as
// a one-part *ColumnRef with its span), and the columns of JOIN … USING.
// Names that are not column references — of tables, aliases, functions,
// CTEs and the columns they define, windows, collations, interval units,
// star qualifiers — are left out.
func ColumnRefs(n Node) []*ColumnRef {
	notColumn := map[*Ident]bool{}
	mark := func(ids ...*Ident) {
		for _, id := range ids {
			notColumn[id] = true
		}
	}
	var out []*ColumnRef
	Inspect(n, func(n Node) bool {
		switch v := n.(type) {
		case *ColumnRef:
			out = append(out, v)
			return false
		case *Ident:
			if !notColumn[v] {
				out = append(out, &ColumnRef{Span: v.Span, Parts: []*Ident{v}})
			}
		case *CTE:
			mark(v.Name)
			mark(v.Columns...)
			mark(v.Generated...)
		case *SelectItem:
			mark(v.Alias)
		case *TableName:
			return false
		case *DerivedTable:
			mark(v.Alias)
			mark(v.Columns...)
		case *TableFunc:
			mark(v.Alias)
			mark(v.Columns...)
		case *ParenTable:
			mark(v.Alias)
		case *WindowDef:
			mark(v.Name)
		case *WindowSpec:
			mark(v.Base)
		case *Star:
			return false
		case *Call:
			mark(v.Name...)
			mark(v.OverName)
			mark(v.Columns...)
		case *Collate:
			mark(v.Collation)
		case *Interval:
			mark(v.Unit, v.To)
		}
		return true
	})
	return out
}

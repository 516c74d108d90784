package sqlparse

import (
	"sort"
	"strings"

	"github.com/text2sql-go/text2sql/internal/sqltext"
)

// Tables returns the tables the tree under n reads, as written in FROM
// and JOIN clauses at any depth (subqueries, CTE bodies, derived tables),
// in source order, each once (case-insensitive on schema.name), leaving
// out unqualified names of the CTEs declared anywhere under n. A
// table-valued function is not a table; its arguments are still walked.
// Schema is the part before the name (b in a.b.c).
//
// It is the tree pass that is to replace sqltext.Tables, the lexical scan
// (which cannot call it: sqlparse imports sqltext). They agree on every
// Spider and BIRD gold query; they differ where the scan read words that
// are no table — prose after a ";" (an *Other here), a SQLite table named
// by a string ('flights', which the scan skips) — and where tables stand
// inside tokens the parser skipped as an error (COUNT(*) FROM t inside a
// parenthesis a model left unclosed).
func Tables(n Node) []sqltext.TableRef {
	ctes := map[string]bool{}
	type found struct {
		pos int
		ref sqltext.TableRef
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
			r := sqltext.TableRef{Name: parts[len(parts)-1].Name}
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
	var out []sqltext.TableRef
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

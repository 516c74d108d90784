package sqlparse

import "reflect"

// Inspect traverses the tree rooted at n in depth-first order, in the
// style of go/ast.Inspect: it calls f(n); if f returns true, it inspects
// each non-nil child of n, then calls f(nil). Recursion is bounded by the
// tree's depth, which Parse bounds (MaxDepth).
func Inspect(n Node, f func(Node) bool) {
	if n == nil || isNil(n) || !f(n) {
		return
	}
	for _, c := range Children(n) {
		Inspect(c, f)
	}
	f(nil)
}

// isNil reports whether n is a typed nil pointer held in an interface
// (an absent optional child, such as a Query's nil *With, passed as a
// Node).
func isNil(n Node) bool {
	v := reflect.ValueOf(n)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// Children returns the direct children of n in source order, leaving out
// absent (nil) ones.
func Children(n Node) []Node {
	var out []Node
	add := func(cs ...Node) {
		for _, c := range cs {
			if c != nil && !isNil(c) {
				out = append(out, c)
			}
		}
	}
	idents := func(ids []*Ident) {
		for _, id := range ids {
			add(id)
		}
	}
	exprs := func(xs []Expr) {
		for _, x := range xs {
			add(x)
		}
	}
	terms := func(ts []*OrderTerm) {
		for _, t := range ts {
			add(t)
		}
	}
	switch v := n.(type) {
	case *Script:
		for _, s := range v.Stmts {
			add(s)
		}
	case *Query:
		add(v.With)
		add(v.Body)
		terms(v.OrderBy)
		add(v.Limit)
		add(v.Lock)
	case *With:
		for _, c := range v.CTEs {
			add(c)
		}
	case *CTE:
		add(v.Name)
		idents(v.Columns)
		add(v.Query)
		idents(v.Generated)
	case *SetOp:
		add(v.Left, v.Right)
	case *ParenQuery:
		add(v.Query)
	case *Values:
		for _, r := range v.Rows {
			add(r)
		}
	case *Select:
		exprs(v.DistinctOn)
		add(v.Top)
		for _, it := range v.Items {
			add(it)
		}
		for _, t := range v.From {
			add(t)
		}
		add(v.Where)
		exprs(v.GroupBy)
		add(v.Having)
		for _, w := range v.Windows {
			add(w)
		}
		add(v.Into)
		for _, e := range v.Errors {
			add(e)
		}
	case *SelectItem:
		add(v.Expr)
		add(v.Alias)
	case *TableName:
		idents(v.Parts)
		add(v.Alias)
		idents(v.Columns)
		for _, h := range v.Hints {
			add(h)
		}
		add(v.Sample)
		add(v.Seed)
	case *DerivedTable:
		add(v.Query)
		add(v.Alias)
		idents(v.Columns)
	case *TableFunc:
		add(v.Call)
		for _, c := range v.Rows {
			add(c)
		}
		add(v.Alias)
		idents(v.Columns)
	case *Join:
		add(v.Left, v.Right)
		add(v.On)
		idents(v.Using)
		add(v.UsingAlias)
	case *ParenTable:
		add(v.Table)
		add(v.Alias)
	case *OrderTerm:
		add(v.Expr)
	case *Limit:
		if v.Comma {
			add(v.Offset, v.Count)
		} else {
			add(v.Count, v.Offset)
		}
		add(v.Examined)
	case *WindowDef:
		add(v.Name)
		add(v.Spec)
	case *WindowSpec:
		add(v.Base)
		exprs(v.PartitionBy)
		terms(v.OrderBy)
		add(v.Frame)
	case *ColumnRef:
		idents(v.Parts)
	case *Star:
		idents(v.Table)
	case *Unary:
		add(v.X)
	case *Binary:
		add(v.X, v.Y)
	case *Is:
		add(v.X, v.Y)
	case *Between:
		add(v.X, v.Lo, v.Hi)
	case *In:
		add(v.X)
		exprs(v.List)
		add(v.Query)
	case *Like:
		add(v.X, v.Pattern, v.Escape)
	case *Cast:
		add(v.X)
		add(v.Type)
	case *TypeName:
		exprs(v.Args)
	case *Case:
		add(v.Operand)
		for _, w := range v.Whens {
			add(w)
		}
		add(v.Else)
	case *When:
		add(v.Cond, v.Result)
	case *Exists:
		add(v.Query)
	case *Subquery:
		add(v.Query)
	case *Call:
		idents(v.Name)
		exprs(v.Args)
		terms(v.OrderBy)
		add(v.Filter)
		add(v.Over)
		add(v.OverName)
		idents(v.Columns)
	case *Array:
		exprs(v.Elems)
	case *Subscript:
		add(v.X, v.Index, v.Upper)
	case *Field:
		add(v.X)
		add(v.Name)
	case *Paren:
		add(v.X)
	case *Tuple:
		exprs(v.List)
	case *Collate:
		add(v.X)
		add(v.Collation)
	case *Interval:
		add(v.Value)
		add(v.Unit)
		add(v.To)
	}
	return out
}

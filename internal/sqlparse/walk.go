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
	c := &children{}
	_ = queryChildren(c, n) || tableChildren(c, n) || exprChildren(c, n)
	return c.out
}

// children collects a node's children.
type children struct{ out []Node }

// add appends the present ones of cs.
func (c *children) add(cs ...Node) {
	for _, n := range cs {
		if n != nil && !isNil(n) {
			c.out = append(c.out, n)
		}
	}
}

// addAll appends the present ones of ns.
func addAll[N Node](c *children, ns []N) {
	for _, n := range ns {
		c.add(n)
	}
}

// queryChildren adds the children of a statement, query or clause node;
// it reports whether n is one.
func queryChildren(c *children, n Node) bool {
	switch v := n.(type) {
	case *Script:
		addAll(c, v.Stmts)
	case *Query:
		c.add(v.With)
		c.add(v.Body)
		addAll(c, v.OrderBy)
		c.add(v.Limit)
		c.add(v.Lock)
	case *With:
		addAll(c, v.CTEs)
	case *CTE:
		c.add(v.Name)
		addAll(c, v.Columns)
		c.add(v.Query)
		addAll(c, v.Generated)
	case *SetOp:
		c.add(v.Left, v.Right)
	case *ParenQuery:
		c.add(v.Query)
	case *Values:
		addAll(c, v.Rows)
	case *Select:
		addAll(c, v.DistinctOn)
		c.add(v.Top)
		addAll(c, v.Items)
		addAll(c, v.From)
		c.add(v.Where)
		addAll(c, v.GroupBy)
		c.add(v.Having)
		addAll(c, v.Windows)
		c.add(v.Into)
		addAll(c, v.Errors)
	case *SelectItem:
		c.add(v.Expr)
		c.add(v.Alias)
	case *OrderTerm:
		c.add(v.Expr)
	case *Limit:
		if v.Comma {
			c.add(v.Offset, v.Count)
		} else {
			c.add(v.Count, v.Offset)
		}
		c.add(v.Examined)
	case *WindowDef:
		c.add(v.Name)
		c.add(v.Spec)
	case *WindowSpec:
		c.add(v.Base)
		addAll(c, v.PartitionBy)
		addAll(c, v.OrderBy)
		c.add(v.Frame)
	default:
		return false
	}
	return true
}

// tableChildren adds the children of a FROM item; it reports whether n
// is one.
func tableChildren(c *children, n Node) bool {
	switch v := n.(type) {
	case *TableName:
		addAll(c, v.Parts)
		c.add(v.Alias)
		addAll(c, v.Columns)
		addAll(c, v.Hints)
		c.add(v.Sample)
		c.add(v.Seed)
	case *DerivedTable:
		c.add(v.Query)
		c.add(v.Alias)
		addAll(c, v.Columns)
	case *TableFunc:
		c.add(v.Call)
		addAll(c, v.Rows)
		c.add(v.Alias)
		addAll(c, v.Columns)
	case *Join:
		c.add(v.Left, v.Right)
		c.add(v.On)
		addAll(c, v.Using)
		c.add(v.UsingAlias)
	case *ParenTable:
		c.add(v.Table)
		c.add(v.Alias)
	default:
		return false
	}
	return true
}

// exprChildren adds the children of an expression; it reports whether n
// is one.
func exprChildren(c *children, n Node) bool {
	switch v := n.(type) {
	case *ColumnRef:
		addAll(c, v.Parts)
	case *Star:
		addAll(c, v.Table)
	case *Unary:
		c.add(v.X)
	case *Binary:
		c.add(v.X, v.Y)
	case *Is:
		c.add(v.X, v.Y)
	case *Between:
		c.add(v.X, v.Lo, v.Hi)
	case *In:
		c.add(v.X)
		addAll(c, v.List)
		c.add(v.Query)
	case *Like:
		c.add(v.X, v.Pattern, v.Escape)
	case *Cast:
		c.add(v.X)
		c.add(v.Type)
	case *TypeName:
		addAll(c, v.Args)
	case *Case:
		c.add(v.Operand)
		addAll(c, v.Whens)
		c.add(v.Else)
	case *When:
		c.add(v.Cond, v.Result)
	case *Exists:
		c.add(v.Query)
	case *Subquery:
		c.add(v.Query)
	case *Call:
		addAll(c, v.Name)
		addAll(c, v.Args)
		addAll(c, v.OrderBy)
		c.add(v.Filter)
		c.add(v.Over)
		c.add(v.OverName)
		addAll(c, v.Columns)
	case *Array:
		addAll(c, v.Elems)
	case *Subscript:
		c.add(v.X, v.Index, v.Upper)
	case *Field:
		c.add(v.X)
		c.add(v.Name)
	case *Paren:
		c.add(v.X)
	case *Tuple:
		addAll(c, v.List)
	case *Collate:
		c.add(v.X)
		c.add(v.Collation)
	case *Interval:
		c.add(v.Value)
		c.add(v.Unit)
		c.add(v.To)
	default:
		return false
	}
	return true
}

package postgres

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// The fast path of the statement check walks the protobuf encoding of the
// parse tree with the message descriptors, without building the Go tree.
// It accepts only what the full check (checkNode over the decoded tree)
// accepts, and is stricter where that is simpler: anything it does not
// accept goes to the full check, which decides and words the refusal.
// TestFastPathAgrees checks the two agree.

var (
	descParseResult = (&pg_query.ParseResult{}).ProtoReflect().Descriptor()
	descNode        = (&pg_query.Node{}).ProtoReflect().Descriptor()
	descString      = (&pg_query.String{}).ProtoReflect().Descriptor()
	descSelect      = (&pg_query.SelectStmt{}).ProtoReflect().Descriptor()

	numStmts          = descParseResult.Fields().ByName("stmts").Number()
	numRawStmt        = (&pg_query.RawStmt{}).ProtoReflect().Descriptor().Fields().ByName("stmt").Number()
	numNodeSelect     = descNode.Fields().ByName("select_stmt").Number()
	numNodeString     = descNode.Fields().ByName("string").Number()
	numStringSval     = descString.Fields().ByName("sval").Number()
	numSelectInto     = descSelect.Fields().ByName("into_clause").Number()
	numSelectLocking  = descSelect.Fields().ByName("locking_clause").Number()
	numCTEQuery       = (&pg_query.CommonTableExpr{}).ProtoReflect().Descriptor().Fields().ByName("ctequery").Number()
	numFuncName       = (&pg_query.FuncCall{}).ProtoReflect().Descriptor().Fields().ByName("funcname").Number()
	numAExprName      = (&pg_query.A_Expr{}).ProtoReflect().Descriptor().Fields().ByName("name").Number()
	numColumnFields   = (&pg_query.ColumnRef{}).ProtoReflect().Descriptor().Fields().ByName("fields").Number()
	numIndirection    = (&pg_query.A_Indirection{}).ProtoReflect().Descriptor().Fields().ByName("indirection").Number()
	numSortUseOp      = (&pg_query.SortBy{}).ProtoReflect().Descriptor().Fields().ByName("use_op").Number()
	numSubLinkOper    = (&pg_query.SubLink{}).ProtoReflect().Descriptor().Fields().ByName("oper_name").Number()
	numRangeVarSchema = (&pg_query.RangeVar{}).ProtoReflect().Descriptor().Fields().ByName("schemaname").Number()
	numRangeVarRel    = (&pg_query.RangeVar{}).ProtoReflect().Descriptor().Fields().ByName("relname").Number()
)

// fastOK reports whether the encoded parse result certainly passes the
// check: one statement, a SELECT, and nothing below it the full check
// would refuse.
func (c *Guard) fastOK(buf []byte, res *resolution) bool {
	var stmt []byte
	n := 0
	ok := fields(buf, func(num protowire.Number, typ protowire.Type, v []byte) bool {
		if num == numStmts {
			n++
			stmt = v
		}
		return true
	})
	if !ok || n != 1 {
		return false
	}
	var node []byte
	if !fields(stmt, func(num protowire.Number, typ protowire.Type, v []byte) bool {
		if num == numRawStmt {
			node = v
		}
		return true
	}) || node == nil {
		return false
	}
	if nodeKind(node) != numNodeSelect {
		return false
	}
	return c.fastWalk(descNode, node, res)
}

// fields calls f for every field of an encoded message, with the value's
// bytes for length-delimited fields (nil for others). It returns false on
// malformed input or when f does.
func fields(b []byte, f func(protowire.Number, protowire.Type, []byte) bool) bool {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return false
		}
		b = b[n:]
		var v []byte
		if typ == protowire.BytesType {
			v, n = protowire.ConsumeBytes(b)
		} else {
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return false
		}
		b = b[n:]
		if !f(num, typ, v) {
			return false
		}
	}
	return true
}

// nodeKind returns the field number of the message a Node holds (which
// says its type), or 0.
func nodeKind(node []byte) protowire.Number {
	var kind protowire.Number
	fields(node, func(num protowire.Number, typ protowire.Type, v []byte) bool {
		kind = num
		return true
	})
	return kind
}

// fastWalk checks an encoded message of type md and everything below it.
func (c *Guard) fastWalk(md protoreflect.MessageDescriptor, b []byte, res *resolution) bool {
	name := md.Name()
	switch name {
	case "FuncCall":
		if !c.fastFunc(b, res) {
			return false
		}
	case "ColumnRef", "A_Indirection":
		if !c.fastAttribute(name, b, res) {
			return false
		}
	case "RangeTableSample", "RangeVar":
		// Rare, or a relation's name decides: the full check looks.
		if name == "RangeTableSample" || !c.fastRelation(b) {
			return false
		}
	case "A_Expr", "SortBy", "SubLink":
		// A database's own operators (user-defined) go to the full check.
		if len(c.cat.operators) > 0 {
			return false
		}
	case "TypeCast":
		if len(c.cat.domains) > 0 {
			return false
		}
	case "RawStmt", "SelectStmt":
	default:
		if _, old := c.cat.tooNew(string(name)); old || strings.HasSuffix(string(name), "Stmt") {
			return false
		}
	}
	fds := md.Fields()
	opParts := 0
	return fields(b, func(num protowire.Number, typ protowire.Type, v []byte) bool {
		switch {
		case name == "SelectStmt" && (num == numSelectInto || num == numSelectLocking):
			return false
		case name == "CommonTableExpr" && num == numCTEQuery && nodeKind(v) != numNodeSelect:
			return false
		case name == "A_Expr" && num == numAExprName, name == "SortBy" && num == numSortUseOp, name == "SubLink" && num == numSubLinkOper:
			// An operator written OPERATOR(schema.op) has a qualified
			// name: the full check decides.
			if opParts++; opParts > 1 {
				return false
			}
		}
		if typ != protowire.BytesType {
			return true
		}
		fd := fds.ByNumber(num)
		if fd == nil {
			return false
		}
		if fd.Kind() != protoreflect.MessageKind {
			return true // a string or packed scalars
		}
		return c.fastWalk(fd.Message(), v, res)
	})
}

// fastFunc reports whether an encoded FuncCall names an allow-listed
// function (see Guard.checkFunc).
func (c *Guard) fastFunc(b []byte, res *resolution) bool {
	var parts []string
	if !fields(b, func(num protowire.Number, typ protowire.Type, v []byte) bool {
		if num != numFuncName {
			return true
		}
		s, ok := nodeString(v)
		if ok {
			parts = append(parts, s)
		}
		return ok
	}) {
		return false
	}
	if len(parts) == 1 {
		res.call(parts[0])
	}
	return len(parts) > 0 && c.allowed(parts)
}

// fastAttribute reports whether an encoded ColumnRef or A_Indirection
// certainly calls no function in attribute notation (see
// Guard.attributeCall): the last name of a qualified column reference,
// and every field a field selection names.
func (c *Guard) fastAttribute(kind protoreflect.Name, b []byte, res *resolution) bool {
	num := numColumnFields
	if kind == "A_Indirection" {
		num = numIndirection
	}
	n := 0
	last := ""
	ok := fields(b, func(f protowire.Number, typ protowire.Type, v []byte) bool {
		if f != num {
			return true
		}
		n++
		last = ""
		if s, isString := nodeString(v); isString {
			last = s
			if kind == "A_Indirection" {
				if c.attributeCall(s) {
					return false
				}
				c.attribute(s, res)
			}
		}
		return true
	})
	if !ok || kind == "A_Indirection" || n < 2 || last == "" {
		return ok
	}
	if c.attributeCall(last) {
		return false
	}
	c.attribute(last, res)
	return true
}

// fastRelation reports whether an encoded RangeVar certainly names no
// system relation (see systemRelation).
func (c *Guard) fastRelation(b []byte) bool {
	var schema, rel string
	ok := fields(b, func(num protowire.Number, typ protowire.Type, v []byte) bool {
		switch num {
		case numRangeVarSchema:
			schema = string(v)
		case numRangeVarRel:
			rel = string(v)
		}
		return true
	})
	return ok && !systemRelation(&pg_query.RangeVar{Schemaname: schema, Relname: rel})
}

// nodeString decodes a Node holding a String.
func nodeString(node []byte) (string, bool) {
	var s string
	found := false
	ok := fields(node, func(num protowire.Number, typ protowire.Type, v []byte) bool {
		if num != numNodeString {
			return false
		}
		found = true
		return fields(v, func(num protowire.Number, typ protowire.Type, v []byte) bool {
			if num == numStringSval {
				s = string(v)
			}
			return true
		})
	})
	return s, ok && found
}

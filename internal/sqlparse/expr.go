package sqlparse

import (
	"strings"

	"github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/sqltext"
)

// Binding powers, loosest first. || sits with the JSON operators above
// multiplication, as in SQLite (PostgreSQL puts it below + and -; MySQL
// reads it as OR unless PIPES_AS_CONCAT): the tree's shape around || is
// SQLite's in every dialect. PostgreSQL's other operators (?|, <->, &&,
// …) bind as its manual says: above comparison, below + and -.
const (
	precOr      = 1 // OR, XOR
	precAnd     = 2 // AND, && (MySQL, SQLite)
	precNot     = 3 // prefix NOT
	precCompare = 4 // = <> < … IS, IN, BETWEEN, LIKE …
	precBit     = 5 // | & << >>, PostgreSQL's other operators
	precAdd     = 6 // + -
	precMul     = 7 // * / % DIV MOD
	precConcat  = 8 // || -> ->> #> #>> @> <@
	precPower   = 9 // ^ (PostgreSQL's power, MySQL's bitwise XOR)
)

func (p *parser) expr() Expr { return p.binary(precOr) }

// infix returns the binding power of the binary operator at the current
// token, 0 if there is none.
func (p *parser) infix() int {
	t := p.tok()
	switch t.Kind {
	case sqltext.Punct:
		switch t.Text {
		case "=", "==", "<>", "!=", "<", ">", "<=", ">=", "<=>", "~", "~*", "!~", "!~*":
			return precCompare
		case "|", "&", "<<", ">>":
			return precBit
		case "+", "-":
			return precAdd
		case "*", "/", "%":
			return precMul
		case "||", "->", "->>", "#>", "#>>", "@>", "<@":
			return precConcat
		case "^":
			return precPower
		case "&&":
			if p.dialect != text2sql.DialectPostgres {
				return precAnd
			}
		}
		if p.dialect == text2sql.DialectPostgres && sqltext.PostgresOperator(t.Text) {
			return precBit
		}
	case sqltext.Word:
		switch strings.ToUpper(t.Text) {
		case "OR", "XOR":
			return precOr
		case "AND":
			return precAnd
		case "IS", "BETWEEN", "LIKE", "ILIKE", "GLOB", "REGEXP", "RLIKE", "MATCH":
			return precCompare
		case "SOUNDS":
			if p.wordAt(1, "LIKE") {
				return precCompare
			}
		case "OVERLAPS":
			return precCompare
		case "SIMILAR":
			if p.wordAt(1, "TO") {
				return precCompare
			}
		case "ISNULL", "NOTNULL":
			if !p.punctAt(1, "(") {
				return precCompare
			}
		case "IN":
			// IN without ( is a keyword separator: POSITION(a IN b).
			if p.punctAt(1, "(") {
				return precCompare
			}
		case "NOT":
			n := p.peek(1)
			if n.Is("IN") && p.punctAt(2, "(") || n.Is("BETWEEN") || n.Is("LIKE") || n.Is("ILIKE") || n.Is("GLOB") ||
				n.Is("REGEXP") || n.Is("RLIKE") || n.Is("MATCH") || n.Is("SIMILAR") || n.Is("NULL") {
				return precCompare
			}
		case "DIV", "MOD":
			return precMul
		case "COLLATE":
			return 0
		}
	}
	return 0
}

// binary parses an expression whose operators bind at least min.
func (p *parser) binary(min int) Expr {
	from := p.i
	var left Expr
	if min <= precNot && p.word("NOT") {
		p.i++
		if !p.enter() {
			left = &Unary{Op: "NOT", X: p.skip("nesting too deep", p.clauseStop)}
		} else {
			left = &Unary{Op: "NOT", X: p.binary(precNot)}
		}
		p.leave()
		left.(*Unary).Span = p.span(from)
	} else {
		left = p.unary()
	}
	levels := 0
	defer func() { p.depth -= levels }()
	for {
		prec := p.infix()
		if prec == 0 || prec < min {
			return left
		}
		at := p.i
		levels++
		if !p.enter() {
			p.skip("nesting too deep", p.clauseStop)
			return left
		}
		if prec == precCompare {
			left = p.comparison(from, left)
		} else {
			op := p.tok().Text
			if p.tok().Kind == sqltext.Word {
				op = strings.ToUpper(op)
			}
			p.i++
			right := p.binary(prec + 1)
			left = &Binary{Span: p.span(from), Op: op, X: left, Y: right}
		}
		if p.i == at {
			return left
		}
	}
}

// comparison parses the comparison operator at the current token and its
// right side, with left already parsed from token from.
func (p *parser) comparison(from int, left Expr) Expr {
	not := false
	if p.word("NOT") {
		not = true
		p.i++
		if p.accept("NULL") {
			return &Is{Span: p.span(from), Not: true, X: left, Y: &Literal{Span: p.span(p.i), Kind: Null}}
		}
	}
	t := p.tok()
	if t.Kind == sqltext.Punct || t.Is("OVERLAPS") {
		p.i++
		right := p.binary(precBit)
		return &Binary{Span: p.span(from), Op: strings.ToUpper(t.Text), X: left, Y: right}
	}
	w := strings.ToUpper(t.Text)
	p.i++
	switch w {
	case "ISNULL":
		return &Is{Span: p.span(from), X: left, Y: &Literal{Span: p.span(p.i), Kind: Null}}
	case "NOTNULL":
		return &Is{Span: p.span(from), Not: true, X: left, Y: &Literal{Span: p.span(p.i), Kind: Null}}
	case "IS":
		is := &Is{X: left, Not: p.accept("NOT")}
		if p.word("DISTINCT") && p.wordAt(1, "FROM") {
			p.i += 2
			is.Distinct = true
		}
		is.Y = p.binary(precBit)
		is.Span = p.span(from)
		return is
	case "BETWEEN":
		if !p.accept("SYMMETRIC") {
			p.accept("ASYMMETRIC")
		}
		b := &Between{Not: not, X: left}
		b.Lo = p.binary(precBit)
		if !p.accept("AND") {
			p.errAt("expected AND")
		}
		b.Hi = p.binary(precBit)
		b.Span = p.span(from)
		return b
	case "IN":
		in := &In{Not: not, X: left}
		p.i++ // (
		if p.startsQuery() || p.punct("(") && p.parenQueryAhead() {
			in.Query = p.query()
		} else if !p.punct(")") {
			in.List = p.exprList()
		}
		p.closeParen()
		in.Span = p.span(from)
		return in
	}
	if w == "SIMILAR" || w == "SOUNDS" {
		w += " " + strings.ToUpper(p.tok().Text) // TO, LIKE
		p.i++
	}
	l := &Like{Not: not, Op: w, X: left}
	l.Pattern = p.binary(precBit)
	if p.accept("ESCAPE") {
		l.Escape = p.binary(precBit)
	}
	l.Span = p.span(from)
	return l
}

// unary parses prefix operators, a primary and postfix operators (::,
// COLLATE, AT TIME ZONE, subscripts).
func (p *parser) unary() Expr { return p.unaryAt(true) }

// unaryAt is unary; without at, it stops before AT TIME ZONE, so that
// the zone of x AT TIME ZONE y AT TIME ZONE z is y, not y AT TIME ZONE z
// (AT is left-associative).
func (p *parser) unaryAt(at bool) Expr {
	from := p.i
	t := p.tok()
	if t.Kind == sqltext.Punct && (t.Text == "-" || t.Text == "+" || t.Text == "~" || t.Text == "!" ||
		p.dialect == text2sql.DialectPostgres && t.Text != "*" && sqltext.PostgresOperator(t.Text)) ||
		t.Is("BINARY") && p.dialect == text2sql.DialectMySQL && !p.punctAt(1, "(") && !p.punctAt(1, ",") && !p.punctAt(1, ")") {
		p.i++
		u := &Unary{Op: strings.ToUpper(t.Text)}
		if !p.enter() {
			u.X = p.skip("nesting too deep", p.clauseStop)
		} else {
			u.X = p.unary()
		}
		p.leave()
		u.Span = p.span(from)
		return u
	}
	x := p.primary()
	// Each postfix operator nests the tree one level deeper: x::a::b…
	// counts against MaxDepth as an operator chain does.
	levels := 0
	defer func() { p.depth -= levels }()
	for {
		if p.punct("::") || p.word("COLLATE") || p.word("AT") || p.punct("[") || p.punct(".") {
			levels++
			if !p.enter() {
				p.skip("nesting too deep", p.clauseStop)
				return x
			}
		}
		switch {
		case p.punct("::"):
			p.i++
			x = &Cast{Op: "::", X: x, Type: p.typeName()}
			x.(*Cast).Span = p.span(from)
		case p.word("COLLATE"):
			p.i++
			x = &Collate{X: x, Collation: p.ident()}
			x.(*Collate).Span = p.span(from)
		case at && p.word("AT") && p.wordAt(1, "TIME") && p.wordAt(2, "ZONE"):
			p.i += 3
			x = &Binary{Op: "AT TIME ZONE", X: x, Y: p.unaryAt(false)}
			x.(*Binary).Span = p.span(from)
		case p.punct("[") && p.dialect == text2sql.DialectPostgres && p.i > from:
			x = p.subscript(from, x)
		case p.punct(".") && p.dialect == text2sql.DialectPostgres && (isParen(x) || isSubscript(x)) &&
			(p.peek(1).Kind == sqltext.Word || p.peek(1).Kind == sqltext.QuotedIdent || p.punctAt(1, "*")):
			// (composite).field, (composite).*, arr[1].field.
			p.i++
			f := &Field{X: x}
			if p.acceptPunct("*") {
				f.Star = true
			} else {
				f.Name = p.ident()
			}
			f.Span = p.span(from)
			x = f
		default:
			return x
		}
	}
}

func isParen(x Expr) bool {
	_, ok := x.(*Paren)
	return ok
}

func isSubscript(x Expr) bool {
	_, ok := x.(*Subscript)
	return ok
}

// subscript parses [i] or [lo:hi] after x, which starts at token from;
// the current token is "[".
func (p *parser) subscript(from int, x Expr) Expr {
	p.i++ // [
	s := &Subscript{X: x}
	if !p.punct(":") {
		s.Index = p.expr()
	}
	if p.acceptPunct(":") {
		s.Slice = true
		if !p.punct("]") {
			s.Upper = p.expr()
		}
	}
	p.closeBracket()
	s.Span = p.span(from)
	return s
}

// closeBracket consumes the "]" that closes a subscript or an array,
// skipping what stands before it as an Error.
func (p *parser) closeBracket() {
	if p.acceptPunct("]") {
		return
	}
	from := p.i
	for level := 0; !p.eof() && !p.punct(";") && !(level == 0 && p.punct("]")); p.i++ {
		switch {
		case p.punct("["):
			level++
		case p.punct("]"):
			level--
		}
	}
	e := &Error{Span: p.span(from), Reason: "unexpected tokens before ]"}
	p.errs = append(p.errs, e)
	p.acceptPunct("]")
}

// array parses the elements of ARRAY[…] or of a nested [ … ]; the
// current token is "[".
func (p *parser) array(from int) *Array {
	p.i++ // [
	a := &Array{}
	deep := !p.enter()
	defer p.leave()
	for !deep && !p.punct("]") && !p.eof() {
		at := p.i
		if p.punct("[") {
			a.Elems = append(a.Elems, p.array(p.i))
		} else {
			a.Elems = append(a.Elems, p.expr())
		}
		if p.i == at || !p.acceptPunct(",") {
			break
		}
	}
	p.closeBracket()
	a.Span = p.span(from)
	return a
}

// typeWords may continue a type name after its first word.
var typeWords = map[string]bool{
	"precision": true, "varying": true, "unsigned": true, "signed": true, "integer": true, "int": true,
	"char": true, "zone": true, "time": true, "without": true, "large": true, "object": true,
}

func (p *parser) typeName() *TypeName {
	from := p.i
	tn := &TypeName{}
	var words []string
	if t := p.tok(); t.Kind == sqltext.Word || t.Kind == sqltext.QuotedIdent {
		words = append(words, t.Text)
		p.i++
		for p.punct(".") && (p.peek(1).Kind == sqltext.Word || p.peek(1).Kind == sqltext.QuotedIdent) {
			words[len(words)-1] += "." + p.peek(1).Text
			p.i += 2
		}
	} else {
		p.errAt("expected type")
		tn.Span = p.span(from)
		return tn
	}
	more := func() {
		for {
			t := p.tok()
			if t.Kind == sqltext.Word && (typeWords[strings.ToLower(t.Text)] || t.Is("WITH") && p.wordAt(1, "TIME")) {
				words = append(words, t.Text)
				p.i++
				continue
			}
			return
		}
	}
	more()
	if p.punct("(") {
		p.i++
		if !p.punct(")") {
			tn.Args = p.exprList()
		}
		p.closeParen()
		more()
	}
	for p.punct("[") && (p.punctAt(1, "]") || p.peek(1).Kind == sqltext.Number && p.punctAt(2, "]")) {
		tn.Array = true // int[], int[3]
		p.i++
		if p.tok().Kind == sqltext.Number {
			p.i++
		}
		p.i++ // ]
	}
	if strings.EqualFold(words[0], "interval") && p.tok().Kind == sqltext.Word && intervalFields[strings.ToLower(p.tok().Text)] {
		// PostgreSQL: interval hour to minute, interval second(3).
		words = append(words, p.tok().Text)
		p.i++
		if p.word("TO") && intervalFields[strings.ToLower(p.peek(1).Text)] {
			words = append(words, "to", p.peek(1).Text)
			p.i += 2
		}
		if p.punct("(") {
			p.i++
			tn.Args = p.exprList()
			p.closeParen()
		}
	}
	if p.word("CHARACTER") && p.wordAt(1, "SET") || p.word("CHARSET") {
		// MySQL: CHAR CHARACTER SET utf8mb4.
		p.accept("CHARACTER")
		p.i++
		p.ident()
	}
	tn.Name = strings.Join(words, " ")
	tn.Span = p.span(from)
	return tn
}

// intervalFields are the fields that may qualify PostgreSQL's interval
// type.
var intervalFields = map[string]bool{"year": true, "month": true, "day": true, "hour": true, "minute": true, "second": true}

// typedLit are the words that, before a string, make a typed literal in
// every dialect.
var typedLit = map[string]bool{"date": true, "time": true, "timestamp": true, "datetime": true, "timestamptz": true}

// typedLiteral returns the number of tokens of the typed literal at the
// current word, 0 if there is none: DATE '…' in every dialect; in
// PostgreSQL any type name before a string (jsonb '{}', numeric '1.5',
// DOUBLE PRECISION '2', TIMESTAMP WITH TIME ZONE '…'); in MySQL a
// character set introducer (_utf8mb4'…').
func (p *parser) typedLiteral() int {
	t := p.tok()
	lw := strings.ToLower(t.Text)
	if p.peek(1).Kind == sqltext.String {
		switch {
		case typedLit[lw],
			p.dialect == text2sql.DialectMySQL && strings.HasPrefix(lw, "_"),
			p.dialect == text2sql.DialectPostgres && !isReserved(t) && !trimWords[lw]:
			return 2
		}
		return 0
	}
	if p.dialect != text2sql.DialectPostgres {
		return 0
	}
	// A type of several words: DOUBLE PRECISION, TIME WITH TIME ZONE.
	k := 1
	for n := p.peek(k); n.Kind == sqltext.Word && (typeWords[strings.ToLower(n.Text)] || n.Is("WITH") && p.wordAt(k+1, "TIME")); n = p.peek(k) {
		k++
	}
	if k > 1 && p.peek(k).Kind == sqltext.String {
		return k + 1
	}
	return 0
}

func (p *parser) primary() Expr {
	from := p.i
	deep := !p.enter()
	defer p.leave()
	if deep {
		return p.skip("nesting too deep", p.clauseStop)
	}
	t := p.tok()
	switch t.Kind {
	case sqltext.Number:
		p.i++
		return &Literal{Span: p.span(from), Kind: Number}
	case sqltext.String:
		p.i++
		for p.tok().Kind == sqltext.String && p.dialect != text2sql.DialectPostgres {
			// Adjacent literals join (MySQL, SQLite reject; harmless).
			p.i++
		}
		return &Literal{Span: p.span(from), Kind: String}
	case sqltext.Param:
		p.i++
		return &Param{Span: p.span(from)}
	case sqltext.QuotedIdent:
		return p.name(from)
	case sqltext.Punct:
		switch t.Text {
		case "(":
			return p.parenPrimary(from)
		case "*":
			p.i++
			return &Star{Span: p.span(from)}
		}
	case sqltext.Word:
		if x := p.wordPrimary(from, t); x != nil {
			return x
		}
	}
	return p.errAt("expected expression")
}

// parenPrimary parses an expression that starts with "(": a subquery, a
// parenthesised expression or a row of several.
func (p *parser) parenPrimary(from int) Expr {
	// Only "(" right before SELECT opens a subquery here: in
	// ((SELECT a) - (SELECT b)) the outer parenthesis holds an
	// expression.
	if n := p.peek(1); n.Is("SELECT") || n.Is("WITH") || n.Is("VALUES") {
		p.i++
		q := p.query()
		p.closeParen()
		return &Subquery{Span: p.span(from), Query: q}
	}
	p.i++
	if p.acceptPunct(")") {
		return &Tuple{Span: p.span(from)} // () of GROUPING SETS
	}
	list := p.exprList()
	p.closeParen()
	if len(list) == 1 {
		return &Paren{Span: p.span(from), X: list[0]}
	}
	return &Tuple{Span: p.span(from), List: list}
}

// wordPrimary parses an expression that starts with the word t: a
// keyword's construct, a typed literal (DATE '…') or a name; nil for a
// reserved word that starts none.
func (p *parser) wordPrimary(from int, t sqltext.Token) Expr {
	w := strings.ToUpper(t.Text)
	next := p.peek(1)
	call := next.Kind == sqltext.Punct && next.Text == "("
	if x := p.keywordPrimary(from, w, call); x != nil {
		return x
	}
	if n := p.typedLiteral(); n > 0 {
		p.i += n
		return &Literal{Span: p.span(from), Kind: Typed, Type: w}
	}
	if isReserved(t) && !(call && (w == "LEFT" || w == "RIGHT" || w == "MOD" || w == "REPLACE" || w == "IF" || w == "VALUES")) {
		return nil
	}
	return p.name(from)
}

// keywordPrimary parses the construct the keyword w (upper case) starts,
// call saying whether "(" follows it; nil when w starts none here.
func (p *parser) keywordPrimary(from int, w string, call bool) Expr {
	switch w {
	case "NULL":
		p.i++
		return &Literal{Span: p.span(from), Kind: Null}
	case "TRUE", "FALSE":
		if !call {
			p.i++
			return &Literal{Span: p.span(from), Kind: Bool}
		}
	case "CASE":
		return p.caseExpr()
	case "CAST", "TRY_CAST":
		if call {
			return p.castExpr(from, w)
		}
	case "EXISTS":
		if call {
			p.i += 2
			q := p.query()
			p.closeParen()
			return &Exists{Span: p.span(from), Query: q}
		}
	case "NOT":
		p.i++
		u := &Unary{Op: "NOT", X: p.unary()}
		u.Span = p.span(from)
		return u
	case "ROW":
		if call {
			p.i += 2
			tu := &Tuple{List: p.exprList()}
			p.closeParen()
			tu.Span = p.span(from)
			return tu
		}
	case "INTERVAL":
		return p.interval(from)
	case "ARRAY":
		if p.punctAt(1, "[") && p.dialect == text2sql.DialectPostgres {
			p.i++
			return p.array(from)
		}
	case "GROUPING":
		if p.wordAt(1, "SETS") && p.punctAt(2, "(") {
			p.i++
			name := &Ident{Name: "GROUPING SETS"}
			p.i++
			name.Span = p.span(from)
			return p.callRest(from, []*Ident{name})
		}
	case "ANY", "SOME", "ALL":
		if call {
			parts := []*Ident{p.ident()}
			return p.callRest(from, parts)
		}
	}
	return nil
}

// castExpr parses CAST(x AS type) (or TRY_CAST, op) at its name.
func (p *parser) castExpr(from int, op string) Expr {
	p.i += 2
	c := &Cast{Op: op, X: p.expr()}
	if !p.accept("AS") {
		p.errAt("expected AS")
	}
	c.Type = p.typeName()
	p.closeParen()
	c.Span = p.span(from)
	return c
}

// interval parses INTERVAL value [unit [TO unit]] at INTERVAL, or returns
// nil when the word is a name (a column called interval).
func (p *parser) interval(from int) Expr {
	next := p.peek(1)
	valueNext := next.Kind == sqltext.String || next.Kind == sqltext.Number || next.Kind == sqltext.Param ||
		next.Kind == sqltext.Punct && (next.Text == "(" || next.Text == "-") ||
		next.Kind == sqltext.Word && !isReserved(next) && !p.punctAt(2, ",") && !p.punctAt(2, ")")
	if !valueNext {
		return nil
	}
	p.i++
	iv := &Interval{Value: p.unary()}
	if u := p.tok(); u.Kind == sqltext.Word && !isReserved(u) {
		iv.Unit = p.ident()
		if p.word("TO") && p.peek(1).Kind == sqltext.Word {
			p.i++
			iv.To = p.ident()
		}
	}
	iv.Span = p.span(from)
	return iv
}

// name parses a possibly qualified name: a column, t.*, or a call.
func (p *parser) name(from int) Expr {
	parts := []*Ident{p.ident()}
	for p.punct(".") {
		n := p.peek(1)
		if n.Kind == sqltext.Punct && n.Text == "*" {
			p.i += 2
			return &Star{Span: p.span(from), Table: parts}
		}
		if n.Kind != sqltext.Word && n.Kind != sqltext.QuotedIdent {
			break
		}
		p.i++
		parts = append(parts, p.ident())
	}
	if p.punct("(") && !parts[len(parts)-1].Quoted {
		return p.callRest(from, parts)
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return &ColumnRef{Span: p.span(from), Parts: parts}
}

// argWords are the keywords that separate the arguments of the functions
// written with them, by function. Only these functions take them: in any
// other call a FROM is a missing ")" (COUNT(x) … FROM t with a ")" lost),
// and reading it as a separator would swallow the FROM clause.
var argWords = map[string]map[string]bool{
	"extract":      {"from": true},
	"substring":    {"from": true, "for": true},
	"substr":       {"from": true, "for": true},
	"trim":         {"from": true},
	"btrim":        {"from": true},
	"overlay":      {"placing": true, "from": true, "for": true},
	"position":     {"in": true},
	"convert":      {"using": true},
	"char":         {"using": true},
	"group_concat": {"separator": true},
	"xmltable":     {"passing": true},
}

// columnsFuncs are the table functions whose arguments end with a
// COLUMNS clause.
var columnsFuncs = map[string]bool{"json_table": true, "xmltable": true}

// trimWords precede the argument they qualify: TRIM(LEADING '0' FROM s).
var trimWords = map[string]bool{"leading": true, "trailing": true, "both": true}

// callRest parses (args) and what may follow a call; the current token
// is "(".
func (p *parser) callRest(from int, parts []*Ident) *Call {
	c := &Call{Name: parts}
	p.i++ // (
	switch {
	case p.punct("*") && p.punctAt(1, ")"):
		p.i++
		c.Star = true
	case p.punct(")"):
	default:
		if p.accept("DISTINCT") {
			c.Distinct = true
		} else if p.word("ALL") && !p.punctAt(1, "(") {
			p.i++
		}
		for !p.punct(")") && !p.eof() {
			at := p.i
			if p.startsQuery() {
				sf := p.i
				q := p.query()
				c.Args = append(c.Args, &Subquery{Span: p.span(sf), Query: q})
			} else {
				arg := p.expr()
				c.Args = append(c.Args, arg)
				if id, ok := arg.(*Ident); ok && !id.Quoted && trimWords[strings.ToLower(id.Name)] && !p.punct(")") && !p.punct(",") && !p.word("FROM") {
					continue
				}
			}
			if !p.argSeparator(c) || p.i == at {
				break
			}
		}
	}
	p.closeParen()
	if p.word("AGAINST") && p.punctAt(1, "(") && strings.EqualFold(c.Name[len(c.Name)-1].Name, "match") {
		// MySQL: MATCH (cols) AGAINST (expr [IN … MODE | WITH QUERY
		// EXPANSION]); the search expression joins the arguments.
		p.i += 2
		c.Args = append(c.Args, p.binary(precBit))
		for p.word("IN", "NATURAL", "LANGUAGE", "BOOLEAN", "MODE", "WITH", "QUERY", "EXPANSION") {
			p.i++
		}
		p.closeParen()
	}
	if p.word("WITHIN") && p.wordAt(1, "GROUP") && p.punctAt(2, "(") {
		p.i += 3
		if p.word("ORDER") && p.wordAt(1, "BY") {
			p.i += 2
			c.OrderBy = p.orderTerms()
		}
		p.closeParen()
	}
	if p.word("FILTER") && p.punctAt(1, "(") {
		p.i += 2
		if !p.accept("WHERE") {
			p.errAt("expected WHERE")
		}
		c.Filter = p.expr()
		p.closeParen()
	}
	if p.word("OVER") {
		p.i++
		if p.punct("(") {
			c.Over = p.windowSpec()
		} else {
			c.OverName = p.ident()
		}
	}
	c.Span = p.span(from)
	return c
}

func (p *parser) caseExpr() Expr {
	from := p.i
	p.i++ // CASE
	c := &Case{}
	if !p.word("WHEN") {
		c.Operand = p.expr()
	}
	for p.word("WHEN") {
		wf := p.i
		p.i++
		w := &When{Cond: p.expr()}
		if !p.accept("THEN") {
			p.errAt("expected THEN")
		}
		w.Result = p.expr()
		w.Span = p.span(wf)
		c.Whens = append(c.Whens, w)
	}
	if p.accept("ELSE") {
		c.Else = p.expr()
	}
	if !p.accept("END") {
		p.errAt("expected END")
	}
	c.Span = p.span(from)
	return c
}

// argSeparator consumes what may stand between two arguments of c — a
// comma, a keyword separator of its function (argWords),
// ORDER BY terms (into c.OrderBy), IGNORE/RESPECT NULLS — and reports
// whether another argument follows.
func (p *parser) argSeparator(c *Call) bool {
	for {
		switch t := p.tok(); {
		case p.acceptPunct(","):
			return true
		case p.word("ORDER") && p.wordAt(1, "BY"):
			p.i += 2
			c.OrderBy = p.orderTerms()
		case p.word("IGNORE", "RESPECT") && p.wordAt(1, "NULLS"):
			p.i += 2
		case t.Kind == sqltext.Word && argWords[strings.ToLower(c.Name[len(c.Name)-1].Name)][strings.ToLower(t.Text)]:
			p.i++
			return true
		case p.word("COLUMNS") && columnsFuncs[strings.ToLower(c.Name[len(c.Name)-1].Name)]:
			p.tableColumns(c)
			return false
		default:
			return false
		}
	}
}

// tableColumns parses the COLUMNS clause of JSON_TABLE (in parentheses)
// or XMLTABLE (up to the call's ")") into c.Columns: each definition's
// name, and those of NESTED [PATH] '…' COLUMNS (…). The rest of a
// definition (type, PATH, DEFAULT … ON EMPTY, FOR ORDINALITY) names no
// column of the query and is passed over.
func (p *parser) tableColumns(c *Call) {
	p.i++ // COLUMNS
	paren := p.acceptPunct("(")
	deep := !p.enter()
	defer p.leave()
	for !p.eof() && !p.punct(")") {
		at := p.i
		if p.word("NESTED") && !deep {
			p.i++
			p.accept("PATH")
			p.i++ // the path
			if p.word("COLUMNS") {
				p.tableColumns(c)
			}
		} else {
			c.Columns = append(c.Columns, p.ident())
		}
		for level := 0; !p.eof() && !p.punct(";") && !(level == 0 && (p.punct(",") || p.punct(")"))); p.i++ {
			switch {
			case p.punct("("):
				level++
			case p.punct(")"):
				level--
			}
		}
		if p.i == at || !p.acceptPunct(",") {
			break
		}
	}
	if paren {
		p.closeParen()
	}
}

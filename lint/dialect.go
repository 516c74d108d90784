package lint

import (
	"strings"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/sqltext"
)

var dialectName = map[text2sql.Dialect]string{
	text2sql.DialectSQLite:   "SQLite",
	text2sql.DialectPostgres: "PostgreSQL",
	text2sql.DialectMySQL:    "MySQL",
}

// foreignFunction is a function another dialect has and the target lacks.
type foreignFunction struct {
	from string // the dialect(s) it belongs to, for the message
	use  string // what to write instead
}

// foreignFunctions lists, per target dialect, functions the target does not
// have, with the replacement. The SQLite list is verified against the
// engine by the tests ("no such function"). Only names that are certainly
// absent are listed: a host may register functions of its own, but not
// these.
var foreignFunctions = map[text2sql.Dialect]map[string]foreignFunction{
	text2sql.DialectSQLite: {
		"string_split":   {"SQL Server", "json_each(text) over a JSON array, or a recursive CTE"},
		"now":            {"PostgreSQL/MySQL", "datetime('now') for the current moment, date('now') for today"},
		"date_trunc":     {"PostgreSQL", "strftime('%Y-%m-01', column) for the month, strftime('%Y-01-01', column) for the year"},
		"date_part":      {"PostgreSQL", "strftime('%Y', column) and the like (a string; CAST it AS INTEGER)"},
		"to_char":        {"PostgreSQL", "strftime(format, column)"},
		"to_date":        {"PostgreSQL", "date(text) for ISO dates"},
		"to_timestamp":   {"PostgreSQL", "datetime(text) or datetime(seconds, 'unixepoch')"},
		"age":            {"PostgreSQL", "julianday(a) - julianday(b) for a difference in days"},
		"date_format":    {"MySQL", "strftime(format, column)"},
		"date_add":       {"MySQL", "date(column, '+1 day') and other modifiers"},
		"date_sub":       {"MySQL", "date(column, '-1 day') and other modifiers"},
		"adddate":        {"MySQL", "date(column, '+1 day')"},
		"subdate":        {"MySQL", "date(column, '-1 day')"},
		"curdate":        {"MySQL", "date('now')"},
		"curtime":        {"MySQL", "time('now')"},
		"sysdate":        {"MySQL/Oracle", "datetime('now')"},
		"datediff":       {"MySQL/SQL Server", "julianday(a) - julianday(b)"},
		"dateadd":        {"SQL Server", "date(column, '+1 day') and other modifiers"},
		"datepart":       {"SQL Server", "strftime(format, column)"},
		"getdate":        {"SQL Server", "datetime('now')"},
		"timestampdiff":  {"MySQL", "julianday(a) - julianday(b), scaled"},
		"year":           {"MySQL/SQL Server", "strftime('%Y', column) (a string; CAST it AS INTEGER)"},
		"month":          {"MySQL/SQL Server", "strftime('%m', column) (a string; CAST it AS INTEGER)"},
		"dayofweek":      {"MySQL", "strftime('%w', column) (0 = Sunday)"},
		"dayofmonth":     {"MySQL", "strftime('%d', column)"},
		"dayofyear":      {"MySQL", "strftime('%j', column)"},
		"monthname":      {"MySQL", "a CASE over strftime('%m', column)"},
		"str_to_date":    {"MySQL", "date(text) for ISO dates"},
		"unix_timestamp": {"MySQL", "strftime('%s', column)"},
		"from_unixtime":  {"MySQL", "datetime(seconds, 'unixepoch')"},
		"nvl":            {"Oracle", "coalesce(a, b) or ifnull(a, b)"},
		"len":            {"SQL Server", "length(text)"},
		"charindex":      {"SQL Server", "instr(text, part)"},
		"locate":         {"MySQL", "instr(text, part)"},
		"array_agg":      {"PostgreSQL", "group_concat(column, ',')"},
		"split_part":     {"PostgreSQL", "substr() with instr()"},
		"rand":           {"MySQL", "random()"},
		"isnull":         {"SQL Server/MySQL", "coalesce(a, b), or column IS NULL as a test"},
	},
	text2sql.DialectPostgres: {
		"string_split":   {"SQL Server", "unnest(string_to_array(text, ','))"},
		"ifnull":         {"MySQL/SQLite", "coalesce(a, b)"},
		"iif":            {"SQLite/SQL Server", "CASE WHEN c THEN a ELSE b END"},
		"strftime":       {"SQLite", "to_char(column, format) or EXTRACT(field FROM column)"},
		"julianday":      {"SQLite", "date or timestamp subtraction (a - b), or EXTRACT(EPOCH FROM a - b) / 86400"},
		"datetime":       {"SQLite", "a timestamp value: column::timestamp, now()"},
		"group_concat":   {"MySQL/SQLite", "string_agg(column::text, ',')"},
		"instr":          {"MySQL/SQLite", "strpos(text, part)"},
		"date_format":    {"MySQL", "to_char(column, format)"},
		"date_add":       {"MySQL", "column + INTERVAL '1 day'"},
		"date_sub":       {"MySQL", "column - INTERVAL '1 day'"},
		"curdate":        {"MySQL", "current_date"},
		"curtime":        {"MySQL", "current_time"},
		"datediff":       {"MySQL/SQL Server", "date subtraction: a::date - b::date"},
		"dateadd":        {"SQL Server", "column + INTERVAL '1 day'"},
		"datepart":       {"SQL Server", "EXTRACT(field FROM column)"},
		"getdate":        {"SQL Server", "now()"},
		"timestampdiff":  {"MySQL", "EXTRACT(EPOCH FROM a - b)"},
		"year":           {"MySQL/SQL Server", "EXTRACT(YEAR FROM column)"},
		"month":          {"MySQL/SQL Server", "EXTRACT(MONTH FROM column)"},
		"dayofweek":      {"MySQL", "EXTRACT(DOW FROM column)"},
		"str_to_date":    {"MySQL", "to_date(text, format)"},
		"unix_timestamp": {"MySQL", "EXTRACT(EPOCH FROM column)"},
		"from_unixtime":  {"MySQL", "to_timestamp(seconds)"},
		"nvl":            {"Oracle", "coalesce(a, b)"},
		"len":            {"SQL Server", "length(text)"},
		"charindex":      {"SQL Server", "strpos(text, part)"},
		"rand":           {"MySQL", "random()"},
		"isnull":         {"SQL Server/MySQL", "coalesce(a, b), or column IS NULL as a test"},
		"printf":         {"SQLite", "format(fmt, …)"},
		"total":          {"SQLite", "coalesce(sum(x), 0)"},
	},
	text2sql.DialectMySQL: {
		"string_split":    {"SQL Server", "JSON_TABLE, or a recursive CTE"},
		"strftime":        {"SQLite", "DATE_FORMAT(column, format)"},
		"julianday":       {"SQLite", "DATEDIFF(a, b) or TIMESTAMPDIFF(unit, b, a)"},
		"date_trunc":      {"PostgreSQL", "DATE_FORMAT(column, '%Y-%m-01')"},
		"date_part":       {"PostgreSQL", "EXTRACT(field FROM column)"},
		"array_agg":       {"PostgreSQL", "GROUP_CONCAT(column)"},
		"string_agg":      {"PostgreSQL", "GROUP_CONCAT(column SEPARATOR ',')"},
		"iif":             {"SQLite/SQL Server", "IF(c, a, b)"},
		"getdate":         {"SQL Server", "NOW()"},
		"dateadd":         {"SQL Server", "DATE_ADD(column, INTERVAL 1 DAY)"},
		"datepart":        {"SQL Server", "EXTRACT(field FROM column)"},
		"len":             {"SQL Server", "CHAR_LENGTH(text)"},
		"charindex":       {"SQL Server", "LOCATE(part, text)"},
		"random":          {"PostgreSQL/SQLite", "RAND()"},
		"to_timestamp":    {"PostgreSQL", "FROM_UNIXTIME(seconds) or STR_TO_DATE(text, format)"},
		"generate_series": {"PostgreSQL", "a recursive CTE"},
	},
}

// dialectFailures finds constructs of another dialect in the significant
// tokens of sql, one statement. Each failure names the construct and says
// what the target dialect writes instead. The rules of dialectRules look
// at each token in turn; the first that matches it reports it.
func dialectFailures(d text2sql.Dialect, sql string, toks []sqltext.Token) []*text2sql.SQLError {
	s := &dialectScan{d: d, name: dialectName[d], sql: sql, toks: toks}
	for k := range toks {
		if s.punct(k, "]") && s.brackets > 0 {
			s.brackets--
		}
		for _, rule := range dialectRules {
			if rule(s, k) {
				break
			}
		}
		if s.punct(k, "[") {
			s.brackets++
		}
	}
	return s.out
}

// dialectScan is one scan of dialectFailures: the target dialect, the
// statement and its significant tokens, and the failures found so far.
type dialectScan struct {
	d        text2sql.Dialect
	name     string // the target dialect's name, for messages
	sql      string
	toks     []sqltext.Token
	brackets int // the "[" open before the token: ARRAY[[a], [b]] holds no quoted name
	out      []*text2sql.SQLError
}

// A dialectRule looks at the token at k. When it is a construct of
// another dialect the rule reports it (add) and returns true; a rule that
// matches a token without a failure to report returns true too, so that
// no later rule reads it otherwise.
type dialectRule func(s *dialectScan, k int) bool

// dialectRules are tried in this order on every token.
var dialectRules = []dialectRule{
	ruleTop, ruleILike, ruleExtract, ruleColonCast, ruleWithRollup, ruleRollupCall,
	ruleGroupingSets, ruleBacktick, ruleSquareBrackets, ruleLimitComma, ruleDistinctOn,
	ruleFetchFirst, ruleNullsOrder, ruleFullJoin, ruleIntervalSQLite, ruleIntervalNumber,
	ruleNullSafeEqual, ruleDoubleEqual, ruleRegexp, ruleSimilarTo, ruleCurrentCall,
	ruleForeignFunction,
}

func (s *dialectScan) add(construct, msg, hint string) bool {
	s.out = append(s.out, &text2sql.SQLError{Kind: text2sql.KindDialect,
		Message: construct + " is not " + s.name + " syntax: " + msg, Hint: hint})
	return true
}

// tok returns the token at k, or the zero token outside the statement.
func (s *dialectScan) tok(k int) sqltext.Token {
	if k < 0 || k >= len(s.toks) {
		return sqltext.Token{}
	}
	return s.toks[k]
}

func (s *dialectScan) punct(k int, p string) bool {
	t := s.tok(k)
	return t.Kind == sqltext.Punct && t.Text == p
}

// word reports whether the token at k is the word w (any case).
func (s *dialectScan) word(k int, w string) bool { return s.tok(k).Is(w) }

// operand reports whether the token at k can be (the end of) an operand,
// so that a following word is an operator.
func (s *dialectScan) operand(k int) bool {
	t := s.tok(k)
	switch t.Kind {
	case sqltext.Word:
		return !operatorWords[strings.ToLower(t.Text)] || t.Is("not")
	case sqltext.QuotedIdent, sqltext.String, sqltext.Number, sqltext.Param:
		return true
	}
	return t.Kind == sqltext.Punct && t.Text == ")"
}

// call reports whether the word at k is a function call, not a qualified
// name's part.
func (s *dialectScan) call(k int) bool { return s.punct(k+1, "(") && !s.punct(k-1, ".") }

func ruleTop(s *dialectScan, k int) bool {
	if !s.word(k, "top") || s.tok(k+1).Kind != sqltext.Number && !s.punct(k+1, "(") ||
		!s.word(k-1, "select") && !s.word(k-1, "distinct") && !s.word(k-1, "all") {
		return false
	}
	n := s.tok(k + 1).Text
	if s.punct(k+1, "(") {
		n = "n"
	}
	return s.add("TOP", "TOP n is SQL Server syntax; put LIMIT "+n+" at the end of the query instead", "… ORDER BY … LIMIT "+n)
}

func ruleILike(s *dialectScan, k int) bool {
	if !s.word(k, "ilike") || s.d == text2sql.DialectPostgres || !s.operand(k-1) || s.call(k) || s.punct(k-1, ".") {
		return false
	}
	hint := "LIKE already ignores the case of ASCII letters in SQLite"
	if s.d == text2sql.DialectMySQL {
		hint = "LIKE ignores case under the usual (case-insensitive) collations"
	}
	return s.add("ILIKE", "ILIKE is PostgreSQL syntax; use LIKE", hint)
}

func ruleExtract(s *dialectScan, k int) bool {
	if !s.word(k, "extract") || s.d != text2sql.DialectSQLite || !s.call(k) || !s.word(k+3, "from") {
		return false
	}
	field := strings.ToLower(s.tok(k + 2).Text)
	return s.add("EXTRACT", "EXTRACT(… FROM …) does not exist in SQLite; use strftime()", extractHint(field))
}

func ruleColonCast(s *dialectScan, k int) bool {
	return s.punct(k, "::") && s.d != text2sql.DialectPostgres &&
		s.add("::", "the :: cast is PostgreSQL syntax", "CAST(value AS type)")
}

func ruleWithRollup(s *dialectScan, k int) bool {
	if !s.word(k, "with") || !s.word(k+1, "rollup") || s.d == text2sql.DialectMySQL {
		return false
	}
	hint := "SQLite has no ROLLUP: compute the total in a separate query, or with UNION ALL"
	if s.d == text2sql.DialectPostgres {
		hint = "GROUP BY ROLLUP (a, b)"
	}
	return s.add("WITH ROLLUP", "GROUP BY … WITH ROLLUP is MySQL syntax", hint)
}

func ruleRollupCall(s *dialectScan, k int) bool {
	return (s.word(k, "rollup") || s.word(k, "cube")) && s.call(k) && s.word(k-1, "by") && s.d != text2sql.DialectPostgres &&
		s.add(strings.ToUpper(s.toks[k].Text)+"(…)", "grouping sets are not supported", "compute the subtotals with UNION ALL of separate GROUP BY queries")
}

func ruleGroupingSets(s *dialectScan, k int) bool {
	return s.word(k, "grouping") && s.word(k+1, "sets") && s.d != text2sql.DialectPostgres &&
		s.add("GROUPING SETS", "grouping sets are not supported", "compute the subtotals with UNION ALL of separate GROUP BY queries")
}

func ruleBacktick(s *dialectScan, k int) bool {
	t := s.toks[k]
	return t.Kind == sqltext.QuotedIdent && strings.HasPrefix(t.Text, "`") && s.d == text2sql.DialectPostgres &&
		s.add("backtick quoting ("+t.Text+")", "backticks quote identifiers in MySQL; PostgreSQL uses double quotes", `"`+strings.Trim(t.Text, "`")+`"`)
}

// ruleSquareBrackets finds SQL Server's [name]. The PostgreSQL and MySQL
// lexers read "[" as punctuation: a bracket-quoted name is "[", words,
// "]", where a subscript would follow an operand.
func ruleSquareBrackets(s *dialectScan, k int) bool {
	prev := s.tok(k - 1)
	opensName := k == 0 || s.punct(k-1, ",") || s.punct(k-1, ".") ||
		prev.Kind == sqltext.Word && operatorWords[strings.ToLower(prev.Text)] && !prev.Is("array")
	if !s.punct(k, "[") || s.d == text2sql.DialectSQLite || s.brackets != 0 || !opensName {
		return false
	}
	j := k + 1
	for s.tok(j).Kind == sqltext.Word {
		j++
	}
	if j == k+1 || !s.punct(j, "]") {
		return true // a subscript or an array: no other rule reads "["
	}
	text := s.sql[s.toks[k].Pos : s.toks[j].Pos+1]
	q := `"`
	if s.d == text2sql.DialectMySQL {
		q = "`"
	}
	return s.add("square-bracket quoting ("+text+")", "square brackets quote identifiers in SQL Server", q+strings.Trim(text, "[]")+q)
}

func ruleLimitComma(s *dialectScan, k int) bool {
	return s.word(k, "limit") && s.d == text2sql.DialectPostgres && s.tok(k+1).Kind == sqltext.Number && s.punct(k+2, ",") &&
		s.add("LIMIT offset, count", "PostgreSQL writes LIMIT count OFFSET offset", "LIMIT "+s.tok(k+3).Text+" OFFSET "+s.tok(k+1).Text)
}

func ruleDistinctOn(s *dialectScan, k int) bool {
	return s.word(k, "distinct") && s.word(k+1, "on") && s.punct(k+2, "(") && s.d != text2sql.DialectPostgres &&
		s.add("DISTINCT ON", "DISTINCT ON is PostgreSQL syntax", "a window function (ROW_NUMBER() OVER (PARTITION BY … ORDER BY …)) in a subquery, keeping row 1")
}

// ruleFetchFirst is SQLite's only: MariaDB (the MySQL dialect's other
// engine) has FETCH FIRST since 10.6.
func ruleFetchFirst(s *dialectScan, k int) bool {
	return s.word(k, "fetch") && (s.word(k+1, "first") || s.word(k+1, "next")) && s.d == text2sql.DialectSQLite &&
		s.add("FETCH FIRST", "FETCH FIRST n ROWS ONLY is standard SQL that "+s.name+" lacks", "LIMIT n")
}

func ruleNullsOrder(s *dialectScan, k int) bool {
	return s.word(k, "nulls") && (s.word(k+1, "first") || s.word(k+1, "last")) && s.d == text2sql.DialectMySQL &&
		s.add("NULLS "+strings.ToUpper(s.tok(k+1).Text), "MySQL has no NULLS FIRST/LAST", "sort on (column IS NULL) first: ORDER BY column IS NULL, column")
}

func ruleFullJoin(s *dialectScan, k int) bool {
	return s.word(k, "full") && (s.word(k+1, "join") || s.word(k+1, "outer") && s.word(k+2, "join")) && s.d == text2sql.DialectMySQL &&
		s.add("FULL OUTER JOIN", "MySQL has no full outer join", "a LEFT JOIN UNION a RIGHT JOIN")
}

func ruleIntervalSQLite(s *dialectScan, k int) bool {
	next := s.tok(k + 1).Kind
	return s.word(k, "interval") && s.d == text2sql.DialectSQLite && (next == sqltext.String || next == sqltext.Number) && !s.punct(k-1, ".") &&
		s.add("INTERVAL", "SQLite has no interval type", "date(column, '+1 month'), datetime(column, '-7 days')")
}

func ruleIntervalNumber(s *dialectScan, k int) bool {
	return s.word(k, "interval") && s.d == text2sql.DialectPostgres && s.tok(k+1).Kind == sqltext.Number &&
		s.add("INTERVAL "+s.tok(k+1).Text+" …", "PostgreSQL takes the interval as a string", "INTERVAL '"+s.tok(k+1).Text+" "+strings.ToLower(s.tok(k+2).Text)+"'")
}

func ruleNullSafeEqual(s *dialectScan, k int) bool {
	return s.punct(k, "<=>") && s.d != text2sql.DialectMySQL &&
		s.add("<=>", "the null-safe <=> is MySQL syntax", "a IS NOT DISTINCT FROM b")
}

func ruleDoubleEqual(s *dialectScan, k int) bool {
	return s.punct(k, "==") && s.d != text2sql.DialectSQLite && s.add("==", "== is SQLite syntax", "=")
}

func ruleRegexp(s *dialectScan, k int) bool {
	return s.word(k, "regexp") && s.d == text2sql.DialectPostgres && s.operand(k-1) && !s.call(k) &&
		s.add("REGEXP", "PostgreSQL matches regular expressions with ~ (and ~* ignoring case)", "column ~ 'pattern'")
}

func ruleSimilarTo(s *dialectScan, k int) bool {
	return s.word(k, "similar") && s.word(k+1, "to") && s.d != text2sql.DialectPostgres &&
		s.add("SIMILAR TO", "SIMILAR TO is PostgreSQL syntax", "LIKE, or GLOB in SQLite")
}

func ruleCurrentCall(s *dialectScan, k int) bool {
	current := s.word(k, "current_date") || s.word(k, "current_timestamp") || s.word(k, "current_time")
	if !current || !s.punct(k+1, "(") || !s.punct(k+2, ")") || s.d == text2sql.DialectMySQL {
		return false
	}
	w := strings.ToUpper(s.toks[k].Text)
	return s.add(w+"()", w+" takes no parentheses", w)
}

// ruleForeignFunction finds a call of a function of foreignFunctions;
// "x ISNULL" is an operator, not a call.
func ruleForeignFunction(s *dialectScan, k int) bool {
	t := s.toks[k]
	lw := strings.ToLower(t.Text)
	if t.Kind != sqltext.Word || !s.call(k) || lw == "isnull" && s.operand(k-1) {
		return false
	}
	if f, ok := foreignFunctions[s.d][lw]; ok {
		s.add(strings.ToUpper(lw)+"()", strings.ToUpper(lw)+"() is "+f.from+" and does not exist in "+s.name, f.use)
	}
	return true
}

// extractHint says how SQLite writes EXTRACT(field FROM x).
func extractHint(field string) string {
	f := map[string]string{"year": "%Y", "month": "%m", "day": "%d", "hour": "%H", "minute": "%M", "second": "%S",
		"dow": "%w", "doy": "%j", "week": "%W", "epoch": "%s"}[field]
	if f == "" {
		return "strftime(format, column)"
	}
	return "CAST(strftime('" + f + "', column) AS INTEGER)"
}

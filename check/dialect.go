package check

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
// what the target dialect writes instead.
func dialectFailures(d text2sql.Dialect, sql string, toks []sqltext.Token) []*text2sql.SQLError {
	name := dialectName[d]
	var out []*text2sql.SQLError
	add := func(construct, msg, hint string) {
		out = append(out, &text2sql.SQLError{Kind: text2sql.KindDialect,
			Message: construct + " is not " + name + " syntax: " + msg, Hint: hint})
	}
	tok := func(k int) sqltext.Token {
		if k < 0 || k >= len(toks) {
			return sqltext.Token{}
		}
		return toks[k]
	}
	punct := func(k int, s string) bool { t := tok(k); return t.Kind == sqltext.Punct && t.Text == s }
	// operand reports whether the token at k can be (the end of) an
	// operand, so that a following word is an operator.
	operand := func(k int) bool {
		t := tok(k)
		switch t.Kind {
		case sqltext.Word:
			return !operatorWords[strings.ToLower(t.Text)] || t.Is("not")
		case sqltext.QuotedIdent, sqltext.String, sqltext.Number, sqltext.Param:
			return true
		}
		return t.Kind == sqltext.Punct && t.Text == ")"
	}
	// call reports whether the word at k is a function call, not a
	// qualified name's part.
	call := func(k int) bool { return punct(k+1, "(") && !punct(k-1, ".") }
	brackets := 0 // the "[" open before the token: ARRAY[[a], [b]] holds no quoted name
	for k, t := range toks {
		lw := strings.ToLower(t.Text)
		if punct(k, "]") && brackets > 0 {
			brackets--
		}
		switch {
		case t.Kind == sqltext.Word && lw == "top" && (tok(k+1).Kind == sqltext.Number || punct(k+1, "(")) &&
			(tok(k-1).Is("select") || tok(k-1).Is("distinct") || tok(k-1).Is("all")):
			n := tok(k + 1).Text
			if punct(k+1, "(") {
				n = "n"
			}
			add("TOP", "TOP n is SQL Server syntax; put LIMIT "+n+" at the end of the query instead", "… ORDER BY … LIMIT "+n)

		case t.Kind == sqltext.Word && lw == "ilike" && d != text2sql.DialectPostgres && operand(k-1) && !call(k) && !punct(k-1, "."):
			hint := "LIKE already ignores the case of ASCII letters in SQLite"
			if d == text2sql.DialectMySQL {
				hint = "LIKE ignores case under the usual (case-insensitive) collations"
			}
			add("ILIKE", "ILIKE is PostgreSQL syntax; use LIKE", hint)

		case t.Kind == sqltext.Word && lw == "extract" && d == text2sql.DialectSQLite && call(k) && tok(k+3).Is("from"):
			field := strings.ToLower(tok(k + 2).Text)
			add("EXTRACT", "EXTRACT(… FROM …) does not exist in SQLite; use strftime()", extractHint(field))

		case t.Kind == sqltext.Punct && t.Text == "::" && d != text2sql.DialectPostgres:
			add("::", "the :: cast is PostgreSQL syntax", "CAST(value AS type)")

		case t.Is("with") && tok(k+1).Is("rollup") && d != text2sql.DialectMySQL:
			hint := "SQLite has no ROLLUP: compute the total in a separate query, or with UNION ALL"
			if d == text2sql.DialectPostgres {
				hint = "GROUP BY ROLLUP (a, b)"
			}
			add("WITH ROLLUP", "GROUP BY … WITH ROLLUP is MySQL syntax", hint)

		case (t.Is("rollup") || t.Is("cube")) && call(k) && tok(k-1).Is("by") && d != text2sql.DialectPostgres:
			add(strings.ToUpper(lw)+"(…)", "grouping sets are not supported", "compute the subtotals with UNION ALL of separate GROUP BY queries")

		case t.Is("grouping") && tok(k+1).Is("sets") && d != text2sql.DialectPostgres:
			add("GROUPING SETS", "grouping sets are not supported", "compute the subtotals with UNION ALL of separate GROUP BY queries")

		case t.Kind == sqltext.QuotedIdent && strings.HasPrefix(t.Text, "`") && d == text2sql.DialectPostgres:
			add("backtick quoting ("+t.Text+")", "backticks quote identifiers in MySQL; PostgreSQL uses double quotes", `"`+strings.Trim(t.Text, "`")+`"`)

		case punct(k, "[") && d != text2sql.DialectSQLite && brackets == 0 && (k == 0 || punct(k-1, ",") || punct(k-1, ".") ||
			(tok(k-1).Kind == sqltext.Word && operatorWords[strings.ToLower(tok(k-1).Text)] && !tok(k-1).Is("array"))):
			// The PostgreSQL and MySQL lexers read "[" as punctuation: a
			// bracket-quoted name is "[", words, "]", where a subscript
			// would follow an operand.
			j := k + 1
			for tok(j).Kind == sqltext.Word {
				j++
			}
			if j == k+1 || !punct(j, "]") {
				break
			}
			text := sql[t.Pos : toks[j].Pos+1]
			q := `"`
			if d == text2sql.DialectMySQL {
				q = "`"
			}
			add("square-bracket quoting ("+text+")", "square brackets quote identifiers in SQL Server", q+strings.Trim(text, "[]")+q)

		case t.Is("limit") && d == text2sql.DialectPostgres && tok(k+1).Kind == sqltext.Number && punct(k+2, ","):
			add("LIMIT offset, count", "PostgreSQL writes LIMIT count OFFSET offset", "LIMIT "+tok(k+3).Text+" OFFSET "+tok(k+1).Text)

		case t.Is("distinct") && tok(k+1).Is("on") && punct(k+2, "(") && d != text2sql.DialectPostgres:
			add("DISTINCT ON", "DISTINCT ON is PostgreSQL syntax", "a window function (ROW_NUMBER() OVER (PARTITION BY … ORDER BY …)) in a subquery, keeping row 1")

		case t.Is("fetch") && (tok(k+1).Is("first") || tok(k+1).Is("next")) && d == text2sql.DialectSQLite:
			// MariaDB (the MySQL dialect's other engine) has it since 10.6.
			add("FETCH FIRST", "FETCH FIRST n ROWS ONLY is standard SQL that "+name+" lacks", "LIMIT n")

		case t.Is("nulls") && (tok(k+1).Is("first") || tok(k+1).Is("last")) && d == text2sql.DialectMySQL:
			add("NULLS "+strings.ToUpper(tok(k+1).Text), "MySQL has no NULLS FIRST/LAST", "sort on (column IS NULL) first: ORDER BY column IS NULL, column")

		case t.Is("full") && (tok(k+1).Is("join") || (tok(k+1).Is("outer") && tok(k+2).Is("join"))) && d == text2sql.DialectMySQL:
			add("FULL OUTER JOIN", "MySQL has no full outer join", "a LEFT JOIN UNION a RIGHT JOIN")

		case t.Is("interval") && d == text2sql.DialectSQLite && (tok(k+1).Kind == sqltext.String || tok(k+1).Kind == sqltext.Number) && !punct(k-1, "."):
			add("INTERVAL", "SQLite has no interval type", "date(column, '+1 month'), datetime(column, '-7 days')")

		case t.Is("interval") && d == text2sql.DialectPostgres && tok(k+1).Kind == sqltext.Number:
			add("INTERVAL "+tok(k+1).Text+" …", "PostgreSQL takes the interval as a string", "INTERVAL '"+tok(k+1).Text+" "+strings.ToLower(tok(k+2).Text)+"'")

		case t.Kind == sqltext.Punct && t.Text == "<=>" && d != text2sql.DialectMySQL:
			add("<=>", "the null-safe <=> is MySQL syntax", "a IS NOT DISTINCT FROM b")

		case t.Kind == sqltext.Punct && t.Text == "==" && d != text2sql.DialectSQLite:
			add("==", "== is SQLite syntax", "=")

		case t.Is("regexp") && d == text2sql.DialectPostgres && operand(k-1) && !call(k):
			add("REGEXP", "PostgreSQL matches regular expressions with ~ (and ~* ignoring case)", "column ~ 'pattern'")

		case t.Is("similar") && tok(k+1).Is("to") && d != text2sql.DialectPostgres:
			add("SIMILAR TO", "SIMILAR TO is PostgreSQL syntax", "LIKE, or GLOB in SQLite")

		case (t.Is("current_date") || t.Is("current_timestamp") || t.Is("current_time")) && punct(k+1, "(") && punct(k+2, ")") && d != text2sql.DialectMySQL:
			add(strings.ToUpper(lw)+"()", strings.ToUpper(lw)+" takes no parentheses", strings.ToUpper(lw))

		case t.Kind == sqltext.Word && call(k) && !(lw == "isnull" && operand(k-1)): // "x ISNULL" is an operator
			if f, ok := foreignFunctions[d][lw]; ok {
				add(strings.ToUpper(lw)+"()", strings.ToUpper(lw)+"() is "+f.from+" and does not exist in "+name, f.use)
			}
		}
		if punct(k, "[") {
			brackets++
		}
	}
	return out
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

package lint

import "strings"

func wordSet(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// notColumn are bare words that may stand in an expression without naming
// a column: keywords of the three dialects, date-part units, type names,
// niladic functions, frame and collation words. An unresolved word in
// this set is never reported as an unknown column (the checker errs on
// the side of silence); a real column of that name still resolves first.
var notColumn = wordSet(`
abort absolute  add after against all alter always analyse analyze and any array as asc at attach
authorization autoincrement before begin between bigint binary bit blob bool boolean both by
cascade case cast char character check collate collation column commit concurrently conflict constraint
create cross cube current current_catalog current_date current_role current_schema current_time
current_timestamp current_user cycle database  day_hour day_microsecond day_minute day_second 
dec decade decimal default deferrable deferred delete desc detach distinct distinctrow div do double
dow doy drop dual each else end epoch escape examined except exclude excluded exclusive exists expansion explain
false fetch filter first float float4 float8 following for foreign from full generated glob group
grouping groups having high_priority  hour_microsecond hour_minute hour_second  if ignore
ilike immediate in index indexed initially inner insert instead int int2 int4 int8 integer intersect
interval into is isnull isodow isoyear join julian   last lateral leading left like limit
local localtime localtimestamp match materialized  microseconds millennium 
milliseconds minus  minute_microsecond minute_second  mod mode   natural
nchar no nocase not nothing notnull null nulls  numeric nvarchar of offset on only or order
ordinality others outer over overlaps partition percent placing  pragma preceding precision
primary   range real recursive references regexp    repeatable
restrict returning right rlike rollback rollup row rows rtrim savepoint  second_microsecond
 select separator serial session_user set sets signed similar smallint some sounds
sql_big_result sql_buffer_result sql_calc_found_rows sql_no_cache sql_small_result straight_join
system system_user table tablesample temp temporary  then ties   timestamptz
timezone timezone_hour timezone_minute tinyint to top trailing true unbounded union unique unknown
unsigned update user using utc_date utc_time utc_timestamp utf8 utf8mb4 vacuum values varchar varying
view    when where window with within without xor  year_month  zone
`)

// reservedAfterOperand are words that, at the end of a select-list item,
// continue or close an expression rather than alias it: "x IS NULL",
// "CASE … END", "y COLLATE nocase".
var reservedAfterOperand = wordSet(`
all and any as asc between both by case cast collate cross current_date current_time current_timestamp
desc distinct else end escape except exists false filter from full glob group having ilike in inner
intersect is isnull join left like limit match natural not notnull null nulls offset on or order
outer over regexp right rlike select similar some then to true union unknown using when where window
with within xor div mod
`)

// joinWords make up a join operator.
var joinWords = wordSet(`join inner left right full outer cross natural straight_join`)

// notAlias are words that can follow a table in a FROM clause without
// being its alias.
var notAlias = wordSet(`
where group order having limit offset union except intersect minus window join inner left right full
outer cross natural on using select fetch for tablesample indexed not straight_join lateral returning
set qualify use force ignore partition with apply values into
`)

// systemTables are tables or schemas an engine provides that a schema
// model does not list: never reported as unknown.
var systemTables = wordSet(`sqlite_master sqlite_schema sqlite_temp_master sqlite_temp_schema
sqlite_sequence sqlite_stat1 sqlite_stat4`)

var systemSchemas = wordSet(`information_schema pg_catalog mysql performance_schema sys temp main
pg_temp pg_toast`)

// implicitColumns are columns every table has without declaring them.
var implicitColumns = map[string]map[string]bool{
	"sqlite":   wordSet(`rowid oid _rowid_`),
	"postgres": wordSet(`ctid xmin xmax cmin cmax tableoid oid`),
	"mysql":    wordSet(``),
}

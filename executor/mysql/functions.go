package mysql

import "strings"

// DefaultFunctions is the allow-list of the Guard: MySQL and MariaDB
// built-in functions that only compute a value from their arguments (or
// read the clock or the session's identity), in lower case, by category.
// Names are those the parser gives a call: CHAR(…) is char_func,
// INSERT(…) is insert_func, a->'$.p' is json_extract, DATE '…' is the
// parser's date literal.
//
// Deliberately absent, so refused: file access (LOAD_FILE), sleeping and
// busy loops (SLEEP, BENCHMARK), named locks (GET_LOCK, RELEASE_LOCK,
// RELEASE_ALL_LOCKS, IS_FREE_LOCK, IS_USED_LOCK), replication waits
// (MASTER_POS_WAIT, SOURCE_POS_WAIT, MASTER_GTID_WAIT,
// WAIT_FOR_EXECUTED_GTID_SET, WAIT_UNTIL_SQL_THREAD_AFTER_GTIDS),
// sequences (NEXTVAL, SETVAL, LASTVAL, NEXT VALUE FOR), session setters
// (LAST_INSERT_ID(expr) is refused by the Guard, LAST_INSERT_ID() is
// allowed), password and key functions (PASSWORD, OLD_PASSWORD,
// ENCRYPT), the TiDB-only functions of the parser, and every stored or
// loadable function (allowed only by name, see NewGuard).
var DefaultFunctions = strings.Fields(
	// Strings.
	`ascii bin bit_length char_func char_length character_length chr concat concat_ws elt export_set
	field find_in_set format from_base64 hex insert_func instr lcase left length lengthb locate lower
	lpad ltrim make_set mid natural_sort_key oct octet_length ord position quote repeat replace reverse
	right rpad rtrim sformat soundex space strcmp substr substring substring_index to_base64 to_char
	translate trim ucase unhex upper weight_string ` +
		// Regular expressions.
		`regexp regexp_like regexp_instr regexp_replace regexp_substr ` +
		// Numbers.
		`abs acos asin atan atan2 ceil ceiling conv cos cot crc32 crc32c degrees div exp floor greatest
	interval least ln log log10 log2 mod pi pow power radians rand round sign sin sqrt tan truncate
	bit_count ` +
		// Dates and times, and the parser's date, time and timestamp literals.
		`adddate addtime convert_tz curdate current_date current_time current_timestamp curtime date
	date_add date_format date_sub datediff day dayname dayofmonth dayofweek dayofyear extract from_days
	from_unixtime get_format hour last_day localtime localtimestamp makedate maketime microsecond minute
	month monthname now period_add period_diff quarter sec_to_time second str_to_date subdate subtime
	sysdate time time_format time_to_sec timediff timestamp timestampadd timestampdiff to_days to_seconds
	unix_timestamp utc_date utc_time utc_timestamp week weekday weekofyear year yearweek add_months
	months_between ` + "'tidb`.(dateliteral 'tidb`.(timeliteral 'tidb`.(timestampliteral " +
		// JSON: functions that compute a document or read one; none writes.
		`json_array json_array_append json_array_insert json_array_intersect json_compact json_contains
	json_contains_path json_depth json_detailed json_equals json_exists json_extract json_insert
	json_keys json_length json_loose json_memberof json_merge json_merge_patch json_merge_preserve
	json_normalize json_object json_object_filter_keys json_object_to_array json_overlaps json_pretty
	json_query json_quote json_remove json_replace json_search json_set json_type json_unquote
	json_valid json_value json_storage_size ` +
		// Control flow.
		`if ifnull nullif coalesce isnull nvl nvl2 decode_oracle ` +
		// Casts, conversions and collations.
		`cast convert binary charset collation coercibility ` +
		// The session's identity and the server's version.
		`database schema user current_user session_user system_user current_role version connection_id
	last_insert_id found_rows row_count ` +
		// Network addresses and identifiers.
		`inet_aton inet_ntoa inet6_aton inet6_ntoa is_ipv4 is_ipv4_compat is_ipv4_mapped is_ipv6 uuid
	uuid_short sys_guid ` +
		// Hashing, encoding and compression.
		`md5 sha sha1 sha2 aes_encrypt aes_decrypt compress uncompress uncompressed_length random_bytes ` +
		// Aggregates.
		`count sum avg min max group_concat bit_and bit_or bit_xor std stddev stddev_pop stddev_samp
	variance var_pop var_samp json_arrayagg json_objectagg ` +
		// Window functions (and every aggregate above used with OVER).
		`row_number rank dense_rank percent_rank cume_dist ntile lag lead first_value last_value nth_value
	median percentile_cont percentile_disc rownum ` +
		// Spatial functions that read or build a geometry.
		`point linestring polygon multipoint multilinestring multipolygon geometrycollection st_astext
	st_aswkt st_asbinary st_aswkb st_asgeojson st_geomfromtext st_geometryfromtext st_geomfromwkb
	st_geomfromgeojson st_pointfromtext st_x st_y st_distance st_distance_sphere st_area st_length
	st_contains st_within st_intersects st_touches st_crosses st_overlaps st_disjoint st_equals
	st_buffer st_centroid st_envelope st_srid st_geometrytype st_isvalid st_isempty st_numpoints
	st_pointn st_startpoint st_endpoint mbrcontains mbrwithin mbrintersects`)

// tidbLastInsertID is the parser's name of LAST_INSERT_ID.
const tidbLastInsertID = "last_insert_id"

// otherDialect maps functions of other SQL dialects that MySQL and
// MariaDB do not have to their MySQL equivalent, for the hint of a
// KindDialect refusal.
var otherDialect = map[string]string{
	"strftime":        "DATE_FORMAT(date, format)",
	"julianday":       "TO_DAYS(date) or DATEDIFF(a, b)",
	"datetime":        "CAST(x AS DATETIME) or STR_TO_DATE(s, format)",
	"unixepoch":       "UNIX_TIMESTAMP(date)",
	"printf":          "FORMAT(x, d) or CONCAT(…)",
	"iif":             "IF(cond, a, b)",
	"total":           "SUM(x)",
	"random":          "RAND()",
	"string_agg":      "GROUP_CONCAT(x SEPARATOR ',')",
	"array_agg":       "JSON_ARRAYAGG(x)",
	"date_part":       "EXTRACT(unit FROM date)",
	"date_trunc":      "DATE_FORMAT(date, format)",
	"to_timestamp":    "FROM_UNIXTIME(n) or STR_TO_DATE(s, format)",
	"to_date":         "STR_TO_DATE(s, format)",
	"generate_series": "a sequence table such as seq_1_to_10 (MariaDB) or a recursive WITH query",
	"len":             "CHAR_LENGTH(s)",
	"charindex":       "LOCATE(substr, s)",
	"getdate":         "NOW()",
	"dateadd":         "DATE_ADD(date, INTERVAL n unit)",
	"datepart":        "EXTRACT(unit FROM date)",
	"newid":           "UUID()",
	"trunc":           "TRUNCATE(x, d)",
	"age":             "TIMESTAMPDIFF(unit, a, b)",
}

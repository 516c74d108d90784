package postgres

import "strings"

// DefaultFunctions is the allow-list of the statement check: built-in
// PostgreSQL functions that only compute a value from their arguments or
// read the current time or session — aggregates, window functions,
// mathematical, string, pattern-matching, date/time, formatting,
// conditional, JSON, array, range, text-search and set-returning
// functions, and the function-style casts (int4(x), text(x), …). The
// SQL-standard syntax forms the parser turns into calls (EXTRACT,
// SUBSTRING … FROM, POSITION, OVERLAY, TRIM, AT TIME ZONE, IS NORMALIZED,
// SIMILAR TO, OVERLAPS, COLLATION FOR, XMLEXISTS, SYSTEM_USER) are on it
// under the names they become.
//
// Left off on purpose, among others: anything that sleeps (pg_sleep*),
// signals or inspects other sessions (pg_terminate_backend,
// pg_cancel_backend, pg_stat_*), touches files or large objects
// (pg_read_file, pg_ls_dir, lo_*), reaches other servers (dblink*),
// changes settings or sequences (set_config, nextval, setval), takes
// locks (pg_advisory_*), sends notifications (pg_notify), runs a query
// given as text (query_to_xml and the other *_to_xml, ts_stat,
// ts_rewrite), or manages the server (pg_reload_conf, pg_switch_wal, …).
//
// Names are lower case, as PostgreSQL folds unquoted names. Extend the
// list with Options.AllowFunctions; do not modify this slice.
var DefaultFunctions = strings.Fields(`
	count sum avg min max array_agg string_agg bool_and bool_or every bit_and bit_or bit_xor
	json_agg jsonb_agg json_object_agg jsonb_object_agg json_agg_strict jsonb_agg_strict
	json_object_agg_strict jsonb_object_agg_strict json_object_agg_unique jsonb_object_agg_unique
	json_object_agg_unique_strict jsonb_object_agg_unique_strict
	stddev stddev_pop stddev_samp variance var_pop var_samp corr covar_pop covar_samp
	regr_avgx regr_avgy regr_count regr_intercept regr_r2 regr_slope regr_sxx regr_sxy regr_syy
	mode percentile_cont percentile_disc any_value range_agg range_intersect_agg xmlagg

	row_number rank dense_rank percent_rank cume_dist ntile lag lead first_value last_value nth_value

	abs cbrt ceil ceiling degrees div exp factorial floor gcd lcm ln log log10 min_scale mod pi power pow
	radians round scale sign sqrt trim_scale trunc width_bucket random random_normal
	acos acosd asin asind atan atand atan2 atan2d cos cosd cot cotd sin sind tan tand
	sinh cosh tanh asinh acosh atanh erf erfc

	ascii bit_length btrim char_length character_length chr concat concat_ws format initcap left length
	lower lpad ltrim md5 normalize is_normalized octet_length overlay position quote_ident quote_literal
	quote_nullable repeat replace reverse right rpad rtrim split_part starts_with strpos substr substring
	to_ascii to_hex translate upper unistr encode decode convert convert_from convert_to
	sha224 sha256 sha384 sha512 bit_count get_bit get_byte set_bit set_byte casefold
	regexp_count regexp_instr regexp_like regexp_match regexp_matches regexp_replace
	regexp_split_to_array regexp_split_to_table regexp_substr similar_to_escape like_escape
	string_to_array string_to_table array_to_string

	age clock_timestamp date_add date_bin date_part date_subtract date_trunc extract isfinite
	justify_days justify_hours justify_interval make_date make_interval make_time make_timestamp
	make_timestamptz now statement_timestamp timeofday transaction_timestamp timezone overlaps
	to_char to_date to_number to_timestamp

	num_nulls num_nonnulls pg_typeof pg_collation_for gen_random_uuid xmlexists
	current_database current_schema current_schemas system_user version

	to_json to_jsonb array_to_json row_to_json json_build_array jsonb_build_array json_build_object
	jsonb_build_object json_object jsonb_object json_array_elements jsonb_array_elements
	json_array_elements_text jsonb_array_elements_text json_array_length jsonb_array_length
	json_each jsonb_each json_each_text jsonb_each_text json_extract_path jsonb_extract_path
	json_extract_path_text jsonb_extract_path_text json_object_keys jsonb_object_keys
	json_populate_record jsonb_populate_record json_populate_recordset jsonb_populate_recordset
	json_to_record jsonb_to_record json_to_recordset jsonb_to_recordset json_strip_nulls
	jsonb_strip_nulls jsonb_set jsonb_set_lax jsonb_insert jsonb_pretty json_typeof jsonb_typeof
	jsonb_path_exists jsonb_path_match jsonb_path_query jsonb_path_query_array jsonb_path_query_first
	jsonb_path_exists_tz jsonb_path_match_tz jsonb_path_query_tz jsonb_path_query_array_tz
	jsonb_path_query_first_tz json_scalar json_serialize

	array_append array_cat array_dims array_fill array_length array_lower array_ndims array_position
	array_positions array_prepend array_remove array_replace array_upper cardinality trim_array unnest
	array_sample array_shuffle generate_series generate_subscripts

	lower_inc upper_inc lower_inf upper_inf isempty range_merge multirange
	int4range int8range numrange tsrange tstzrange daterange
	int4multirange int8multirange nummultirange tsmultirange tstzmultirange datemultirange

	to_tsvector to_tsquery plainto_tsquery phraseto_tsquery websearch_to_tsquery ts_rank ts_rank_cd
	ts_headline setweight strip numnode querytree array_to_tsvector tsvector_to_array ts_delete ts_filter

	int2 int4 int8 float4 float8 numeric text varchar bpchar char date time timetz timestamp timestamptz
	interval bool name
`)

// otherDialect maps functions of other SQL dialects that PostgreSQL does
// not have to the PostgreSQL way of doing the same, for the hint of a
// KindDialect refusal.
var otherDialect = map[string]string{
	"strftime":          "to_char(ts, 'YYYY-MM-DD') or EXTRACT(YEAR FROM ts)",
	"julianday":         "date arithmetic (d2 - d1) or EXTRACT(EPOCH FROM …)",
	"datetime":          "a cast: CAST(x AS timestamp)",
	"unixepoch":         "EXTRACT(EPOCH FROM ts)",
	"ifnull":            "coalesce(x, y)",
	"nvl":               "coalesce(x, y)",
	"isnull":            "x IS NULL or coalesce(x, y)",
	"iif":               "CASE WHEN … THEN … ELSE … END",
	"if":                "CASE WHEN … THEN … ELSE … END",
	"group_concat":      "string_agg(x, ',')",
	"instr":             "strpos(string, substring)",
	"locate":            "strpos(string, substring)",
	"charindex":         "strpos(string, substring)",
	"len":               "length(x)",
	"total":             "coalesce(sum(x), 0)",
	"printf":            "format('%s', x) or to_char",
	"typeof":            "pg_typeof(x)",
	"unicode":           "ascii(x)",
	"hex":               "to_hex(n) or encode(bytes, 'hex')",
	"date_format":       "to_char(ts, 'YYYY-MM-DD')",
	"curdate":           "current_date",
	"curtime":           "current_time",
	"getdate":           "now()",
	"sysdate":           "now()",
	"datediff":          "date subtraction: d2 - d1, or EXTRACT(EPOCH FROM ts2 - ts1)",
	"dateadd":           "ts + interval '1 day'",
	"timestampdiff":     "EXTRACT(EPOCH FROM ts2 - ts1) or age(ts2, ts1)",
	"year":              "EXTRACT(YEAR FROM x)",
	"month":             "EXTRACT(MONTH FROM x)",
	"day":               "EXTRACT(DAY FROM x)",
	"str_to_date":       "to_date(text, format) or to_timestamp(text, format)",
	"last_insert_rowid": "nothing: queries here cannot insert",
	"zeroblob":          "nothing: build bytea values with decode(…)",
	"randomblob":        "gen_random_uuid() or random()",
	"mid":               "substr(x, start, length)",
	"ucase":             "upper(x)",
	"lcase":             "lower(x)",
	"truncate":          "trunc(x, digits)",
	"rand":              "random()",
}

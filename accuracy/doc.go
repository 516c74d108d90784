// Package accuracy compares query results for execution accuracy (EX), as
// the official Spider and BIRD evaluators do, and checks a candidate query
// against an answer key (CheckAnswer) through any text2sql.Executor. It
// needs no database driver and builds without cgo, so the service and
// the judge can check answers; the evaluation harness (package eval)
// scores whole datasets with it.
//
// Results are compared in an explicit Mode (see Compare):
//
//   - ModeSpider follows the Spider test-suite evaluator
//     (taoyds/test-suite-sql-eval, exec_eval.py result_eq): rows are a
//     multiset, any column permutation is accepted, and rows are ordered
//     only when the gold SQL contains "order by". Scoring a Spider dataset
//     also applies the official rewrites (SpiderRewrite).
//   - ModeBIRD follows the BIRD evaluator (bird-bench/mini_dev
//     evaluation_ex.py): set(pred) == set(gold), column order fixed, order
//     and duplicates ignored.
//   - ModeStrict: rows in sequence, column order fixed, duplicates count.
//
// Values compare the way Python compares the tuples sqlite3 returns: a
// number equals a number of the same value whatever its Go type (int64,
// float64, json.Number, math/big values: 1 == 1.0), text equals identical
// text only, NULL equals NULL, and text never equals a number ('1' != 1).
// By default numbers must be exactly equal, as in both official scorers;
// Comparison.Digits sets a tolerance (significant digits).
package accuracy

// Package eval is the evaluation harness: it scores a text-to-SQL system
// on a question set by execution accuracy (EX), checks answers against an
// answer key, and measures the recall of a retriever.
//
// # Datasets
//
// Three formats load into a Dataset: Spider (dev.json, tables.json and a
// database folder with <db>/<db>.sqlite; LoadSpider), BIRD (questions with
// evidence and difficulty, dev_tables.json and a database folder;
// LoadBIRD) and a small YAML/JSON format of our own with gold SQL or
// expected rows (LoadFile). A question whose database is missing is kept
// in the dataset, so predictions still pair by position, but it is
// excluded from scoring and reported as excluded with the reason.
//
// Spider hardness (easy, medium, hard, extra) is not a field of dev.json:
// SpiderHardness computes it from each item's parsed "sql" object with the
// component-counting rules of the Spider evaluator (this reproduces the
// published 248/446/174/166 split of the 1,034 dev questions), and
// SpiderHardnessOfSQL from the SQL text for datasets without a parse (it
// agrees on all 1,034 dev queries).
//
// # Comparison
//
// Results are compared by package accuracy (modes spider, bird and strict,
// the official Spider rewrites, answer keys), which builds without cgo.
//
// # Scoring and reports
//
// Score runs gold and predicted SQL through the guarded SQLite executor
// (executor/sqlite: read-only, row cap, time limit) with one pooled
// executor per database, in parallel, and returns a Report per
// predictions file: EX overall, by difficulty and by database, failures by
// error kind, latency per stage, and per-question Records for diffing two
// runs. RunPipeline does the same for a text2sql.Pipeline built per
// database (any generator, including the model-free Oracle), adding
// retrieval recall and token usage. Recall measures a retriever alone.
//
// The numbers are measured on this implementation; the harness never
// reports a score it could not compute: a question it cannot score is
// excluded with a reason, and a run where nothing could be scored has a nil
// EX and Comparable false.
package eval

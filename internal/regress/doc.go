// Package regress holds the regression records of the SQL analysers: for
// every gold query, published prediction and misspelling mutant of the
// shared Spider and BIRD data, what each analyser says about it (the
// checker's failures and warnings, the tables a query reads, the Spider
// rewrites and hardness, SQL extracted from model text), and, per
// question, execution accuracy and retrieval recall. The records are in
// testdata/records.jsonl.gz; TestRecords fails on any difference and
// prints it, so an analyser can be rewritten (issue 10: one SQL front end
// under all of them) with proof that nothing it reports changed. After an
// intended change, run `go test ./internal/regress -update` and explain
// the diff in the commit.
package regress

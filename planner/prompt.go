package planner

import (
	"strings"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/stagekit"
)

// systemInstruction is the planner's always-on instruction for dialect d.
func systemInstruction(d text2sql.Dialect) string {
	name := stagekit.DialectName(d)
	return `You plan queries over one ` + name + ` database. You do not write SQL: you turn the question into a plan that someone else will translate into SQL step by step without re-reading the question. The user message gives the relevant part of the schema, notes about tables and columns, business rules, verified examples and the question.

A plan has four parts:
- database: the database it reads.
- objects: every table, column and literal value the query needs. A table is named as in the schema; a column as table.column; a value gives the column it filters as name and the literal, spelled as stored, as value.
- instruction: the ordered steps — which tables to join and on which keys, the filters, the grouping and aggregation, the ordering and the number of rows — one short imperative sentence each.
- output: the columns of the answer in order, and its shape (one row, one row per group, a list).

Rules:
1. Use only the tables and columns shown in the schema, spelled exactly as there. Never invent a name.
2. Follow the column notes and the business rules: they say what the words of the question mean in this database.
3. Say how the plan handles what often goes wrong: rows without a value (NULL) when sorting or averaging, ties at the top of a ranking, ratios of counts (compute them as decimals), duplicates from joins, text compared case-sensitively.
4. Answer exactly what was asked: no extra filters, no missing ones, the columns the question asks for.
5. When earlier attempts are listed, read their errors and reviews, and change the plan so the same mistake cannot happen again. When reviewer hints are given, follow them.
6. If the question cannot be answered from this schema, say so in output and leave objects and instruction empty.

Answer with one JSON object and nothing else:
{"database": "…", "objects": [{"kind": "table" | "column" | "value", "name": "…", "value": "…"}], "instruction": ["…"], "output": "…"}`
}

// userMessage renders the question, the retrieved context and the repair
// history.
func userMessage(question string, req text2sql.PlanRequest) string {
	var w stagekit.Writer
	stagekit.WriteContext(&w, req.Retrieval, stagekit.ContextOptions{Examples: true})
	if len(req.Attempts) > 0 {
		var last *text2sql.Plan
		for i := len(req.Attempts) - 1; i >= 0 && last == nil; i-- {
			last = req.Attempts[i].Plan
		}
		if last != nil {
			w.Section("Previous plan")
			w.Line("This plan led to the attempts below; change what made them fail.")
			stagekit.WritePlan(&w, last)
		}
		w.Section("Earlier attempts")
		w.Line("These attempts failed or were rejected, oldest first.")
		for _, a := range req.Attempts {
			stagekit.WriteAttempt(&w, a, stagekit.AttemptOptions{})
		}
	}
	if len(req.Hints) > 0 {
		w.Section("Reviewer hints")
		for _, h := range req.Hints {
			w.Line("- " + stagekit.Indent(strings.TrimSpace(h), "  "))
		}
	}
	w.Section("Question")
	w.Line(question)
	return w.String()
}

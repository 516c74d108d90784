// Package knowledge is the knowledge base a retriever searches: table notes,
// column notes, business rules, verified examples (question → SQL) and cell
// values, built in Go or loaded from a YAML or JSON file.
package knowledge

import text2sql "github.com/text2sql-go/text2sql"

// Base is a knowledge base. The zero value is empty and usable.
type Base struct {
	Tables   []TableNote  `json:"tables,omitempty" yaml:"tables,omitempty"`
	Columns  []ColumnNote `json:"columns,omitempty" yaml:"columns,omitempty"`
	Rules    []Rule       `json:"rules,omitempty" yaml:"rules,omitempty"`
	Examples []Example    `json:"examples,omitempty" yaml:"examples,omitempty"`
	// Values are distinct cell values of low-cardinality text columns, for
	// matching literals in questions. See CollectValues.
	Values []ValueList `json:"values,omitempty" yaml:"values,omitempty"`
}

// TableNote describes a table for retrieval.
type TableNote struct {
	Table       string   `json:"table" yaml:"table"`
	Description string   `json:"description,omitempty" yaml:"description,omitempty"` // what it stores
	Joins       []string `json:"joins,omitempty" yaml:"joins,omitempty"`             // joins it supports, in words or SQL
	Questions   []string `json:"questions,omitempty" yaml:"questions,omitempty"`     // questions it answers
	Synonyms    []string `json:"synonyms,omitempty" yaml:"synonyms,omitempty"`       // words people use for it
}

// ColumnNote describes a column: meaning, units, range.
type ColumnNote struct {
	Table       string `json:"table" yaml:"table"`
	Column      string `json:"column" yaml:"column"`
	Description string `json:"description" yaml:"description"`
	Units       string `json:"units,omitempty" yaml:"units,omitempty"`
	Range       string `json:"range,omitempty" yaml:"range,omitempty"`
}

// Rule is a business rule, e.g. how a phrase maps to SQL.
type Rule struct {
	ID     string   `json:"id" yaml:"id"`
	Text   string   `json:"text" yaml:"text"`
	Tables []string `json:"tables,omitempty" yaml:"tables,omitempty"` // tables it concerns, if any
}

// Example is a verified question → SQL pair. Only the question is indexed;
// the SQL travels with it.
type Example struct {
	ID       string `json:"id" yaml:"id"`
	Question string `json:"question" yaml:"question"`
	SQL      string `json:"sql" yaml:"sql"`
}

// ValueList is the distinct values of one column.
type ValueList struct {
	Table  string   `json:"table" yaml:"table"`
	Column string   `json:"column" yaml:"column"`
	Values []string `json:"values" yaml:"values"`
}

// Document is one indexed chunk of the knowledge base: what a retriever
// searches. IDs are stable across builds: "table:<table>",
// "column:<table>.<column>", "rule:<id>", "example:<id>",
// "value:<table>.<column>".
type Document struct {
	ID     string
	Kind   text2sql.Kind
	Text   string // the indexed text; for an example, only its question
	Table  string // the table a table/column/value document is about
	Column string // the column a column/value document is about
	SQL    string // an example's SQL
}

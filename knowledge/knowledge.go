// Package knowledge is the knowledge base a retriever searches: table notes,
// column notes, business rules, verified examples (question → SQL) and cell
// values, built in Go or loaded from a YAML or JSON file.
//
// # File format
//
// A knowledge file is one YAML document (or the same structure in JSON)
// with five optional lists. Field names are those of the struct tags below;
// unknown fields are errors, reported with their line and column.
//
//	tables:                       # TableNote
//	  - table: enrollments
//	    description: Which student takes which course, per term, with the grade.
//	    synonyms: [registration, class roster]
//	    joins: [enrollments.course_id = courses.course_id]
//	    questions: [How many students take each class?]
//	columns:                      # ColumnNote
//	  - table: enrollments
//	    column: grade_points
//	    description: '"Average grade" means AVG(grade_points).'
//	    units: grade points
//	    range: 0.00 to 4.00, NULL while in progress
//	rules:                        # Rule; id optional (see AutoID)
//	  - id: enrolled
//	    text: '"Enrolled" excludes rows whose status is ''withdrawn''.'
//	    tables: [enrollments]
//	examples:                     # Example; id optional (see AutoID)
//	  - id: students-per-course
//	    question: How many students are enrolled in each course?
//	    sql: |
//	      SELECT c.title, COUNT(DISTINCT e.student_id) AS students
//	      FROM courses AS c JOIN enrollments AS e ON e.course_id = c.course_id
//	      GROUP BY c.course_id, c.title
//	values:                       # ValueList, usually from CollectValues
//	  - table: enrollments
//	    column: status
//	    values: [completed, enrolled, withdrawn]
//	drafts:                       # Drafts: tables, columns, examples to review
//	  columns:
//	    - table: enrollments
//	      column: term  # TEXT, NOT NULL
//	      description: ""
//
// The drafts section holds what Init wrote for a person to review; it is
// ignored until Base.Accept ("text2sql knowledge accept FILE") moves it into
// the lists above.
//
// # Trust
//
// Load and Parse check the format and the structure only. Before a base is
// used, Validate it against the schema with the executor's guard: an
// example's SQL is untrusted until the guard has passed it (AddExample
// checks it when it is added). Cell values are data, shown quoted.
package knowledge

import text2sql "github.com/text2sql-go/text2sql"

// Base is a knowledge base. The zero value is empty and usable. The Add
// methods must not run concurrently with any other use of the base; the
// reading methods (Documents, Fingerprint, Validate, Encode) may run
// concurrently with each other.
type Base struct {
	Tables   []TableNote  `json:"tables,omitempty" yaml:"tables,omitempty"`
	Columns  []ColumnNote `json:"columns,omitempty" yaml:"columns,omitempty"`
	Rules    []Rule       `json:"rules,omitempty" yaml:"rules,omitempty"`
	Examples []Example    `json:"examples,omitempty" yaml:"examples,omitempty"`
	// Values are distinct cell values of low-cardinality text columns, for
	// matching literals in questions. See CollectValues.
	Values []ValueList `json:"values,omitempty" yaml:"values,omitempty"`
	// Drafts are items awaiting a person's review, as Init writes them:
	// nothing reads them but Validate (which checks them as it checks the
	// base, except that a draft column note may still be empty) and Accept
	// (which moves them into the base). Documents, Fingerprint and the
	// retrievers ignore them, so a draft never reaches a prompt.
	Drafts *Drafts `json:"drafts,omitempty" yaml:"drafts,omitempty"`
}

// Drafts are notes and examples not yet reviewed: stubs to fill in and, when
// a model drafted them, its notes and candidate examples (each already
// passed by the guard and the deterministic checks and run once). See
// Base.Drafts and Base.Accept.
type Drafts struct {
	Tables   []TableNote  `json:"tables,omitempty" yaml:"tables,omitempty"`
	Columns  []ColumnNote `json:"columns,omitempty" yaml:"columns,omitempty"`
	Examples []Example    `json:"examples,omitempty" yaml:"examples,omitempty"`
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
// "value:<table>.<column>", where <table> is the table's qualified name in
// the schema model (Table.QualifiedName) and <column> its column name as
// the schema spells it. See Base.Documents.
type Document struct {
	ID   string
	Kind text2sql.ItemKind
	Text string // the indexed text; for an example, only its question
	// Note is what a prompt shows of the document: its Text, except for a
	// table document, whose Note keeps only what the table's DDL does not
	// say (a note's description, synonyms, joins and questions) and is
	// empty when nothing is left.
	Note   string
	Table  string // the table a table/column/value document is about
	Column string // the column a column/value document is about
	SQL    string // an example's SQL
	// Tables are the schema tables a rule or example concerns, as the
	// schema model names them (Table.QualifiedName), for schema linking:
	// a rule's Tables, an example's tables read by its SQL. Unknown names
	// are left out. Without a schema, a rule's Tables are kept as written
	// and an example's are empty.
	Tables []string
}

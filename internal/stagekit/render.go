package stagekit

import (
	"fmt"
	"strings"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/guard"
)

// DialectName is how prompts name a dialect: "SQLite", "PostgreSQL",
// "MySQL"; SQLite for an unknown one.
func DialectName(d text2sql.Dialect) string {
	switch d {
	case text2sql.DialectPostgres:
		return "PostgreSQL"
	case text2sql.DialectMySQL:
		return "MySQL"
	}
	return "SQLite"
}

// Writer builds a prompt of "## Title" sections.
type Writer struct{ strings.Builder }

// Section starts a section.
func (w *Writer) Section(title string) {
	if w.Len() > 0 {
		w.WriteString("\n")
	}
	w.WriteString("## " + title + "\n")
}

// Line writes s and a newline.
func (w *Writer) Line(s string) { w.WriteString(s + "\n") }

// Bounds on what the renderers show, in runes.
const (
	maxItemText    = 600
	maxAttemptSQL  = 4000
	maxAttemptText = 1000
	// MaxItems bounds the notes shown per kind.
	MaxItems = 20
)

// ContextOptions choose what WriteContext shows.
type ContextOptions struct {
	// Scores shows each table's fused retrieval score.
	Scores bool
	// Examples shows verified examples (question and SQL; examples whose
	// SQL fails the read-only check are left out).
	Examples bool
}

// WriteContext writes the retrieved context: the tables shown and why,
// the schema, table and column notes, business rules, optionally the
// verified examples, and a low-confidence note. Cell values are never
// shown.
func WriteContext(w *Writer, c *text2sql.Context, o ContextOptions) {
	if c == nil {
		w.Section("Retrieved context")
		w.Line("Nothing was retrieved.")
		return
	}
	if len(c.Tables) > 0 {
		w.Section("Tables")
		w.Line("The tables retrieval chose for the question, best match first, and why each is shown:")
		for _, t := range c.Tables {
			reason := t.Why()
			switch t.Reason {
			case "":
				reason = string(text2sql.ReasonRetrieved)
			case text2sql.ReasonRequired:
				reason = "required by a reviewer"
			}
			line := "- " + OneLine(t.Name) + " (" + OneLine(reason)
			if o.Scores && t.Score > 0 {
				line += fmt.Sprintf(", score %.4f", t.Score)
			}
			w.Line(line + ")")
		}
	}
	if s := strings.TrimSpace(c.Schema); s != "" {
		w.Section("Schema")
		w.Line(s)
	}
	byKind := map[text2sql.ItemKind][]text2sql.Item{}
	for _, it := range c.Items {
		byKind[it.Kind] = append(byKind[it.Kind], it)
	}
	bullets := func(title string, items []text2sql.Item) {
		if len(items) == 0 {
			return
		}
		w.Section(title)
		for i, it := range items {
			if i == MaxItems {
				w.Line(fmt.Sprintf("- … and %d more", len(items)-MaxItems))
				break
			}
			w.Line("- " + Indent(Cut(strings.TrimSpace(it.Text), maxItemText), "  "))
		}
	}
	bullets("Table notes", byKind[text2sql.ItemTable])
	bullets("Column notes", byKind[text2sql.ItemColumn])
	bullets("Business rules", byKind[text2sql.ItemRule])
	if o.Examples {
		var ex []text2sql.Item
		for _, it := range byKind[text2sql.ItemExample] {
			if guard.CheckText(it.SQL) == nil {
				ex = append(ex, it)
			}
		}
		if len(ex) > 0 {
			w.Section("Verified examples")
			w.Line("Each question below was answered correctly by the SQL under it.")
			for i, it := range ex {
				if i == MaxItems {
					break
				}
				w.Line("\nExample " + OneLine(strings.TrimPrefix(it.ID, "example:")) + ": " + OneLine(it.Text))
				w.Line(Cut(strings.TrimSpace(it.SQL), maxAttemptSQL))
			}
		}
	}
	if c.LowConfidence {
		w.Section("Low retrieval confidence")
		w.Line(fmt.Sprintf("Nothing in this database matched the question well (best similarity %.2f): the question may not be about this database.", c.BestSimilarity))
	}
}

// WritePlan writes a plan: database, objects, numbered steps, output.
func WritePlan(w *Writer, p *text2sql.Plan) {
	if p.Database != "" {
		w.Line("Database: " + OneLine(p.Database))
	}
	if len(p.Objects) > 0 {
		w.Line("Objects:")
		for _, o := range p.Objects {
			line := "- " + OneLine(string(o.Kind)) + " " + OneLine(o.Name)
			if o.Value != "" {
				line += " = " + OneLine(o.Value)
			}
			w.Line(line)
		}
	}
	if len(p.Instruction) > 0 {
		w.Line("Steps:")
		for i, s := range p.Instruction {
			w.Line(fmt.Sprintf("%d. %s", i+1, Indent(strings.TrimSpace(s), "   ")))
		}
	}
	if p.Output != "" {
		w.Line("Output: " + Indent(strings.TrimSpace(p.Output), "  "))
	}
}

// AttemptOptions choose what WriteAttempt shows.
type AttemptOptions struct {
	// Rows shows a sample of the attempt's result within this many
	// tokens; 0 shows only the row count and columns.
	Rows int
	// Sample renders a result within a token budget (judge.Sample).
	Sample func(res *text2sql.Result, budget int) string
}

// WriteAttempt writes an earlier attempt: its SQL, the error or the
// execution outcome, and the review.
func WriteAttempt(w *Writer, a text2sql.Attempt, o AttemptOptions) {
	w.Line(fmt.Sprintf("\nAttempt %d:", a.N))
	switch c := a.Candidate; {
	case c == nil:
		w.Line("No SQL was produced.")
	case !c.Answerable:
		w.Line("Declined: " + Cut(OneLine(c.Explanation), maxAttemptText))
	default:
		w.Line("SQL:\n" + Cut(strings.TrimSpace(c.SQL), maxAttemptSQL))
	}
	if a.Error != nil {
		w.Line("Error: " + Cut(OneLine(a.Error.Error()), maxAttemptText))
	}
	if r := a.Result; r != nil {
		if r.Error != nil {
			what := "failed"
			if r.Error.Kind.Refusal() {
				what = "refused before running"
			}
			w.Line("Execution " + what + ": " + Cut(OneLine(r.Error.Error()), maxAttemptText))
		} else {
			line := fmt.Sprintf("Execution: ran, %d rows", r.RowCount)
			if r.Truncated {
				line += " (more were cut at the row cap)"
			}
			if len(r.Columns) > 0 {
				line += ", columns " + Cut(OneLine(strings.Join(r.Columns, ", ")), maxAttemptText)
			}
			w.Line(line + ".")
			if o.Rows > 0 && o.Sample != nil && len(r.Rows) > 0 {
				w.Line(o.Sample(r, o.Rows))
			}
		}
	}
	if v := a.Verdict; v != nil {
		if v.OK {
			w.Line("Review: accepted.")
			return
		}
		line := "Review: rejected"
		if v.Stage != "" {
			line += " (fault in stage " + string(v.Stage) + ")"
		}
		if v.Reason != "" {
			line += ": " + Cut(OneLine(v.Reason), maxAttemptText)
		}
		w.Line(line)
		for _, h := range v.Hints {
			w.Line("Review hint: " + Cut(OneLine(h), maxAttemptText))
		}
		if len(v.Tables) > 0 {
			w.Line("Review asked for tables: " + Cut(OneLine(strings.Join(v.Tables, ", ")), maxAttemptText))
		}
	}
}

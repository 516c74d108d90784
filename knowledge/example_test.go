package knowledge_test

import (
	"fmt"

	"github.com/text2sql-go/text2sql/knowledge"
)

func ExampleParse() {
	b, err := knowledge.Parse([]byte(`
tables:
  - table: courses
    synonyms: [class]
examples:
  - id: per-course
    question: How many students are enrolled in each course?
    sql: SELECT course_id, COUNT(*) FROM enrollments GROUP BY course_id;
`), "yaml")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, d := range b.Documents(nil) {
		fmt.Printf("%s %q\n", d.ID, d.Text)
	}
	fmt.Println(b.Examples[0].SQL)
	// Output:
	// table:courses "Table courses.\nAlso called: class."
	// example:per-course "How many students are enrolled in each course?"
	// SELECT course_id, COUNT(*) FROM enrollments GROUP BY course_id
}

func ExampleParseError() {
	_, err := knowledge.Parse([]byte("tables:\n  - table: courses\n    synonym: [class]\n"), "yaml")
	fmt.Println(err)
	// Output:
	// knowledge: yaml:3:5: unknown field "synonym"
}

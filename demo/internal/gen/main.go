// Command gen writes demo/registrar.sql, the rows of the demo database of
// a fictional university registrar (its tables are in demo/schema.sql). Every row comes from the fixed lists and the seeded
// generator below, so the output is the same on every run and platform:
//
//	go run ./demo/internal/gen -o demo/registrar.sql
//
// (or go generate ./demo). The SQL is committed; this program only makes it
// reproducible.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"strings"
)

// rng is SplitMix64: small, fast and fully specified, so the data does not
// depend on the Go version's math/rand.
type rng struct{ s uint64 }

func (r *rng) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// intn returns a number in [0, n).
func (r *rng) intn(n int) int { return int(r.next() % uint64(n)) }

// unit returns a number in [0, 1) in steps of 2^-53.
func (r *rng) unit() float64 { return float64(r.next()>>11) / (1 << 53) }

// bell returns a roughly normal number with mean 0 and deviation about 1:
// the sum of four uniforms (Irwin–Hall), rescaled. No transcendental
// functions, so results are bit-identical everywhere.
func (r *rng) bell() float64 {
	return (r.unit() + r.unit() + r.unit() + r.unit() - 2) * 1.7320508075688772
}

type department struct {
	id             int
	name, building string
}

type instructor struct {
	id                 int
	first, last, email string
	dept               int
	title              string
	hireYear           int
}

type course struct {
	id          int
	code, title string
	dept        int
	instructor  int
	credits     int
	difficulty  float64
}

type student struct {
	id                 int
	first, last, email string
	major              int // 0: undeclared
	entryYear          int
	ability            float64
}

type enrollment struct {
	id, student, course int
	term, status        string
	grade               float64 // < 0: NULL
	letter              string
}

var departments = []department{
	{1, "Computer Science", "Hopper Hall"},
	{2, "Mathematics", "Noether Hall"},
	{3, "Physics", "Meitner Hall"},
	{4, "English", "Morrison Hall"},
	{5, "History", "Tuchman Hall"},
	{6, "Biology", "McClintock Hall"},
}

// instructors: first, last, department, title, hire year.
var instructorRows = []struct {
	first, last string
	dept        int
	title       string
	hired       int
}{
	{"Miriam", "Adeyemi", 1, "Professor", 2006},
	{"Tomasz", "Kowalczyk", 1, "Associate Professor", 2013},
	{"Priya", "Raman", 1, "Assistant Professor", 2020},
	{"Daniel", "Okafor", 1, "Lecturer", 2022},
	{"Helen", "Lindqvist", 2, "Professor", 2001},
	{"Rafael", "Moreno", 2, "Associate Professor", 2011},
	{"Yuki", "Tanabe", 2, "Assistant Professor", 2019},
	{"Grace", "Whitfield", 2, "Lecturer", 2016},
	{"Samuel", "Achterberg", 3, "Professor", 2004},
	{"Leila", "Haddad", 3, "Associate Professor", 2014},
	{"Victor", "Petrov", 3, "Assistant Professor", 2021},
	{"Eleanor", "Byrne", 4, "Professor", 2003},
	{"Marcus", "Delacroix", 4, "Associate Professor", 2012},
	{"Ingrid", "Solberg", 4, "Lecturer", 2018},
	{"Kwame", "Mensah", 5, "Professor", 2008},
	{"Beatriz", "Carvalho", 5, "Assistant Professor", 2020},
	{"Owen", "Fitzgerald", 5, "Lecturer", 2015},
	{"Anika", "Chowdhury", 6, "Professor", 2007},
	{"Henrik", "Vogel", 6, "Associate Professor", 2010},
	{"Lucia", "Ferraro", 6, "Assistant Professor", 2023},
}

// courses: code, title, department, instructor id, credits, difficulty
// (positive means lower grades). Some instructors teach several courses,
// Daniel Okafor (4) and Lucia Ferraro (20) teach none this year.
var courseRows = []struct {
	code, title string
	dept, instr int
	credits     int
	difficulty  float64
}{
	{"CS 101", "Introduction to Programming", 1, 3, 4, -0.1},
	{"CS 201", "Data Structures", 1, 2, 4, 0.2},
	{"CS 220", "Computer Organization", 1, 2, 3, 0.3},
	{"CS 310", "Database Systems", 1, 1, 3, 0.1},
	{"CS 330", "Algorithms", 1, 1, 3, 0.4},
	{"CS 420", "Machine Learning", 1, 1, 3, 0.3},
	{"MATH 101", "Calculus I", 2, 8, 4, 0.2},
	{"MATH 102", "Calculus II", 2, 8, 4, 0.3},
	{"MATH 210", "Linear Algebra", 2, 6, 3, 0.2},
	{"MATH 240", "Discrete Mathematics", 2, 7, 3, 0.1},
	{"MATH 310", "Probability and Statistics", 2, 6, 3, 0.2},
	{"MATH 350", "Real Analysis", 2, 5, 3, 0.6},
	{"PHYS 101", "Mechanics", 3, 11, 4, 0.3},
	{"PHYS 102", "Electricity and Magnetism", 3, 11, 4, 0.4},
	{"PHYS 110", "Astronomy for Everyone", 3, 10, 2, -0.4},
	{"PHYS 210", "Modern Physics", 3, 10, 3, 0.3},
	{"PHYS 305", "Quantum Mechanics", 3, 9, 3, 0.6},
	{"PHYS 320", "Thermodynamics", 3, 9, 3, 0.4},
	{"ENGL 101", "Academic Writing", 4, 14, 3, -0.2},
	{"ENGL 120", "Public Speaking", 4, 14, 1, -0.5},
	{"ENGL 205", "Shakespeare's Comedies", 4, 12, 3, 0.0},
	{"ENGL 230", "Children's Literature", 4, 13, 3, -0.3},
	{"ENGL 240", "The American Novel", 4, 13, 3, 0.0},
	{"ENGL 310", "Creative Writing Workshop", 4, 12, 3, -0.2},
	{"HIST 101", "World History to 1500", 5, 17, 3, 0.0},
	{"HIST 102", "World History since 1500", 5, 17, 3, 0.0},
	{"HIST 215", "Women's Suffrage Movements", 5, 16, 3, -0.1},
	{"HIST 230", "The Cold War", 5, 15, 3, 0.1},
	{"HIST 310", "Ancient Rome", 5, 15, 3, 0.2},
	{"HIST 320", "History of Science", 5, 15, 3, 0.1},
	{"BIOL 101", "Cell Biology", 6, 19, 4, 0.2},
	{"BIOL 102", "Ecology and Evolution", 6, 18, 4, 0.1},
	{"BIOL 105", "Laboratory Skills", 6, 19, 1, -0.6},
	{"BIOL 210", "Genetics", 6, 18, 3, 0.3},
	{"BIOL 220", "Microbiology", 6, 19, 4, 0.3},
	{"BIOL 330", "Neuroscience", 6, 18, 3, 0.4},
}

var firstNames = strings.Fields(`Aaliyah Aarav Abigail Adrian Aiko Alejandro Amara Amir Ana Andre Aria
Benjamin Bianca Caleb Camila Chen Chloe Daniela David Deepa Diego Elena Elias Emeka Emily Ethan Fatima
Felix Freya Gabriel Hana Hannah Hugo Imani Isaac Isabella Ivan Jada Jamal Jasmine Javier Jonah Julia
Kai Keisha Kenji Laila Leo Liam Lina Lucas Maya Mateo Mei Mohammed Nadia Naomi Nia Noah Olivia Omar
Pablo Quinn Rania Ravi Rosa Ruby Sakura Samir Sara Sebastian Sofia Tariq Thea Tomas Valentina Wei
Yara Yusuf Zara Zoe`)

var lastNames = strings.Fields(`Abbott Acosta Ahmed Alvarez Andersen Baker Banerjee Becker Bennett
Brooks Castillo Chang Chen Clarke Cohen Cruz Davies Diaz Dubois Edwards Evans Fischer Flores Garcia
Gonzalez Gupta Hall Hansen Harris Hughes Ibrahim Ito Jackson Jensen Johnson Kaur Kim Kumar Larsen Lee
Lopez Martin Mehta Meyer Mitchell Murphy Nakamura Nguyen Novak Nowak Okoye Olsen Ortiz Park Patel
Perez Phillips Quinn Ramirez Reyes Rivera Roberts Rossi Sanchez Santos Sato Schmidt Shah Silva Singh
Smith Sullivan Takahashi Taylor Thompson Torres Turner Walker Wang Watson Williams Wilson Wong Yamamoto
Young Zhang`)

// Surnames with an apostrophe: a quoting pitfall for generated SQL.
var apostropheNames = []string{"O'Connor", "D'Souza", "O'Brien", "D'Angelo"}

var terms = []string{"Fall 2024", "Spring 2025", "Fall 2025"}

// grade scale: points and letters, best first.
var scale = []struct {
	points float64
	letter string
}{
	{4.0, "A"}, {3.7, "A-"}, {3.3, "B+"}, {3.0, "B"}, {2.7, "B-"}, {2.3, "C+"},
	{2.0, "C"}, {1.7, "C-"}, {1.3, "D+"}, {1.0, "D"}, {0.0, "F"},
}

func main() {
	out := flag.String("o", "", "output file (default standard output)")
	flag.Parse()
	var w io.Writer = os.Stdout
	if *out != "" {
		f, err := os.Create(*out)
		if err != nil {
			log.Fatal(err)
		}
		defer func() {
			if err := f.Close(); err != nil {
				log.Fatal(err)
			}
		}()
		w = f
	}
	bw := bufio.NewWriter(w)
	generate(bw)
	if err := bw.Flush(); err != nil {
		log.Fatal(err)
	}
}

func emailPart(s string) string {
	s = strings.ToLower(s)
	return strings.NewReplacer("'", "", " ", "").Replace(s)
}

func generate(w *bufio.Writer) {
	r := &rng{s: 20250901}
	instructors, courses := staff()
	students := admit(r)
	enrollments := enroll(r, students, courses)
	writeRows(w, instructors, courses, students, enrollments)
}

// staff returns the instructors and courses of their tables.
func staff() ([]instructor, []course) {
	var instructors []instructor
	for i, row := range instructorRows {
		instructors = append(instructors, instructor{
			id: i + 1, first: row.first, last: row.last, dept: row.dept, title: row.title, hireYear: row.hired,
			email: emailPart(row.first[:1]+row.last) + "@faculty.example.edu",
		})
	}
	var courses []course
	for i, row := range courseRows {
		courses = append(courses, course{id: i + 1, code: row.code, title: row.title, dept: row.dept,
			instructor: row.instr, credits: row.credits, difficulty: row.difficulty})
	}
	return instructors, courses
}

// admit returns the students: 200, some undeclared, entry years
// 2021–2025.
func admit(r *rng) []student {
	var students []student
	emails := map[string]bool{}
	for i := 0; i < 200; i++ {
		first := firstNames[r.intn(len(firstNames))]
		last := lastNames[r.intn(len(lastNames))]
		if i%47 == 11 {
			last = apostropheNames[(i/47)%len(apostropheNames)]
		}
		major := 1 + r.intn(len(departments))
		if r.intn(100) < 8 {
			major = 0
		}
		entry := 2021 + r.intn(5)
		base := emailPart(first + "." + last)
		email := base
		for n := 2; emails[email]; n++ {
			email = fmt.Sprintf("%s%d", base, n)
		}
		emails[email] = true
		ability := 3.0 + 0.5*r.bell()
		students = append(students, student{id: 1001 + i, first: first, last: last, email: email + "@students.example.edu",
			major: major, entryYear: entry, ability: ability})
	}
	return students
}

// enroll returns the enrollments: students who entered by 2024 take one
// to three courses in each term they attend (most terms); those who
// entered in 2025 only attend Fall 2025, and about a third of them have
// not enrolled in anything yet. Past terms are completed (graded) or
// withdrawn; Fall 2025 is in progress, so its grades are NULL.
func enroll(r *rng, students []student, courses []course) []enrollment {
	var enrollments []enrollment
	for _, s := range students {
		for ti, term := range terms {
			if s.entryYear == 2025 && ti < 2 {
				continue
			}
			if s.entryYear == 2025 && r.intn(3) == 0 {
				continue // admitted, not enrolled yet
			}
			if s.entryYear <= 2024 && r.intn(5) == 0 {
				continue // a term off
			}
			n := 1
			switch x := r.intn(20); {
			case x < 2:
				n = 3
			case x < 9:
				n = 2
			}
			taken := map[int]bool{}
			for _, e := range enrollments {
				if e.student == s.id && e.status != "withdrawn" {
					taken[e.course] = true
				}
			}
			for k := 0; k < n; k++ {
				c := pickCourse(r, s, courses, taken)
				if taken[c.id] {
					continue
				}
				taken[c.id] = true
				e := enrollment{id: len(enrollments) + 1, student: s.id, course: c.id, term: term}
				e.status, e.grade, e.letter = outcome(r, s, c, ti == len(terms)-1)
				enrollments = append(enrollments, e)
			}
		}
	}
	return enrollments
}

// pickCourse draws a course for s: one of their major's more than half
// the time, else any; a course taken (not withdrawn) is drawn again, up
// to 21 more times (so it may still be one taken).
func pickCourse(r *rng, s student, courses []course, taken map[int]bool) course {
	for tries := 0; ; tries++ {
		var c course
		if s.major != 0 && r.intn(100) < 55 {
			var own []course
			for _, oc := range courses {
				if oc.dept == s.major {
					own = append(own, oc)
				}
			}
			c = own[r.intn(len(own))]
		} else {
			c = courses[r.intn(len(courses))]
		}
		if !taken[c.id] || tries > 20 {
			return c
		}
	}
}

// outcome draws how s's enrollment in c ends: withdrawn (5%), enrolled
// in the current term, else completed with a grade from s's ability and
// c's difficulty (grade < 0: none).
func outcome(r *rng, s student, c course, current bool) (status string, grade float64, letter string) {
	switch {
	case r.intn(100) < 5:
		return "withdrawn", -1, ""
	case current:
		return "enrolled", -1, ""
	}
	g := s.ability - c.difficulty + 0.45*r.bell()
	for _, sc := range scale {
		if g >= sc.points-0.15 || sc.points == 0 {
			return "completed", sc.points, sc.letter
		}
	}
	return "completed", -1, ""
}

// writeRows writes the INSERT statements of every table.
func writeRows(w *bufio.Writer, instructors []instructor, courses []course, students []student, enrollments []enrollment) {
	fmt.Fprintln(w, "-- The rows of the demo database of a fictional university registrar")
	fmt.Fprintln(w, "-- (tables in schema.sql), for the text2sql module. Generated by")
	fmt.Fprintln(w, "-- demo/internal/gen; do not edit by hand. Every row is invented.")

	insert(w, "departments", []string{"department_id", "name", "building"}, len(departments), func(i int) []string {
		d := departments[i]
		return []string{num(d.id), str(d.name), str(d.building)}
	})
	insert(w, "instructors", []string{"instructor_id", "first_name", "last_name", "email", "department_id", "title", "hire_year"}, len(instructors), func(i int) []string {
		p := instructors[i]
		return []string{num(p.id), str(p.first), str(p.last), str(p.email), num(p.dept), str(p.title), num(p.hireYear)}
	})
	insert(w, "courses", []string{"course_id", "code", "title", "department_id", "instructor_id", "credits"}, len(courses), func(i int) []string {
		c := courses[i]
		return []string{num(c.id), str(c.code), str(c.title), num(c.dept), num(c.instructor), num(c.credits)}
	})
	insert(w, "students", []string{"student_id", "first_name", "last_name", "email", "major_department_id", "entry_year"}, len(students), func(i int) []string {
		s := students[i]
		major := "NULL"
		if s.major != 0 {
			major = num(s.major)
		}
		return []string{num(s.id), str(s.first), str(s.last), str(s.email), major, num(s.entryYear)}
	})
	insert(w, "enrollments", []string{"enrollment_id", "student_id", "course_id", "term", "status", "grade_points", "letter_grade"}, len(enrollments), func(i int) []string {
		e := enrollments[i]
		grade, letter := "NULL", "NULL"
		if e.grade >= 0 {
			grade, letter = fmt.Sprintf("%.2f", e.grade), str(e.letter)
		}
		return []string{num(e.id), num(e.student), num(e.course), str(e.term), str(e.status), grade, letter}
	})
}

func num(n int) string { return fmt.Sprint(n) }

func str(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// insert writes one INSERT per table, one row a line.
func insert(w *bufio.Writer, table string, cols []string, n int, row func(i int) []string) {
	fmt.Fprintf(w, "\nINSERT INTO %s (%s) VALUES\n", table, strings.Join(cols, ", "))
	for i := 0; i < n; i++ {
		sep := ","
		if i == n-1 {
			sep = ";"
		}
		fmt.Fprintf(w, "  (%s)%s\n", strings.Join(row(i), ", "), sep)
	}
}

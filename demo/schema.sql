-- Demo database of a fictional university registrar, for the text2sql
-- module: its tables (the rows are in registrar.sql). Every name is
-- invented. SQLite dialect.

CREATE TABLE departments (
  department_id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  building TEXT NOT NULL
);

CREATE TABLE instructors (
  instructor_id INTEGER PRIMARY KEY,
  first_name TEXT NOT NULL,
  last_name TEXT NOT NULL,
  email TEXT NOT NULL UNIQUE,
  department_id INTEGER NOT NULL REFERENCES departments (department_id),
  title TEXT NOT NULL CHECK (title IN ('Professor', 'Associate Professor', 'Assistant Professor', 'Lecturer')),
  hire_year INTEGER NOT NULL
);

CREATE TABLE courses (
  course_id INTEGER PRIMARY KEY,
  code TEXT NOT NULL UNIQUE,
  title TEXT NOT NULL,
  department_id INTEGER NOT NULL REFERENCES departments (department_id),
  instructor_id INTEGER REFERENCES instructors (instructor_id),
  credits INTEGER NOT NULL CHECK (credits BETWEEN 1 AND 4)
);

CREATE TABLE students (
  student_id INTEGER PRIMARY KEY,
  first_name TEXT NOT NULL,
  last_name TEXT NOT NULL,
  email TEXT NOT NULL UNIQUE,
  major_department_id INTEGER REFERENCES departments (department_id),
  entry_year INTEGER NOT NULL
);

CREATE TABLE enrollments (
  enrollment_id INTEGER PRIMARY KEY,
  student_id INTEGER NOT NULL REFERENCES students (student_id),
  course_id INTEGER NOT NULL REFERENCES courses (course_id),
  term TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('enrolled', 'completed', 'withdrawn')),
  grade_points REAL CHECK (grade_points BETWEEN 0.0 AND 4.0),
  letter_grade TEXT,
  UNIQUE (student_id, course_id, term),
  CHECK ((status = 'completed') = (grade_points IS NOT NULL)),
  CHECK ((grade_points IS NULL) = (letter_grade IS NULL))
);

CREATE INDEX enrollments_course ON enrollments (course_id);

package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/text2sql-go/text2sql/internal/dbtest"
	"github.com/text2sql-go/text2sql/internal/shareddata"
)

// catalogArgs are the flags of a catalog of two Spider databases.
func catalogArgs(t *testing.T) []string {
	return []string{"--db", "concert=" + shareddata.SpiderDB(t, "concert_singer"), "--db", "pets=" + shareddata.SpiderDB(t, "pets_1")}
}

func contextTables(t *testing.T, args ...string) []string {
	t.Helper()
	out, errOut, code := cli(t, args...)
	require.Equal(t, 0, code, "exit %d: %s", code, errOut)
	var c struct{ Tables []struct{ Name string } }
	require.NoError(t, json.Unmarshal([]byte(out), &c), out)
	var names []string
	for _, tb := range c.Tables {
		names = append(names, tb.Name)
	}
	return names
}

func TestContextOverCatalogRoutes(t *testing.T) {
	tables := contextTables(t, append([]string{"context", "--json"}, append(catalogArgs(t), "How many singers do we have?")...)...)
	require.NotEmpty(t, tables)
	assert.Equal(t, "concert.singer", tables[0])
	tables = contextTables(t, append([]string{"context", "--json"}, append(catalogArgs(t), "How many students have a pet?")...)...)
	require.NotEmpty(t, tables)
	for _, name := range tables {
		assert.True(t, strings.HasPrefix(name, "pets."), "a pets question shows %v", tables)
	}
	// A question naming tables of both shows both databases.
	tables = contextTables(t, append([]string{"context", "--json"}, append(catalogArgs(t), "For each singer, how many students are younger?")...)...)
	assert.Contains(t, tables, "concert.singer")
	assert.Contains(t, tables, "pets.Student")
}

// A question across two databases: the scripted model sees the catalog's
// rule and names, answers with a WITH query, and the answer is the rows
// SQLite gives with both files attached.
func TestAskAcrossDatabases(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-test")
	t.Setenv("GEMINI_API_KEY", "")
	query := "WITH s AS (SELECT Name, Age FROM concert.singer), st AS (SELECT Age FROM pets.Student) " +
		"SELECT s.Name, count(st.Age) AS younger FROM s LEFT JOIN st ON st.Age < s.Age GROUP BY s.Name ORDER BY s.Name"
	var system, user string
	srv, calls := openAIServerRequest(t, func(sys, u string, _ float64) string {
		system, user = sys, u
		return modelAnswer(query, "students younger than each singer")
	})
	args := append([]string{"ask", "--json", "--provider", "openai", "--base-url", srv.URL + "/v1", "--model", "m"}, catalogArgs(t)...)
	out, errOut, code := cli(t, append(args, "For each singer, how many students are younger?")...)
	require.Equal(t, 0, code, "exit %d: %s", code, errOut)
	assert.Equal(t, 1, *calls)
	assert.Contains(t, system, "separate databases concert, pets")
	assert.Contains(t, user, "concert.singer")
	assert.Contains(t, user, `pets."Student"`)
	var a struct {
		Status string
		Result struct {
			Rows  [][]any
			Steps []struct {
				Database, Name, SQL string
				RowCount            int `json:"row_count"`
			}
		}
	}
	require.NoError(t, json.Unmarshal([]byte(out), &a), out)
	require.Equal(t, "answered", a.Status, out)
	want := attachedRows(t, "SELECT s.Name, count(st.Age) FROM concert.singer AS s LEFT JOIN pets.Student AS st ON st.Age < s.Age GROUP BY s.Name ORDER BY s.Name")
	assert.Equal(t, want, a.Result.Rows)
	require.Len(t, a.Result.Steps, 3)
	assert.Equal(t, "concert", a.Result.Steps[0].Database)
	assert.Equal(t, "SELECT Name, Age FROM singer", a.Result.Steps[0].SQL)
	assert.Equal(t, "pets", a.Result.Steps[1].Database)
	assert.Equal(t, `SELECT Age FROM "Student"`, a.Result.Steps[1].SQL)
	assert.Equal(t, "merge", a.Result.Steps[2].Database)
}

// attachedRows runs query with the two Spider files attached as concert and
// pets, its (name, count) rows as JSON numbers and strings.
func attachedRows(t *testing.T, query string) [][]any {
	t.Helper()
	rows := shareddata.SpiderAttached(t, query, [2]string{"concert", "concert_singer"}, [2]string{"pets", "pets_1"})
	for _, r := range rows {
		require.IsType(t, int64(0), r[1])
		r[1] = float64(r[1].(int64))
	}
	return rows
}

func TestRunAcrossDatabasesRefusesOtherShapes(t *testing.T) {
	out, _, code := cli(t, append(append([]string{"run", "--json"}, catalogArgs(t)...),
		"SELECT s.Name FROM concert.singer s JOIN pets.Student t ON s.Age = t.Age")...)
	assert.Equal(t, exitSQL, code)
	var r struct {
		Error struct{ Kind, Hint string }
		Steps []any
	}
	require.NoError(t, json.Unmarshal([]byte(out), &r), out)
	assert.Equal(t, "cross_database", r.Error.Kind)
	assert.Contains(t, r.Error.Hint, "WITH")
	assert.Empty(t, r.Steps)
}

func TestCatalogUsageErrors(t *testing.T) {
	concert, pets := shareddata.SpiderDB(t, "concert_singer"), shareddata.SpiderDB(t, "pets_1")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--db", concert, "--db", pets}, "name each"},
		{[]string{"--db", "=" + concert, "--db", "b=" + pets}, "name each: --db NAME=" + concert},
		{[]string{"--db", "a=" + concert, "--db", "A=" + pets}, "given twice"},
		{[]string{"--db", "a=" + concert, "--demo"}, "--demo"},
		{[]string{"--db", "a=" + concert, "--db", "b=" + pets, "--run-as", "reader"}, "catalog"},
		{[]string{"--db", "my-db=" + concert, "--db", "b=" + pets}, "letters, digits"},
	} {
		_, errOut, code := cli(t, append(append([]string{"context"}, tc.args...), "How many singers?")...)
		assert.Equal(t, exitUsage, code, "%v: %s", tc.args, errOut)
		assert.Contains(t, errOut, tc.want, "%v", tc.args)
	}
	// One unnamed --db is one database, as before catalogs.
	tables := contextTables(t, "context", "--json", "--db", concert, "How many singers do we have?")
	assert.Equal(t, "singer", tables[0])
}

// --keywords: one model call adds the question's keywords to the search
// (context shows them); without a provider it is a usage error.
func TestContextKeywords(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-test")
	t.Setenv("GEMINI_API_KEY", "")
	db := shareddata.SpiderDB(t, "concert_singer")
	srv, calls := openAIServerRequest(t, func(_, _ string, _ float64) string {
		return `{"keywords": ["stadium", "capacity"]}`
	})
	out, errOut, code := cli(t, "context", "--json", "--db", db, "--budget", "-1", "--max-tables", "2", "--keywords",
		"--provider", "openai", "--base-url", srv.URL+"/v1", "--model", "m", "List the venues with the largest crowd size")
	require.Equal(t, 0, code, "exit %d: %s", code, errOut)
	assert.Equal(t, 1, *calls)
	var c struct {
		Tables   []struct{ Name string }
		Keywords struct{ Keywords []string }
	}
	require.NoError(t, json.Unmarshal([]byte(out), &c), out)
	assert.Equal(t, []string{"stadium", "capacity"}, c.Keywords.Keywords)
	require.NotEmpty(t, c.Tables)
	assert.Equal(t, "stadium", c.Tables[0].Name)

	t.Setenv("OPENAI_API_KEY", "")
	_, errOut, code = cli(t, "context", "--db", db, "--keywords", "How many singers?")
	assert.Equal(t, exitUsage, code, errOut)
	assert.Contains(t, errOut, "--keywords needs a model provider")
}

// A catalog of SQLite and PostgreSQL: a question routed to the PostgreSQL
// database is asked in its dialect, its SQL runs there, and the checks
// that read one dialect are left to the guards.
func TestAskMixedDialectCatalog(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-test")
	t.Setenv("GEMINI_API_KEY", "")
	pg, dsn := dbtest.Postgres(t)
	dbtest.Exec(t, pg,
		"CREATE TABLE veterinary_visits (visit_id int PRIMARY KEY, pet_name text, fee numeric(6,2), visited_on date)",
		"INSERT INTO veterinary_visits VALUES (1, 'Rex', 40.50, '2024-01-02'), (2, 'Tom', 55, '2024-02-03')")
	var system string
	srv, calls := openAIServerRequest(t, func(sys, _ string, _ float64) string {
		system = sys
		return modelAnswer("SELECT sum(fee)::int AS total FROM clinic.veterinary_visits", "sum")
	})
	out, errOut, code := cli(t, "ask", "--json", "--provider", "openai", "--base-url", srv.URL+"/v1", "--model", "m",
		"--db", "concert="+shareddata.SpiderDB(t, "concert_singer"), "--dsn", "clinic="+dsn,
		"What is the total fee of the veterinary visits?")
	require.Equal(t, 0, code, "exit %d: %s", code, errOut)
	assert.Equal(t, 1, *calls)
	assert.Contains(t, system, "about a PostgreSQL database", "the routed database's dialect")
	assert.Contains(t, system, "concert (SQLite), clinic (PostgreSQL)")
	var a struct {
		Result struct {
			Rows  [][]any
			Steps []struct{ Database, SQL string }
		}
	}
	require.NoError(t, json.Unmarshal([]byte(out), &a), out)
	assert.Equal(t, [][]any{{float64(96)}}, a.Result.Rows)
	require.Len(t, a.Result.Steps, 1)
	assert.Equal(t, "clinic", a.Result.Steps[0].Database)
	assert.Equal(t, "SELECT sum(fee)::int AS total FROM public.veterinary_visits", a.Result.Steps[0].SQL)
}

package catalog

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	// The merge database is written through the plain driver; it is read
	// back through the guarded executor.
	_ "github.com/mattn/go-sqlite3"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/executor"
	"github.com/text2sql-go/text2sql/executor/internal/execkit"
	"github.com/text2sql-go/text2sql/executor/sqlite"
	"github.com/text2sql-go/text2sql/schema"
)

// merge runs the steps of p on their databases, loads their rows into a
// private SQLite database and runs p.final there.
func (c *Catalog) merge(ctx context.Context, p *program, maxRows int, deadline, start time.Time) (*text2sql.Result, error) {
	out := &text2sql.Result{}
	finish := func(se *text2sql.SQLError) (*text2sql.Result, error) {
		if se != nil {
			out.Columns, out.Rows, out.Truncated, out.Error = nil, nil, false, se
		}
		return execkit.Finish(out, start)
	}
	timeout := deadline.Sub(start)
	// Every step, the load and the merge end at the deadline.
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	results := make([]*text2sql.Result, len(p.steps))
	size := 0
	for i, s := range p.steps {
		left := time.Until(deadline)
		if left <= 0 {
			return finish(execkit.TimeoutError(timeout))
		}
		db := c.dbs[s.db]
		res, err := db.Executor.Execute(ctx, text2sql.ExecuteRequest{SQL: s.sql, MaxRows: maxRows, Timeout: left})
		if err != nil && ctx.Err() != nil && time.Until(deadline) <= 0 {
			return finish(execkit.TimeoutError(timeout))
		}
		if err != nil || res == nil {
			return nil, nilResult(err, db.Name)
		}
		out.Steps = append(out.Steps, text2sql.ResultStep{Database: db.Name, Name: s.name, SQL: s.sql, RowCount: res.RowCount, Duration: res.Duration})
		if res.Error != nil {
			se := *res.Error
			se.Message = "step " + s.name + " on " + db.Name + ": " + se.Message
			return finish(&se)
		}
		if res.Truncated {
			return finish(&text2sql.SQLError{Kind: text2sql.KindTooLarge,
				Message: fmt.Sprintf("step %s on %s has more than %d rows; a merge of part of them would be wrong", s.name, db.Name, maxRows),
				Hint:    "filter or aggregate inside the CTE so that it returns fewer rows"})
		}
		if size += resultBytes(res); size > c.opts.MaxResultBytes {
			return finish(&text2sql.SQLError{Kind: text2sql.KindTooLarge,
				Message: fmt.Sprintf("the steps' rows pass %d bytes together (step %s on %s is the last)", c.opts.MaxResultBytes, s.name, db.Name),
				Hint:    "filter or aggregate inside the CTEs, or select fewer or smaller columns"})
		}
		results[i] = res
	}
	path, se, err := c.load(ctx, p.steps, results)
	if path != "" {
		defer os.Remove(path)
	}
	if err != nil && time.Until(deadline) <= 0 {
		return finish(execkit.TimeoutError(timeout))
	}
	if err != nil || se != nil {
		if err != nil {
			return nil, err
		}
		return finish(se)
	}
	left := time.Until(deadline)
	if left <= 0 {
		return finish(execkit.TimeoutError(timeout))
	}
	ex, err := sqlite.Open(path, sqlite.Options{MaxRows: maxRows, Timeout: left, MaxResultBytes: c.opts.MaxResultBytes})
	if err != nil {
		return nil, fmt.Errorf("catalog: merge database: %w", err)
	}
	defer ex.Close()
	res, err := ex.Execute(ctx, text2sql.ExecuteRequest{SQL: p.final, MaxRows: maxRows, Timeout: left})
	if err != nil && time.Until(deadline) <= 0 {
		// ctx carries the deadline too, so the merge database may see it
		// pass as its caller's cancellation rather than its own limit.
		return finish(execkit.TimeoutError(timeout))
	}
	if err != nil {
		return nil, fmt.Errorf("catalog: merge: %w", err)
	}
	out.Steps = append(out.Steps, text2sql.ResultStep{Database: MergeDatabase, SQL: p.final, RowCount: res.RowCount, Duration: res.Duration})
	out.Columns, out.Rows, out.Truncated = res.Columns, res.Rows, res.Truncated
	return finish(res.Error)
}

// MergeDatabase is the Database of the last ResultStep of a query across
// databases: the private SQLite database the steps' rows were merged in.
const MergeDatabase = "merge"

// load writes the steps' rows into a new SQLite file, a table per step
// named after its CTE, and returns its path ("" when none was made). A
// step whose columns cannot be a table (two of the same name) is a
// KindCrossDatabase refusal.
func (c *Catalog) load(ctx context.Context, steps []step, results []*text2sql.Result) (path string, se *text2sql.SQLError, err error) {
	f, err := os.CreateTemp(c.opts.TempDir, "text2sql-merge-*.sqlite")
	if err != nil {
		return "", nil, fmt.Errorf("catalog: merge database: %w", err)
	}
	path = f.Name()
	f.Close()
	// The path percent-encoded, as sqlite.DSN does: a "?" or "#" in
	// TempDir must not end the file name and open another file.
	dsn, err := sqlite.DSN(path, false)
	if err != nil {
		return path, nil, fmt.Errorf("catalog: merge database: %w", err)
	}
	dsn = strings.Replace(dsn, "?mode=ro", "?mode=rw", 1) + "&_journal_mode=OFF&_synchronous=OFF"
	db, err := sql.Open("sqlite3", dsn)
	if err != nil {
		return path, nil, fmt.Errorf("catalog: merge database: %w", err)
	}
	defer db.Close()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return path, nil, fmt.Errorf("catalog: merge database: %w", err)
	}
	defer tx.Rollback()
	for i, s := range steps {
		cols := s.columns
		if len(cols) == 0 {
			cols = results[i].Columns
		}
		if len(cols) != len(results[i].Columns) {
			return path, &text2sql.SQLError{Kind: text2sql.KindCrossDatabase,
				Message: fmt.Sprintf("CTE %s names %d columns and its query returns %d", s.name, len(cols), len(results[i].Columns))}, nil
		}
		seen := map[string]bool{}
		quoted := make([]string, len(cols))
		for j, col := range cols {
			if seen[strings.ToLower(col)] {
				return path, &text2sql.SQLError{Kind: text2sql.KindCrossDatabase,
					Message: "CTE " + s.name + " returns two columns named " + col,
					Hint:    "give its columns distinct aliases"}, nil
			}
			seen[strings.ToLower(col)] = true
			quoted[j] = schema.Quote(text2sql.DialectSQLite, col)
		}
		table := schema.Quote(text2sql.DialectSQLite, s.name)
		if _, err := tx.ExecContext(ctx, "CREATE TABLE "+table+" ("+strings.Join(quoted, ", ")+")"); err != nil {
			return path, nil, fmt.Errorf("catalog: merge table %s: %w", s.name, err)
		}
		if len(results[i].Rows) == 0 {
			continue
		}
		ins, err := tx.PrepareContext(ctx, "INSERT INTO "+table+" VALUES ("+strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", ")+")")
		if err != nil {
			return path, nil, fmt.Errorf("catalog: merge table %s: %w", s.name, err)
		}
		for _, row := range results[i].Rows {
			if len(row) != len(cols) {
				ins.Close()
				return path, nil, fmt.Errorf("catalog: step %s: a row of %d values for %d columns", s.name, len(row), len(cols))
			}
			args := make([]any, len(row))
			for k, v := range row {
				args[k] = storable(v)
			}
			if _, err := ins.ExecContext(ctx, args...); err != nil {
				ins.Close()
				return path, nil, fmt.Errorf("catalog: merge table %s: %w", s.name, err)
			}
		}
		ins.Close()
	}
	if err := tx.Commit(); err != nil {
		return path, nil, fmt.Errorf("catalog: merge database: %w", err)
	}
	return path, nil, nil
}

// storable returns v as a value SQLite stores: the executors' own types
// as they are, other numbers as numbers, and anything else (JSON objects
// from an MCP server) as its JSON text.
func storable(v any) any {
	switch x := v.(type) {
	case nil, int64, float64, string, []byte, bool, time.Time:
		return x
	case int:
		return int64(x)
	case int32:
		return int64(x)
	case float32:
		return float64(x)
	case json.Number:
		if n, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return n
		}
		if f, err := strconv.ParseFloat(string(x), 64); err == nil {
			return f
		}
		return string(x)
	case fmt.Stringer:
		return x.String()
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// resultBytes is the memory of res's rows as the executors count it: the
// bytes of its strings and blobs plus executor.ValueOverhead per value.
func resultBytes(res *text2sql.Result) int {
	n := 0
	for _, row := range res.Rows {
		for _, v := range row {
			n += executor.ValueOverhead
			switch x := v.(type) {
			case string:
				n += len(x)
			case []byte:
				n += len(x)
			}
		}
	}
	return n
}

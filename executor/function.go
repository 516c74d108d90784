package executor

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/lint"
)

// FunctionShape names the keys of the JSON object a sandbox function
// returns — a database function that runs the statement itself, under
// its own role, caps and audit, as Supabase projects write them — for the
// executors that call one (postgres.Function, executor/postgrest). Empty
// fields take the default key in brackets:
//
//	{"ok": true, "columns": ["name", "n"], "rows": [["Ada", 3]], "row_count": 1, "truncated": false}
//	{"ok": true, "rows": [{"name": "Ada", "n": 3}], "row_count": 1}   (rows as objects: json_agg)
//	{"ok": false, "error": "relation \"x\" does not exist"}            (or {"message", "code", "hint"})
type FunctionShape struct {
	OK        string // [ok] true when the statement ran
	Columns   string // [columns] optional; without it, the keys of the first row object, in order
	Rows      string // [rows] arrays (with Columns) or objects
	RowCount  string // [row_count] optional; the number of rows otherwise
	Truncated string // [truncated] optional; true when the function capped the rows
	Error     string // [error] a message, or an object with message, code (SQLSTATE) and hint
}

func (s FunctionShape) resolved() FunctionShape {
	return FunctionShape{OK: cmp.Or(s.OK, "ok"), Columns: cmp.Or(s.Columns, "columns"), Rows: cmp.Or(s.Rows, "rows"),
		RowCount: cmp.Or(s.RowCount, "row_count"), Truncated: cmp.Or(s.Truncated, "truncated"), Error: cmp.Or(s.Error, "error")}
}

// DecodeFunctionResult reads a sandbox function's answer b (shape s) into
// a Result, keeping at most maxRows rows (Truncated when more came). An
// answer with ok false is a Result whose Error has the kind lint.Classify
// gives its message (the SQLSTATE and hint when the error is an object).
// Values: JSON numbers are int64 when integral and in range, else
// float64; strings, booleans and null as such; arrays and objects as
// their JSON text. An answer that is not such an object is an error
// naming what is missing (the executor cannot work with it).
func DecodeFunctionResult(b []byte, s FunctionShape, maxRows int) (*text2sql.Result, error) {
	s = s.resolved()
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil {
		return nil, fmt.Errorf("sandbox function: the answer is not a JSON object: %v", err)
	}
	var ok bool
	if raw, found := top[s.OK]; !found || json.Unmarshal(raw, &ok) != nil {
		return nil, fmt.Errorf("sandbox function: the answer has no boolean %q", s.OK)
	}
	if !ok {
		return &text2sql.Result{Error: functionError(top[s.Error])}, nil
	}
	res := &text2sql.Result{}
	if raw, found := top[s.Columns]; found {
		if err := json.Unmarshal(raw, &res.Columns); err != nil {
			return nil, fmt.Errorf("sandbox function: %q is not a list of names", s.Columns)
		}
	}
	var rows []json.RawMessage
	if raw, found := top[s.Rows]; found && string(raw) != "null" {
		if err := json.Unmarshal(raw, &rows); err != nil {
			return nil, fmt.Errorf("sandbox function: %q is not a list", s.Rows)
		}
	}
	for i, raw := range rows {
		if len(res.Rows) >= maxRows {
			res.Truncated = true
			break
		}
		row, cols, err := decodeRow(raw, res.Columns)
		if err != nil {
			return nil, fmt.Errorf("sandbox function: row %d: %v", i+1, err)
		}
		if res.Columns == nil {
			res.Columns = cols
		}
		res.Rows = append(res.Rows, row)
	}
	if res.Columns == nil {
		res.Columns = []string{}
	}
	res.RowCount = len(res.Rows)
	var truncated bool
	if raw, found := top[s.Truncated]; found && json.Unmarshal(raw, &truncated) == nil && truncated {
		res.Truncated = true
	}
	return res, nil
}

// decodeRow reads one row: an array in the order of cols, or an object
// whose keys, in order, become the columns when cols is nil.
func decodeRow(raw json.RawMessage, cols []string) ([]any, []string, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, nil, err
	}
	switch tok {
	case json.Delim('['):
		var vals []json.RawMessage
		if err := json.Unmarshal(raw, &vals); err != nil {
			return nil, nil, err
		}
		if cols == nil || len(vals) != len(cols) {
			return nil, nil, fmt.Errorf("%d values for %d columns", len(vals), len(cols))
		}
		row := make([]any, len(vals))
		for i, v := range vals {
			row[i] = jsonValue(v)
		}
		return row, cols, nil
	case json.Delim('{'):
		byName := map[string]any{}
		var order []string
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return nil, nil, err
			}
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				return nil, nil, err
			}
			name := k.(string)
			order = append(order, name)
			byName[name] = jsonValue(v)
		}
		if cols == nil {
			cols = order
		}
		row := make([]any, len(cols))
		for i, c := range cols {
			row[i] = byName[c]
		}
		return row, cols, nil
	}
	return nil, nil, errors.New("not an array or an object")
}

// jsonValue converts one JSON value to a Result cell.
func jsonValue(raw json.RawMessage) any {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return string(raw)
	}
	switch x := v.(type) {
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return n
		}
		if f, err := x.Float64(); err == nil {
			return f
		}
		return x.String()
	case map[string]any, []any:
		return string(bytes.TrimSpace(raw))
	}
	return v
}

// functionError reads a sandbox function's error: a message, or an
// object with message, code and hint.
func functionError(raw json.RawMessage) *text2sql.SQLError {
	var msg string
	if json.Unmarshal(raw, &msg) != nil {
		var obj struct{ Message, Code, Hint string }
		if json.Unmarshal(raw, &obj) == nil {
			e := &text2sql.SQLError{Message: obj.Message, SQLState: obj.Code, Hint: obj.Hint}
			e.Kind = lint.Classify(e.Message)
			if e.Message == "" {
				e.Message = "the sandbox function reported a failure without a message"
			}
			return e
		}
	}
	if msg == "" {
		msg = "the sandbox function reported a failure without a message"
	}
	return &text2sql.SQLError{Kind: lint.Classify(msg), Message: msg}
}

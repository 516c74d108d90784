package knowledge

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/parser"
)

// The file formats Parse and Encode accept.
const (
	FormatYAML = "yaml"
	FormatJSON = "json"
)

// ParseError is a knowledge file that cannot be decoded: a syntax error, an
// unknown field, a value of the wrong type, or several YAML documents in one
// file. Line and Column are 1-based; both are 0 when the position is unknown.
type ParseError struct {
	Path   string // the file, when read by Load; empty for Parse
	Format string // FormatYAML or FormatJSON
	Line   int
	Column int
	Msg    string
	Err    error // the decoder's error, when there is one
}

// Error renders the error as "knowledge: path:line:column: message" (the
// format name stands for the path when there is none).
func (e *ParseError) Error() string {
	where := e.Path
	if where == "" {
		where = e.Format
	}
	if e.Line > 0 {
		where += fmt.Sprintf(":%d:%d", e.Line, e.Column)
	}
	return "knowledge: " + where + ": " + e.Msg
}

// Unwrap returns the decoder's error.
func (e *ParseError) Unwrap() error { return e.Err }

// Load reads a knowledge base from a file, choosing the format by its
// extension: .yaml or .yml for YAML, .json for JSON. Decoding is strict (see
// Parse). Load checks the structure of the base but not its SQL or its
// references to the schema: call Validate with the schema and a guard before
// the base is used.
//
// Errors: an *os.PathError when the file cannot be read, a *ParseError when
// it cannot be decoded (with the path, line and column), a *ValidationError
// when items lack required fields or IDs are duplicated.
func Load(path string) (*Base, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return nil, fmt.Errorf("knowledge: %s is a directory; give the knowledge file (.yaml, .yml or .json)", path)
	}
	format, err := formatOf(path)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	b, err := Parse(data, format)
	var pe *ParseError
	if errors.As(err, &pe) {
		pe.Path = path
	}
	return b, err
}

// Parse decodes a knowledge base in the given format: "yaml" (or "yml") or
// "json", case-insensitive. Decoding is strict: unknown fields, values of
// the wrong type, duplicate keys and (in YAML) more than one document are
// errors. Empty input is an empty base. Rules and examples without an ID get
// a deterministic one (see AddRule and AddExample), and the structure is
// checked as the Add methods check it.
//
// Errors: a *ParseError with the line and column of the fault, or a
// *ValidationError listing every structural problem. Parse never panics on
// malformed input.
func Parse(data []byte, format string) (*Base, error) {
	var (
		b   Base
		err error
	)
	switch strings.ToLower(format) {
	case FormatYAML, "yml":
		err = parseYAML(data, &b)
	case FormatJSON:
		err = parseJSON(data, &b)
	default:
		return nil, fmt.Errorf("knowledge: unknown format %q (want yaml or json)", format)
	}
	if err != nil {
		return nil, err
	}
	if err := b.normalize(); err != nil {
		return nil, err
	}
	return &b, nil
}

// Encode returns the base in the given format ("yaml", "yml" or "json"),
// ready for Parse: Parse(b.Encode(f)) gives back an equal base.
func (b *Base) Encode(format string) ([]byte, error) {
	switch strings.ToLower(format) {
	case FormatYAML, "yml":
		return yaml.MarshalWithOptions(b, yaml.UseLiteralStyleIfMultiline(true), yaml.IndentSequence(true))
	case FormatJSON:
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(b); err != nil {
			return nil, err
		}
		return buf.Bytes(), nil
	}
	return nil, fmt.Errorf("knowledge: unknown format %q (want yaml or json)", format)
}

// Save writes the base to path in the format its extension names (.yaml,
// .yml or .json), replacing the file if it exists.
func (b *Base) Save(path string) error {
	format, err := formatOf(path)
	if err != nil {
		return err
	}
	data, err := b.Encode(format)
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

func formatOf(path string) (string, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".yaml", ".yml":
		return FormatYAML, nil
	case ".json":
		return FormatJSON, nil
	}
	return "", fmt.Errorf("knowledge: %s: unknown file extension (want .yaml, .yml or .json)", path)
}

func parseYAML(data []byte, b *Base) (err error) {
	defer func() {
		// The decoder is a third-party library; a panic on hostile input
		// must not take the host down.
		if r := recover(); r != nil {
			err = &ParseError{Format: FormatYAML, Msg: fmt.Sprintf("malformed YAML (%v)", r)}
		}
	}()
	file, err := parser.ParseBytes(data, 0)
	if err != nil {
		return yamlError(err)
	}
	var docs int
	for _, d := range file.Docs {
		if d == nil || d.Body == nil {
			continue
		}
		docs++
		if docs > 1 {
			pe := &ParseError{Format: FormatYAML, Msg: "more than one YAML document"}
			if tk := d.Body.GetToken(); tk != nil && tk.Position != nil {
				pe.Line, pe.Column = tk.Position.Line, tk.Position.Column
			}
			return pe
		}
	}
	if docs == 0 {
		return nil
	}
	if err := yaml.UnmarshalWithOptions(data, b, yaml.Strict()); err != nil {
		return yamlError(err)
	}
	return nil
}

func yamlError(err error) error {
	pe := &ParseError{Format: FormatYAML, Msg: err.Error(), Err: err}
	var ye yaml.Error
	if errors.As(err, &ye) {
		pe.Msg = ye.GetMessage()
		if tk := ye.GetToken(); tk != nil && tk.Position != nil {
			pe.Line, pe.Column = tk.Position.Line, tk.Position.Column
		}
	}
	return pe
}

func parseJSON(data []byte, b *Base) error {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	err := dec.Decode(b)
	if err == nil {
		var extra json.RawMessage
		if err2 := dec.Decode(&extra); err2 != io.EOF {
			line, col := lineCol(data, int(dec.InputOffset()))
			return &ParseError{Format: FormatJSON, Line: line, Column: col, Msg: "data after the top-level value"}
		}
		return nil
	}
	pe := &ParseError{Format: FormatJSON, Msg: strings.TrimPrefix(err.Error(), "json: "), Err: err}
	var (
		se *json.SyntaxError
		te *json.UnmarshalTypeError
	)
	switch {
	case errors.As(err, &se):
		pe.Line, pe.Column = lineCol(data, int(se.Offset)-1) // Offset is just past the fault
	case errors.As(err, &te):
		pe.Line, pe.Column = lineCol(data, int(te.Offset)-1)
		pe.Msg = fmt.Sprintf("field %s: cannot use a JSON %s as %s", te.Field, te.Value, te.Type)
	case errors.Is(err, io.ErrUnexpectedEOF):
		pe.Line, pe.Column = lineCol(data, len(data))
		pe.Msg = "unexpected end of input"
	default:
		// An unknown field: encoding/json does not say where. The input is
		// valid JSON, hence valid YAML: let the YAML decoder locate it.
		var probe Base
		if yerr := parseYAML(data, &probe); yerr != nil {
			var ype *ParseError
			if errors.As(yerr, &ype) && ype.Line > 0 {
				pe.Line, pe.Column = ype.Line, ype.Column
			}
		}
	}
	return pe
}

// lineCol converts a byte offset into a 1-based line and column (in bytes).
func lineCol(data []byte, off int) (line, col int) {
	if off > len(data) {
		off = len(data)
	}
	if off < 0 {
		off = 0
	}
	line = 1 + bytes.Count(data[:off], []byte{'\n'})
	col = off - bytes.LastIndexByte(data[:off], '\n')
	return line, col
}

// Package chart picks a chart for a query result: a Vega-Lite v5
// specification (https://vega.github.io/vega-lite/) chosen from the
// result's shape and the types of its values, with the data inline, or
// none when no chart would say more than the table.
//
// The choice is deterministic (the same result gives the same bytes):
//
//   - a category and one to three numbers → bar (grouped bars for several
//     numbers; two categories and a number → stacked bars, unless the
//     second is another name of the first, as a course's title is of its
//     code: then it is in the tooltip);
//   - a date or time (or a year) and one to three numbers → line;
//   - two numbers, optionally with a category → point;
//   - anything else → no chart: a single row or value, a single column, a
//     wide table (more than MaxColumns columns), more categories than
//     MaxCategories, text that is neither a category nor a date.
//
// Values decide types: Go numbers are quantitative (NaN and infinities
// are not), time.Time values and text in ISO 8601 date or date-time form
// (2019-05-01, 2019-05-01 12:30:00, RFC 3339) temporal, an integer column
// named like a year (year, release_year, yr) with values from 1000 to 2999
// a year, other text and booleans categories. NULLs are skipped. The
// package also carries the vendored Vega builds (Assets) and writes a
// self-contained HTML page for a chart (Page).
package chart

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/defaults"
)

// SchemaURL is the Vega-Lite v5 JSON schema every Spec names.
const SchemaURL = "https://vega.github.io/schema/vega-lite/v5.json"

// Defaults of Options.
const (
	// DefaultMaxRows bounds the rows carried inline: about 60 KB of JSON
	// for three columns, small enough for a response, enough for a line
	// over five years of days.
	DefaultMaxRows = 2000
	// DefaultMaxCategories bounds the bars on an axis: past 50 the labels
	// overlap at any usual width and a table reads better.
	DefaultMaxCategories = 50
	// DefaultMaxColors bounds the categories told apart by colour: Vega's
	// largest categorical schemes have 20 colours.
	DefaultMaxColors = 20
	// MaxColumns is the widest result charted: one dimension and three
	// measures (or two dimensions and a measure).
	MaxColumns = 4
)

// Options bound a chart. The zero value means the defaults.
type Options struct {
	// MaxRows is the most rows put in the spec's data; a longer result is
	// charted on its first MaxRows rows and the Description says so.
	MaxRows int
	// MaxCategories is the most distinct values of a category on the x
	// axis; a result with more gets no chart.
	MaxCategories int
	// MaxColors is the most distinct values of a category told apart by
	// colour (a second category, or the series of a point chart).
	MaxColors int
}

func (o Options) withDefaults() Options {
	defaults.Positive(&o.MaxRows, DefaultMaxRows)
	defaults.Positive(&o.MaxCategories, DefaultMaxCategories)
	defaults.Positive(&o.MaxColors, DefaultMaxColors)
	return o
}

// Spec is a Vega-Lite v5 specification, as much of it as this package
// writes. Marshal it with encoding/json.
type Spec struct {
	Schema      string      `json:"$schema"`
	Description string      `json:"description,omitempty"`
	Width       string      `json:"width,omitempty"` // "container": as wide as the element
	Data        Data        `json:"data"`
	Transform   []Transform `json:"transform,omitempty"`
	Mark        Mark        `json:"mark"`
	Encoding    Encoding    `json:"encoding"`
}

// Data is inline data: one object per row, keyed by Field names.
type Data struct {
	Values []map[string]any `json:"values"`
}

// Transform is a fold: the Fold fields become rows of (As[0] = field
// name, As[1] = value), so several measures share one y axis.
type Transform struct {
	Fold []string `json:"fold"`
	As   []string `json:"as"`
}

// Mark is the mark: Type "bar", "line" or "point".
type Mark struct {
	Type    string `json:"type"`
	Tooltip bool   `json:"tooltip"`
	Point   bool   `json:"point,omitempty"` // line: mark each datum
}

// Encoding maps fields to channels.
type Encoding struct {
	X       *Channel `json:"x"`
	Y       *Channel `json:"y"`
	Color   *Channel `json:"color,omitempty"`
	XOffset *Channel `json:"xOffset,omitempty"` // grouped bars
	// Tooltip lists the fields a hover shows when it holds more than the
	// encoded ones (a second name of the category).
	Tooltip []*Channel `json:"tooltip,omitempty"`
}

// Channel is one encoding channel. Type is "quantitative", "temporal",
// "ordinal" or "nominal". Sort is null to keep the result's order (the
// SQL's ORDER BY) on a category axis.
type Channel struct {
	Field string `json:"field"`
	Type  string `json:"type"`
	Title string `json:"title,omitempty"`
	Sort  *sort  `json:"sort,omitempty"`
}

// sort marshals as JSON null: "keep the data's order".
type sort struct{}

func (*sort) MarshalJSON() ([]byte, error) { return []byte("null"), nil }

// keepOrder is the Sort of category axes.
var keepOrder = &sort{}

// kind is what a column's values are.
type kind int

const (
	kindNone     kind = iota // only NULLs
	kindNumber               // quantitative
	kindTime                 // temporal
	kindYear                 // an integer year, charted as ordinal
	kindCategory             // nominal
)

// For returns the chart for res, or nil when none suits it: res is nil,
// an error, has fewer than two rows, or has a shape the package comment
// does not chart.
func For(res *text2sql.Result, opts Options) *Spec {
	if res == nil || res.Error != nil || len(res.Rows) < 2 || len(res.Columns) < 2 || len(res.Columns) > MaxColumns {
		return nil
	}
	for _, row := range res.Rows {
		if len(row) != len(res.Columns) {
			return nil // not a result an executor makes; nothing to chart
		}
	}
	opts = opts.withDefaults()
	rows := res.Rows
	if len(rows) > opts.MaxRows {
		rows = rows[:opts.MaxRows]
	}
	c := classify(res.Columns, rows)
	if c == nil {
		return nil
	}
	s := &Spec{Schema: SchemaURL, Width: "container"}
	var ok bool
	switch {
	case len(c.dims) == 1 && len(c.nums) >= 1:
		ok = c.byDimension(s, opts)
	case len(c.dims) == 2 && len(c.nums) == 1 && c.kinds[c.dims[0]] == kindCategory && c.kinds[c.dims[1]] == kindCategory:
		ok = c.byTwoCategories(s, opts)
	case len(c.nums) == 2 && len(c.dims) <= 1:
		ok = c.scatter(s, opts)
	}
	if !ok {
		return nil
	}
	c.tooltip(s)
	s.Data.Values = c.values()
	if len(rows) < len(res.Rows) {
		s.Description = fmt.Sprintf("the first %d of %d rows", len(rows), len(res.Rows))
	} else if res.Truncated {
		s.Description = fmt.Sprintf("the first %d rows (the result was cut at the row cap)", len(rows))
	}
	return s
}

// columns are a result's columns sorted for charting.
type columns struct {
	names  []string // the result's column names
	fields []string // their field names in the data
	kinds  []kind
	rows   [][]any // the rows charted
	// Column indexes: the measures, the dimensions, and the second names
	// of the first dimension (labels).
	nums, dims, labels []int
}

// classify sorts the columns of rows into measures, dimensions and
// labels; nil when a column holds only NULLs.
func classify(names []string, rows [][]any) *columns {
	c := &columns{names: names, fields: fieldNames(names), kinds: make([]kind, len(names)), rows: rows}
	for j, name := range names {
		c.kinds[j] = columnKind(name, rows, j)
		if c.kinds[j] == kindNone {
			return nil
		}
	}
	for j, k := range c.kinds {
		switch {
		case k == kindNumber:
			c.nums = append(c.nums, j)
		case k == kindCategory && len(c.dims) > 0 && c.kinds[c.dims[0]] == kindCategory && oneToOne(rows, c.dims[0], j):
			// A second name of the same thing (a course's code and its
			// title): shown in the tooltip, not as a second dimension.
			c.labels = append(c.labels, j)
		default:
			c.dims = append(c.dims, j)
		}
	}
	return c
}

// channel returns the channel of column j as typ.
func (c *columns) channel(j int, typ string) *Channel {
	ch := &Channel{Field: c.fields[j], Type: typ, Title: title(c.names[j])}
	if typ == "nominal" || typ == "ordinal" {
		ch.Sort = keepOrder
	}
	return ch
}

// byDimension charts measures over one dimension: a line over time or
// years, else bars (false past MaxCategories); several measures share
// the y axis, folded into (measure, value) rows told apart by colour,
// side by side for bars.
func (c *columns) byDimension(s *Spec, opts Options) bool {
	d := c.dims[0]
	switch c.kinds[d] {
	case kindTime:
		s.Mark = Mark{Type: "line", Tooltip: true, Point: len(c.rows) <= 100}
		s.Encoding.X = c.channel(d, "temporal")
	case kindYear:
		s.Mark = Mark{Type: "line", Tooltip: true, Point: len(c.rows) <= 100}
		s.Encoding.X = c.channel(d, "ordinal")
	default:
		if distinct(c.rows, d) > opts.MaxCategories {
			return false
		}
		s.Mark = Mark{Type: "bar", Tooltip: true}
		s.Encoding.X = c.channel(d, "nominal")
	}
	if len(c.nums) == 1 {
		s.Encoding.Y = c.channel(c.nums[0], "quantitative")
		return true
	}
	folded := make([]string, len(c.nums))
	for i, j := range c.nums {
		folded[i] = c.fields[j]
	}
	s.Transform = []Transform{{Fold: folded, As: []string{"measure", "value"}}}
	s.Encoding.Y = &Channel{Field: "value", Type: "quantitative"}
	s.Encoding.Color = &Channel{Field: "measure", Type: "nominal", Title: "", Sort: keepOrder}
	if s.Mark.Type == "bar" {
		s.Encoding.XOffset = &Channel{Field: "measure", Type: "nominal", Sort: keepOrder}
	}
	return true
}

// byTwoCategories charts one measure over two categories: bars coloured
// by the second (false past MaxCategories or MaxColors).
func (c *columns) byTwoCategories(s *Spec, opts Options) bool {
	if distinct(c.rows, c.dims[0]) > opts.MaxCategories || distinct(c.rows, c.dims[1]) > opts.MaxColors {
		return false
	}
	s.Mark = Mark{Type: "bar", Tooltip: true}
	s.Encoding.X = c.channel(c.dims[0], "nominal")
	s.Encoding.Y = c.channel(c.nums[0], "quantitative")
	s.Encoding.Color = c.channel(c.dims[1], "nominal")
	return true
}

// scatter charts two measures against each other, coloured by a
// category if there is one (false when the dimension is no category or
// has more than MaxColors values).
func (c *columns) scatter(s *Spec, opts Options) bool {
	if len(c.dims) == 1 && (c.kinds[c.dims[0]] != kindCategory || distinct(c.rows, c.dims[0]) > opts.MaxColors) {
		return false
	}
	s.Mark = Mark{Type: "point", Tooltip: true}
	s.Encoding.X = c.channel(c.nums[0], "quantitative")
	s.Encoding.Y = c.channel(c.nums[1], "quantitative")
	if len(c.dims) == 1 {
		s.Encoding.Color = c.channel(c.dims[0], "nominal")
	}
	return true
}

// tooltip lists the dimension, its second names and the measures in the
// hover when there are second names.
func (c *columns) tooltip(s *Spec) {
	if len(c.labels) == 0 {
		return
	}
	s.Encoding.Tooltip = []*Channel{c.channel(c.dims[0], "nominal")}
	for _, j := range c.labels {
		s.Encoding.Tooltip = append(s.Encoding.Tooltip, c.channel(j, "nominal"))
	}
	for _, j := range c.nums {
		s.Encoding.Tooltip = append(s.Encoding.Tooltip, c.channel(j, "quantitative"))
	}
}

// values returns the rows as the data's objects, by field name.
func (c *columns) values() []map[string]any {
	out := make([]map[string]any, len(c.rows))
	for i, row := range c.rows {
		obj := make(map[string]any, len(c.fields))
		for j, f := range c.fields {
			obj[f] = dataValue(row[j], c.kinds[j])
		}
		out[i] = obj
	}
	return out
}

// columnKind classifies column j of rows from its non-NULL values.
func columnKind(name string, rows [][]any, j int) kind {
	k := kindNone
	allInt, yearRange := true, true
	for _, row := range rows {
		if j >= len(row) || row[j] == nil {
			continue
		}
		vk := valueKind(row[j])
		if f, ok := number(row[j]); ok {
			if f != math.Trunc(f) {
				allInt = false
			}
			if f < 1000 || f > 2999 {
				yearRange = false
			}
		}
		switch {
		case k == kindNone:
			k = vk
		case k != vk:
			return kindCategory // mixed values: only a category is honest
		}
	}
	if k == kindNumber && allInt && yearRange && yearName(name) {
		return kindYear
	}
	return k
}

// yearPattern matches column names that hold a year: "year",
// "release_year", "YearOpened", "yr", "fiscal_yr".
var yearPattern = regexp.MustCompile(`(?i)(^|[^a-z])(year|yr)([^a-z]|$)|year`)

func yearName(name string) bool { return yearPattern.MatchString(name) }

// valueKind is the kind of one non-NULL value.
func valueKind(v any) kind {
	if _, ok := number(v); ok {
		return kindNumber
	}
	switch x := v.(type) {
	case time.Time:
		return kindTime
	case string:
		if isDate(x) {
			return kindTime
		}
	case []byte:
		if isDate(string(x)) {
			return kindTime
		}
	}
	return kindCategory
}

// number returns v as a finite float64 when it is a Go number.
func number(v any) (float64, bool) {
	var f float64
	switch x := v.(type) {
	case int:
		f = float64(x)
	case int8:
		f = float64(x)
	case int16:
		f = float64(x)
	case int32:
		f = float64(x)
	case int64:
		f = float64(x)
	case uint:
		f = float64(x)
	case uint8:
		f = float64(x)
	case uint16:
		f = float64(x)
	case uint32:
		f = float64(x)
	case uint64:
		f = float64(x)
	case float32:
		f = float64(x)
	case float64:
		f = x
	case json.Number:
		var err error
		if f, err = strconv.ParseFloat(string(x), 64); err != nil {
			return 0, false
		}
	default:
		return 0, false
	}
	return f, !math.IsNaN(f) && !math.IsInf(f, 0)
}

// dateLayouts are the text forms read as dates: ISO 8601 as SQLite,
// PostgreSQL and MySQL print dates and timestamps.
var dateLayouts = []string{
	"2006-01-02", "2006-01-02 15:04:05", "2006-01-02 15:04", "2006-01-02T15:04:05",
	"2006-01-02 15:04:05.999999999", "2006-01-02T15:04:05.999999999", time.RFC3339Nano,
	"2006-01-02 15:04:05Z07:00", "2006-01-02 15:04:05.999999999Z07:00", "2006-01",
}

func isDate(s string) bool {
	switch {
	case len(s) < len("2006-01") || s[4] != '-':
		return false
	case len(s) == len("2006-01-02"):
		_, err := time.Parse("2006-01-02", s)
		return err == nil
	}
	for _, l := range dateLayouts {
		if _, err := time.Parse(l, s); err == nil {
			return true
		}
	}
	return false
}

// dataValue is v as Vega reads it: numbers as numbers, times as RFC 3339
// text, years as text (an ordinal), the rest as text.
func dataValue(v any, k kind) any {
	if v == nil {
		return nil
	}
	if f, ok := number(v); ok {
		if k == kindYear {
			return strconv.FormatFloat(f, 'f', -1, 64)
		}
		if k == kindNumber {
			return f
		}
	}
	switch x := v.(type) {
	case time.Time:
		return x.Format(time.RFC3339Nano)
	case []byte:
		if utf8.Valid(x) {
			return string(x)
		}
		return fmt.Sprintf("%x", x)
	case string:
		return x
	}
	return fmt.Sprint(v)
}

// oneToOne reports whether columns a and b name the same things: each
// value of one goes with one value of the other.
func oneToOne(rows [][]any, a, b int) bool {
	ab, ba := make(map[string]string), make(map[string]string)
	for _, row := range rows {
		x, y := fmt.Sprint(row[a]), fmt.Sprint(row[b])
		if v, ok := ab[x]; ok && v != y {
			return false
		}
		if v, ok := ba[y]; ok && v != x {
			return false
		}
		ab[x], ba[y] = y, x
	}
	return true
}

// distinct counts the distinct values of column j.
func distinct(rows [][]any, j int) int {
	seen := make(map[string]struct{})
	for _, row := range rows {
		seen[fmt.Sprint(row[j])] = struct{}{}
	}
	return len(seen)
}

// title is a column's title in the chart: its name, except the tooltip
// keys Vega's tooltip handler reads as directives ("image" is shown as an
// image fetched from the value, "title" heads the tooltip), which get a
// suffix so a column name cannot make the chart load a URL from the data,
// and the names of objectKeys, which the tooltip's object of title → value
// cannot hold (the chart stopped: "Operator not defined").
func title(col string) string {
	switch strings.ToLower(strings.TrimSpace(col)) {
	case "image", "title":
		return col + " (column)"
	}
	if slices.Contains(objectKeys, col) {
		return col + " (column)"
	}
	return col
}

// objectKeys are the names every JavaScript object already has (those
// of Object.prototype): a row keyed "__proto__" or "constructor" reads
// the prototype, not the value, and stops the chart.
var objectKeys = []string{"__proto__", "constructor", "hasOwnProperty", "isPrototypeOf", "propertyIsEnumerable",
	"toLocaleString", "toString", "valueOf", "__defineGetter__", "__defineSetter__", "__lookupGetter__", "__lookupSetter__"}

// fieldNames are the data keys of the columns: the column name without
// the characters Vega-Lite reads as a path or an escape (. [ ] \ ' "),
// "column N" for an empty name, " (column)" after a name of objectKeys,
// and " (2)", " (3)"… after a repeat, so every column has its own key
// that reads its value.
func fieldNames(cols []string) []string {
	out := make([]string, len(cols))
	for j, c := range cols {
		f := strings.Map(func(r rune) rune {
			if strings.ContainsRune(`.[]\'"`, r) {
				return '_'
			}
			return r
		}, c)
		if strings.TrimSpace(f) == "" {
			f = fmt.Sprintf("column %d", j+1)
		}
		if slices.Contains(objectKeys, f) {
			f += " (column)"
		}
		base := f
		for n := 2; slices.Contains(out[:j], f) || f == "measure" || f == "value"; n++ {
			f = fmt.Sprintf("%s (%d)", base, n)
		}
		out[j] = f
	}
	return out
}

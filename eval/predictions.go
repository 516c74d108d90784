package eval

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// ErrPredictions is wrapped by the errors of ReadPredictions and
// Predictions.Pair: a malformed file, or predictions that do not pair one
// to one with the questions.
var ErrPredictions = errors.New("eval: bad predictions")

// birdSeparator separates the SQL from the database in the values of a
// BIRD prediction file: "SQL\t----- bird -----\tdb_id".
const birdSeparator = "\t----- bird -----\t"

// Predictions are predicted SQL queries, keyed by question ID.
type Predictions struct {
	// Name identifies the predictions in reports (the file's base name).
	Name string `json:"name"`
	// Path is the file read, if any.
	Path string `json:"path,omitempty"`
	// ByID maps a question ID to its SQL. A key present with an empty
	// value is a prediction that holds no query (it scores 0).
	ByID map[string]string `json:"-"`
	// Keyed is true when the file was a JSON object keyed by question ID,
	// false for one SQL per line.
	Keyed bool `json:"keyed"`
	// lines is the number of lines of a line file.
	lines int
}

// ReadPredictions reads a predictions file in one of two forms:
//
//   - a JSON object keyed by question ID, as BIRD writes them: {"0":
//     "SQL\t----- bird -----\tdb_id", …}. The SQL is the part before the
//     separator (the whole value without one); a value that is not a
//     string is a query that fails (as in the BIRD evaluator). Keys pair
//     with Question.ID, in whatever order they come ("0", "1", "10", "2"
//     pairs the same as numeric order).
//   - one SQL per line, in question order (Spider's format): each line is
//     trimmed and only the part before the first tab is used. An empty
//     line is an empty prediction for that question (which fails); a
//     final newline ends the file. Line i pairs with the question at
//     position i.
//
// Errors wrap ErrPredictions.
func ReadPredictions(path string) (*Predictions, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrPredictions, err)
	}
	p, err := ParsePredictions(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	p.Name, p.Path = filepath.Base(path), path
	return p, nil
}

// ParsePredictions parses the content of a predictions file; see
// ReadPredictions. Errors wrap ErrPredictions.
func ParsePredictions(raw []byte) (*Predictions, error) {
	p := &Predictions{ByID: map[string]string{}}
	trim := bytes.TrimSpace(raw)
	if len(trim) > 0 && trim[0] == '{' {
		var m map[string]json.RawMessage
		dec := json.NewDecoder(bytes.NewReader(trim))
		if err := dec.Decode(&m); err != nil {
			return nil, fmt.Errorf("%w: invalid JSON object: %v", ErrPredictions, err)
		}
		if dec.More() {
			return nil, fmt.Errorf("%w: text after the JSON object", ErrPredictions)
		}
		p.Keyed = true
		for k, v := range m {
			var s string
			if err := json.Unmarshal(v, &s); err != nil {
				s = "" // not a string: an empty query, which fails
			}
			if i := strings.Index(s, birdSeparator); i >= 0 {
				s = s[:i]
			}
			p.ByID[strings.TrimSpace(k)] = s
		}
		return p, nil
	}
	text := strings.ReplaceAll(string(raw), "\r\n", "\n")
	text = strings.TrimSuffix(text, "\n")
	if text == "" {
		return nil, fmt.Errorf("%w: the file is empty", ErrPredictions)
	}
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if j := strings.IndexByte(line, '\t'); j >= 0 {
			line = line[:j]
		}
		p.ByID[strconv.Itoa(i)] = line
		p.lines++
	}
	return p, nil
}

// Pair returns the prediction of each question of ds, in question order.
// Every question, excluded or not, must have exactly one prediction: a
// line file must have one line per question, and the keys of a JSON file
// must be exactly the question IDs (or exactly the questions' SourceIDs,
// e.g. BIRD question_id). Anything else is an error wrapping
// ErrPredictions that lists the missing and extra IDs.
func (p *Predictions) Pair(ds *Dataset) ([]string, error) {
	out := make([]string, len(ds.Questions))
	if !p.Keyed {
		if p.lines != len(ds.Questions) {
			return nil, fmt.Errorf("%w: %s has %d lines for %d questions (one SQL per line in question order; write a placeholder, not a blank line, for a failed generation)",
				ErrPredictions, p.label(), p.lines, len(ds.Questions))
		}
		for i, q := range ds.Questions {
			out[i] = p.ByID[strconv.Itoa(q.Index)]
		}
		return out, nil
	}
	key := func(q *Question) string { return q.ID }
	if missing, _ := p.diff(ds, key); len(missing) > 0 && ds.Questions[0].SourceID != "" {
		bySource := func(q *Question) string { return q.SourceID }
		if m, e := p.diff(ds, bySource); len(m) == 0 && len(e) == 0 {
			key = bySource
		}
	}
	missing, extra := p.diff(ds, key)
	if len(missing) > 0 || len(extra) > 0 {
		var parts []string
		if len(missing) > 0 {
			parts = append(parts, fmt.Sprintf("%d missing (%s)", len(missing), idList(missing)))
		}
		if len(extra) > 0 {
			parts = append(parts, fmt.Sprintf("%d extra (%s)", len(extra), idList(extra)))
		}
		return nil, fmt.Errorf("%w: %s does not pair one to one with the %d questions by id: %s", ErrPredictions, p.label(),
			len(ds.Questions), strings.Join(parts, ", "))
	}
	for i := range ds.Questions {
		out[i] = p.ByID[key(&ds.Questions[i])]
	}
	return out, nil
}

func (p *Predictions) label() string {
	if p.Name != "" {
		return p.Name
	}
	return "the predictions"
}

// diff returns the question keys without a prediction and the prediction
// keys without a question, each sorted numerically where they are numbers.
func (p *Predictions) diff(ds *Dataset, key func(*Question) string) (missing, extra []string) {
	want := make(map[string]bool, len(ds.Questions))
	for i := range ds.Questions {
		k := key(&ds.Questions[i])
		want[k] = true
		if _, ok := p.ByID[k]; !ok {
			missing = append(missing, k)
		}
	}
	for k := range p.ByID {
		if !want[k] {
			extra = append(extra, k)
		}
	}
	sortIDs(missing)
	sortIDs(extra)
	return missing, extra
}

func sortIDs(ids []string) {
	sort.Slice(ids, func(i, j int) bool {
		a, ea := strconv.Atoi(ids[i])
		b, eb := strconv.Atoi(ids[j])
		if ea == nil && eb == nil {
			return a < b
		}
		if (ea == nil) != (eb == nil) {
			return ea == nil
		}
		return ids[i] < ids[j]
	})
}

func idList(ids []string) string {
	const show = 10
	if len(ids) <= show {
		return strings.Join(ids, ", ")
	}
	return strings.Join(ids[:show], ", ") + fmt.Sprintf(", … %d more", len(ids)-show)
}

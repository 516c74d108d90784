package eval

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/goccy/go-yaml"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/accuracy"
	"github.com/text2sql-go/text2sql/internal/birdschema"
)

// Format is the format a Dataset was loaded from.
type Format string

// The dataset formats.
const (
	FormatSpider Format = "spider" // Spider: dev.json + tables.json + database/<db>/<db>.sqlite
	FormatBIRD   Format = "bird"   // BIRD: questions with evidence + dev_tables.json + <db>/<db>.sqlite
	FormatFile   Format = "file"   // this package's YAML/JSON format (LoadFile)
)

// ErrDataset is wrapped by the errors of the loaders for malformed or
// missing dataset files.
var ErrDataset = errors.New("eval: bad dataset")

// Dataset is a question set with its databases.
type Dataset struct {
	Name   string `json:"name"`   // e.g. "spider/dev": folder and base name of the questions file
	Format Format `json:"format"` // the format it was loaded from
	// Mode is the comparison mode the format's official scorer uses:
	// ModeSpider for Spider, ModeBIRD for BIRD, the file's "mode" (default
	// ModeSpider) for LoadFile.
	Mode accuracy.Mode `json:"mode"`
	// Rewrite applies SpiderRewrite to gold and predicted SQL before
	// execution, as the Spider evaluator does. Set by LoadSpider.
	Rewrite bool `json:"rewrite"`
	// Questions are in file order; a question's Index is its position.
	Questions []Question `json:"questions"`
	// Databases by ID (a question's DB).
	Databases map[string]*Database `json:"databases"`
	// Tables is the dataset's tables.json file, if any: recall can be
	// measured on empty databases built from it (internal/birdschema)
	// where database files are missing. It is read on first use.
	Tables string `json:"tables,omitempty"`

	tablesOnce sync.Once
	tables     map[string]*birdschema.Schema
	tablesErr  error
}

// TableSchema returns database id's entry of the dataset's tables.json
// (read once, on first use), or nil when there is none.
func (d *Dataset) TableSchema(id string) (*birdschema.Schema, error) {
	d.tablesOnce.Do(func() { d.tables, d.tablesErr = loadTables(d.Tables) })
	if d.tablesErr != nil {
		return nil, d.tablesErr
	}
	return d.tables[id], nil
}

// Database is one database of a dataset.
type Database struct {
	ID string `json:"id"` // db_id, or the database as written in a LoadFile dataset
	// Path is the SQLite file (it may not exist: see Missing).
	Path string `json:"path"`
	// Missing is why the database cannot be used, e.g. "database file
	// …/wta_1/wta_1.sqlite not found"; "" when it can.
	Missing string `json:"missing,omitempty"`
}

// Question is one question of a dataset.
type Question struct {
	// ID pairs the question with a prediction: the position in the
	// question file as a decimal string ("0", "1", …) for Spider and BIRD
	// (the key BIRD prediction files use), the "id" field (default the
	// position) for LoadFile.
	ID string `json:"id"`
	// SourceID is the dataset's own identifier where it has one (BIRD
	// question_id).
	SourceID string `json:"source_id,omitempty"`
	Index    int    `json:"index"`    // position in the question file, from 0
	DB       string `json:"db"`       // the database's ID (Dataset.Databases)
	Question string `json:"question"` // the natural-language question
	// Evidence is BIRD's external knowledge hint ("" elsewhere).
	Evidence string `json:"evidence,omitempty"`
	// GoldSQL is the gold query; empty when Expected is set instead.
	GoldSQL string `json:"gold_sql,omitempty"`
	// Expected are expected rows given instead of a gold query (LoadFile).
	Expected *Expected `json:"expected,omitempty"`
	// Difficulty: Spider hardness (easy, medium, hard, extra) from the
	// parsed gold (SpiderHardness), else from the gold SQL text
	// (SpiderHardnessOfSQL); BIRD difficulty (simple, moderate,
	// challenging); for LoadFile, the file's value, else the Spider
	// hardness of the gold SQL, else Unknown.
	Difficulty string `json:"difficulty"`
	// Excluded is why the question cannot be scored (its database is
	// missing); "" when it can.
	Excluded string `json:"excluded,omitempty"`
}

// Prompt is the text given to a pipeline: the question, followed by BIRD's
// evidence when there is some ("\nEvidence: …").
func (q *Question) Prompt() string {
	if strings.TrimSpace(q.Evidence) == "" {
		return q.Question
	}
	return q.Question + "\nEvidence: " + q.Evidence
}

// Expected are expected result rows.
type Expected struct {
	Columns []string `json:"columns,omitempty"` // optional column names (not compared)
	Rows    [][]any  `json:"rows"`              // the rows, values as an executor returns them
	// Ordered compares the rows in sequence (ModeSpider).
	Ordered bool `json:"ordered,omitempty"`
}

// Result returns the rows as a text2sql.Result.
func (e *Expected) Result() *text2sql.Result {
	return &text2sql.Result{Columns: e.Columns, Rows: e.Rows, RowCount: len(e.Rows)}
}

// Scorable returns the questions that can be scored (not Excluded).
func (d *Dataset) Scorable() []*Question {
	var out []*Question
	for i := range d.Questions {
		if d.Questions[i].Excluded == "" {
			out = append(out, &d.Questions[i])
		}
	}
	return out
}

// Exclusion groups excluded questions by reason.
type Exclusion struct {
	Reason string   `json:"reason"`        // why they are excluded
	DB     string   `json:"db,omitempty"`  // their database
	Count  int      `json:"count"`         // how many
	IDs    []string `json:"ids,omitempty"` // at most 20
}

// Exclusions groups the excluded questions by database and reason, in
// order of first appearance.
func (d *Dataset) Exclusions() []Exclusion {
	var l exclusionList
	for _, q := range d.Questions {
		if q.Excluded != "" {
			l.add(q.DB, q.Excluded, q.ID)
		}
	}
	return l.list
}

// maxExclusionIDs is how many question IDs an Exclusion lists: enough to
// look a few up, short enough for a report.
const maxExclusionIDs = 20

// exclusionList groups excluded questions by database and reason, in
// order of first appearance.
type exclusionList struct {
	list []Exclusion
	idx  map[string]int // index in list by database and reason
}

// add counts question id of database db, excluded for reason.
func (l *exclusionList) add(db, reason, id string) {
	k := db + "\x00" + reason
	i, ok := l.idx[k]
	if !ok {
		if l.idx == nil {
			l.idx = map[string]int{}
		}
		i = len(l.list)
		l.idx[k] = i
		l.list = append(l.list, Exclusion{Reason: reason, DB: db})
	}
	l.list[i].Count++
	if len(l.list[i].IDs) < maxExclusionIDs {
		l.list[i].IDs = append(l.list[i].IDs, id)
	}
}

// SpiderPaths locates the files of a Spider-format dataset. Empty fields
// take their defaults under Dir.
type SpiderPaths struct {
	Dir       string // the dataset folder
	Questions string // default Dir/dev.json
	Tables    string // default Dir/tables.json (optional: used when present)
	DBDir     string // default Dir/database
}

// LoadSpider loads a Spider-format dataset: the questions file (a JSON
// array of {db_id, question, query, sql}), tables.json when present, and
// the database folder, where database <db> is <DBDir>/<db>/<db>.sqlite.
// Questions whose database file is missing are Excluded with the reason.
// Difficulty is SpiderHardness of each item's "sql" object, or
// SpiderHardnessOfSQL of its query when it has none. Errors wrap
// ErrDataset.
func LoadSpider(p SpiderPaths) (*Dataset, error) {
	if p.Questions == "" {
		p.Questions = filepath.Join(p.Dir, "dev.json")
	}
	if p.Tables == "" {
		if t := filepath.Join(p.Dir, "tables.json"); fileExists(t) {
			p.Tables = t
		}
	}
	if p.DBDir == "" {
		p.DBDir = filepath.Join(p.Dir, "database")
	}
	raw, err := os.ReadFile(p.Questions)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrDataset, err)
	}
	var items []struct {
		DBID     string `json:"db_id"`
		Question string `json:"question"`
		Query    string `json:"query"`
		SQL      any    `json:"sql"`
	}
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrDataset, p.Questions, err)
	}
	if len(items) == 0 {
		return nil, fmt.Errorf("%w: %s has no questions", ErrDataset, p.Questions)
	}
	ds := &Dataset{Name: datasetName(p.Questions), Format: FormatSpider, Mode: accuracy.ModeSpider, Rewrite: true,
		Databases: map[string]*Database{}, Tables: p.Tables}
	for i, it := range items {
		if it.DBID == "" || strings.TrimSpace(it.Query) == "" {
			return nil, fmt.Errorf("%w: %s: item %d has no db_id or query", ErrDataset, p.Questions, i)
		}
		q := Question{ID: strconv.Itoa(i), Index: i, DB: it.DBID, Question: it.Question, GoldSQL: it.Query, Difficulty: Unknown}
		if it.SQL != nil {
			if h, err := spiderHardness(it.SQL); err == nil {
				q.Difficulty = h
			}
		}
		if q.Difficulty == Unknown {
			q.Difficulty = SpiderHardnessOfSQL(it.Query)
		}
		ds.addDB(it.DBID, filepath.Join(p.DBDir, it.DBID, it.DBID+".sqlite"))
		ds.Questions = append(ds.Questions, q)
	}
	ds.exclude()
	return ds, nil
}

// BIRDPaths locates the files of a BIRD-format dataset. Empty fields take
// their defaults under Dir.
type BIRDPaths struct {
	Dir string // the dataset folder
	// Questions defaults to the first of Dir/mini_dev_sqlite.json and
	// Dir/dev.json that exists.
	Questions string
	// Tables defaults to Dir/dev_tables.json.
	Tables string
	// DBDir defaults to the first of Dir/dev_databases, Dir/databases and
	// Dir/database that exists; database <db> is <DBDir>/<db>/<db>.sqlite.
	DBDir string
}

// LoadBIRD loads a BIRD-format dataset: the questions (a JSON array or
// JSON lines of {question_id, db_id, question, evidence, SQL,
// difficulty}), dev_tables.json and the database folder. Question IDs are
// positions ("0", "1", …), the keys of BIRD prediction files; SourceID is
// question_id. The BIRD databases are not distributed with the questions:
// without them every question is Excluded with a reason saying results
// cannot be compared. Errors wrap ErrDataset.
func LoadBIRD(p BIRDPaths) (*Dataset, error) {
	if p.Questions == "" {
		for _, name := range []string{"mini_dev_sqlite.json", "dev.json"} {
			if f := filepath.Join(p.Dir, name); fileExists(f) {
				p.Questions = f
				break
			}
		}
		if p.Questions == "" {
			return nil, fmt.Errorf("%w: no mini_dev_sqlite.json or dev.json in %s", ErrDataset, p.Dir)
		}
	}
	if p.Tables == "" {
		if t := filepath.Join(p.Dir, "dev_tables.json"); fileExists(t) {
			p.Tables = t
		}
	}
	if p.DBDir == "" {
		p.DBDir = filepath.Join(p.Dir, "dev_databases")
		for _, name := range []string{"dev_databases", "databases", "database"} {
			if d := filepath.Join(p.Dir, name); dirExists(d) {
				p.DBDir = d
				break
			}
		}
	}
	raw, err := os.ReadFile(p.Questions)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrDataset, err)
	}
	type item struct {
		QuestionID json.Number `json:"question_id"`
		DBID       string      `json:"db_id"`
		Question   string      `json:"question"`
		Evidence   string      `json:"evidence"`
		SQL        string      `json:"SQL"`
		Difficulty string      `json:"difficulty"`
	}
	var items []item
	trim := bytes.TrimSpace(raw)
	if len(trim) > 0 && trim[0] == '[' {
		if err := json.Unmarshal(trim, &items); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrDataset, p.Questions, err)
		}
	} else {
		for n, line := range bytes.Split(trim, []byte("\n")) {
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			var it item
			if err := json.Unmarshal(line, &it); err != nil {
				return nil, fmt.Errorf("%w: %s:%d: %v", ErrDataset, p.Questions, n+1, err)
			}
			items = append(items, it)
		}
	}
	if len(items) == 0 {
		return nil, fmt.Errorf("%w: %s has no questions", ErrDataset, p.Questions)
	}
	ds := &Dataset{Name: datasetName(p.Questions), Format: FormatBIRD, Mode: accuracy.ModeBIRD, Databases: map[string]*Database{}, Tables: p.Tables}
	for i, it := range items {
		if it.DBID == "" || strings.TrimSpace(it.SQL) == "" {
			return nil, fmt.Errorf("%w: %s: item %d has no db_id or SQL", ErrDataset, p.Questions, i)
		}
		diff := strings.ToLower(strings.TrimSpace(it.Difficulty))
		if diff == "" {
			diff = Unknown
		}
		ds.Questions = append(ds.Questions, Question{ID: strconv.Itoa(i), SourceID: it.QuestionID.String(), Index: i, DB: it.DBID,
			Question: it.Question, Evidence: it.Evidence, GoldSQL: it.SQL, Difficulty: diff})
		ds.addDB(it.DBID, filepath.Join(p.DBDir, it.DBID, it.DBID+".sqlite"))
	}
	ds.exclude()
	return ds, nil
}

func schemaOnlyNote(tables string) string {
	return "the BIRD databases are not distributed with " + filepath.Base(tables) +
		", which holds schemas only, no rows: results cannot be compared (give the database folder with --db-dir)"
}

// addDB records database id at path once, noting it missing when the file
// does not exist.
func (d *Dataset) addDB(id, path string) {
	if _, ok := d.Databases[id]; ok {
		return
	}
	db := &Database{ID: id, Path: path}
	if !fileExists(path) {
		db.Missing = "database file " + path + " not found"
		if d.Format == FormatBIRD {
			db.Missing += "; " + schemaOnlyNote(d.Tables)
		}
	}
	d.Databases[id] = db
}

// exclude marks the questions of missing databases.
func (d *Dataset) exclude() {
	for i := range d.Questions {
		q := &d.Questions[i]
		if db := d.Databases[q.DB]; db == nil {
			q.Excluded = "unknown database " + q.DB
		} else if db.Missing != "" {
			q.Excluded = db.Missing
		}
	}
}

func loadTables(path string) (map[string]*birdschema.Schema, error) {
	out := map[string]*birdschema.Schema{}
	if path == "" {
		return out, nil
	}
	list, err := birdschema.Load(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrDataset, err)
	}
	for i := range list {
		out[list[i].DBID] = &list[i]
	}
	return out, nil
}

func datasetName(questions string) string {
	dir := filepath.Base(filepath.Dir(questions))
	base := strings.TrimSuffix(filepath.Base(questions), filepath.Ext(questions))
	return dir + "/" + base
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

func dirExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// fileFormat is the shape of a LoadFile dataset.
type fileFormat struct {
	Name      string         `json:"name" yaml:"name"`
	Database  string         `json:"database" yaml:"database"`
	Mode      string         `json:"mode" yaml:"mode"`
	Questions []fileQuestion `json:"questions" yaml:"questions"`
}

type fileQuestion struct {
	ID         string   `json:"id" yaml:"id"`
	Question   string   `json:"question" yaml:"question"`
	Evidence   string   `json:"evidence" yaml:"evidence"`
	SQL        string   `json:"sql" yaml:"sql"`
	Rows       [][]any  `json:"rows" yaml:"rows"`
	Columns    []string `json:"columns" yaml:"columns"`
	Ordered    bool     `json:"ordered" yaml:"ordered"`
	Database   string   `json:"database" yaml:"database"`
	Difficulty string   `json:"difficulty" yaml:"difficulty"`
}

// LoadFile loads a dataset in this package's own format, YAML (.yaml,
// .yml) or JSON (.json):
//
//	name: registrar            # optional
//	database: registrar.sqlite # default database, relative to the file
//	mode: spider               # optional: spider (default), bird or strict
//	questions:
//	  - id: q1                 # optional, default the position
//	    question: How many students are there?
//	    sql: SELECT count(*) FROM students        # gold SQL, or:
//	  - question: Which rooms are free?
//	    rows: [["A101"], ["B7"]]                  # expected rows
//	    columns: [room]                           # optional
//	    ordered: false                            # compare in sequence
//	    database: other.sqlite                    # per-question database
//	    difficulty: easy                          # optional label (default: the
//	                                              # Spider hardness of sql)
//
// Each question needs a question text and exactly one of sql and rows.
// A question whose database file is missing is Excluded. Errors (unknown
// fields, duplicate IDs, no database) wrap ErrDataset.
func LoadFile(path string) (*Dataset, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrDataset, err)
	}
	var f fileFormat
	switch strings.ToLower(filepath.Ext(path)) {
	case ".yaml", ".yml":
		if err := decodeYAML(raw, &f); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrDataset, path, err)
		}
	case ".json":
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		dec.UseNumber()
		if err := dec.Decode(&f); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrDataset, path, err)
		}
	default:
		return nil, fmt.Errorf("%w: %s: unknown extension (want .yaml, .yml or .json)", ErrDataset, path)
	}
	if len(f.Questions) == 0 {
		return nil, fmt.Errorf("%w: %s has no questions", ErrDataset, path)
	}
	mode := accuracy.ModeSpider
	if f.Mode != "" {
		if mode, err = accuracy.ParseMode(f.Mode); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrDataset, path, err)
		}
	}
	name := f.Name
	if name == "" {
		name = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	}
	ds := &Dataset{Name: name, Format: FormatFile, Mode: mode, Databases: map[string]*Database{}}
	base := filepath.Dir(path)
	seen := map[string]bool{}
	for i, fq := range f.Questions {
		id := strings.TrimSpace(fq.ID)
		if id == "" {
			id = strconv.Itoa(i)
		}
		if seen[id] {
			return nil, fmt.Errorf("%w: %s: duplicate question id %q", ErrDataset, path, id)
		}
		seen[id] = true
		if strings.TrimSpace(fq.Question) == "" {
			return nil, fmt.Errorf("%w: %s: question %s has no question text", ErrDataset, path, id)
		}
		hasSQL, hasRows := strings.TrimSpace(fq.SQL) != "", fq.Rows != nil
		if hasSQL == hasRows {
			return nil, fmt.Errorf("%w: %s: question %s needs exactly one of sql and rows", ErrDataset, path, id)
		}
		dbName := fq.Database
		if dbName == "" {
			dbName = f.Database
		}
		if dbName == "" {
			return nil, fmt.Errorf("%w: %s: question %s has no database (set database at the top or on the question)", ErrDataset, path, id)
		}
		dbPath := dbName
		if !filepath.IsAbs(dbPath) {
			dbPath = filepath.Join(base, dbPath)
		}
		diff := strings.TrimSpace(fq.Difficulty)
		switch {
		case diff == "" && hasSQL:
			diff = SpiderHardnessOfSQL(fq.SQL)
		case diff == "":
			diff = Unknown
		}
		q := Question{ID: id, Index: i, DB: dbName, Question: fq.Question, Evidence: fq.Evidence, GoldSQL: fq.SQL, Difficulty: diff}
		if hasRows {
			q.Expected = &Expected{Columns: fq.Columns, Rows: normalizeRows(fq.Rows), Ordered: fq.Ordered}
		}
		ds.addDB(dbName, dbPath)
		ds.Questions = append(ds.Questions, q)
	}
	ds.exclude()
	return ds, nil
}

func decodeYAML(raw []byte, v any) (err error) {
	defer func() {
		// A third-party decoder: a panic on hostile input must not take
		// the host down.
		if r := recover(); r != nil {
			err = fmt.Errorf("malformed YAML (%v)", r)
		}
	}()
	return yaml.UnmarshalWithOptions(raw, v, yaml.Strict(), yaml.UseOrderedMap())
}

// normalizeRows turns decoded YAML/JSON cells into the values an executor
// returns where they differ: integers become int64 (json.Number and the
// YAML decoder's uint64 included, when they fit), nested values text.
func normalizeRows(rows [][]any) [][]any {
	for _, r := range rows {
		for i, v := range r {
			switch x := v.(type) {
			case json.Number:
				if n, err := x.Int64(); err == nil {
					r[i] = n
				} else if f, err := x.Float64(); err == nil && strconv.FormatFloat(f, 'g', -1, 64) == x.String() {
					r[i] = f
				}
			case uint64:
				if x <= 1<<63-1 {
					r[i] = int64(x)
				}
			case int:
				r[i] = int64(x)
			case bool:
				if x {
					r[i] = int64(1)
				} else {
					r[i] = int64(0)
				}
			case map[string]any, []any, yaml.MapSlice:
				b, _ := json.Marshal(x)
				r[i] = string(b)
			}
		}
	}
	return rows
}

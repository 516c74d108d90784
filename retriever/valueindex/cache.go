package valueindex

import (
	"encoding/gob"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/text2sql-go/text2sql/internal/fingerprint"
)

// Layout is the version of the index and of its cache file. It enters
// CacheKey: changing it rebuilds every cached index.
const Layout = "text2sql/valueindex/v1"

// ErrCacheMiss is wrapped by Load's errors when the cache cannot serve the
// key: no file, a file for another key (the schema, the data or the
// options changed) or of another layout, or a file that does not decode.
var ErrCacheMiss = errors.New("valueindex: cache miss")

// CacheKey returns the hex SHA-256 (64 characters) of what an index
// depends on: Layout, the schema's fingerprint (e.g.
// retriever.SchemaFingerprint), the data version (e.g. an executor's
// DataVersion: the index is rebuilt when the data changes) and the
// bounds and tables of opts. Options.Skip and Progress are not part of it:
// a caller with a Skip rule folds its own version of it into
// schemaFingerprint.
func CacheKey(schemaFingerprint, dataVersion string, opts Options) string {
	o := opts.withDefaults()
	w := fingerprint.New()
	w.Str(Layout, schemaFingerprint, dataVersion)
	for _, n := range []int{o.MaxPerColumn, o.MaxValues, o.MaxBytes, o.MaxLength} {
		w.Str(strconv.Itoa(n))
	}
	w.List(o.Tables)
	return w.Hex()
}

// cacheFile is what Save writes, gob-encoded: each column's values, from
// which Load builds the index again (trigram postings are cheaper to
// rebuild than to store).
type cacheFile struct {
	Layout, Key string
	Tables      []string
	Columns     []string
	Values      [][]string // per column
	Stats       Stats
}

// Save writes ix to path under key, atomically (a temporary file in the
// same directory, renamed), creating the directory. Errors are the file
// system's, wrapped.
func (ix *Index) Save(path, key string) error {
	f := cacheFile{Layout: Layout, Key: key, Stats: ix.Stats()}
	if ix != nil {
		byCol := make([][]string, len(ix.cols))
		for _, e := range ix.entries {
			byCol[e.col] = append(byCol[e.col], ix.vals[e.val])
		}
		for i, c := range ix.cols {
			f.Tables, f.Columns = append(f.Tables, c.table), append(f.Columns, c.name)
			slices.Sort(byCol[i])
			f.Values = append(f.Values, byCol[i])
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("valueindex: save: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("valueindex: save: %w", err)
	}
	defer os.Remove(tmp.Name()) // after the rename, a no-op
	if err := gob.NewEncoder(tmp).Encode(&f); err != nil {
		tmp.Close()
		return fmt.Errorf("valueindex: save %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("valueindex: save %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("valueindex: save: %w", err)
	}
	return nil
}

// Load reads the index Save wrote to path under key. Errors wrap
// ErrCacheMiss when the file is missing, was written under another key
// or layout, or does not decode; other errors are the file system's
// (permissions), wrapped.
func Load(path, key string) (*Index, error) {
	fh, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: no %s", ErrCacheMiss, path)
	}
	if err != nil {
		return nil, fmt.Errorf("valueindex: load: %w", err)
	}
	defer fh.Close()
	var f cacheFile
	if err := gob.NewDecoder(fh).Decode(&f); err != nil {
		return nil, fmt.Errorf("%w: %s does not decode: %v", ErrCacheMiss, path, err)
	}
	if f.Layout != Layout || f.Key != key {
		return nil, fmt.Errorf("%w: %s holds another index (layout %q)", ErrCacheMiss, path, f.Layout)
	}
	if len(f.Tables) != len(f.Columns) || len(f.Tables) != len(f.Values) {
		return nil, fmt.Errorf("%w: %s is inconsistent", ErrCacheMiss, path)
	}
	// The values were bounded when read: rebuild without bounds.
	b := &Builder{opts: Options{MaxPerColumn: int(^uint32(0) >> 1), MaxValues: int(^uint32(0) >> 1), MaxBytes: int(^uint32(0) >> 1), MaxLength: f.maxLength()}}
	for i := range f.Tables {
		b.Add(f.Tables[i], f.Columns[i], f.Values[i]...)
	}
	ix := b.Index()
	ix.stats.Truncated, ix.stats.Skipped, ix.stats.Full = f.Stats.Truncated, f.Stats.Skipped, f.Stats.Full
	return ix, nil
}

// maxLength is the longest value of the file, in bytes (at least its
// runes), so that Load keeps every value Save wrote.
func (f *cacheFile) maxLength() int {
	n := 1
	for _, vs := range f.Values {
		for _, v := range vs {
			n = max(n, len(v))
		}
	}
	return n
}

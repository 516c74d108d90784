package retriever

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gofrs/flock"
	chromem "github.com/philippgille/chromem-go"
	text2sql "github.com/text2sql-go/text2sql"
)

// Names of the chromem-go collections a ChromemStore uses.
const (
	chromemDocs = "text2sql-index"
	chromemMeta = "text2sql-index-meta"
	markerID    = "index"
)

// Files of a ChromemStore's directory.
const (
	// IndexFile is the committed index: chromem-go's export of the
	// documents and the fingerprint (gob), then a trailer of indexMagic,
	// the payload's length (8 bytes, big endian) and its SHA-256 (32
	// bytes). It is replaced whole, by rename, never written in place.
	IndexFile = "index.gob"
	// LockFile is the file builders lock (flock(2)) while they build and
	// commit; it is never removed, which would let two builders lock two
	// different files.
	LockFile = "index.lock"
	// tempPrefix starts the names of index files being written; one left
	// by a killed builder is removed by the next one to lock the directory.
	tempPrefix = IndexFile + ".tmp-"
)

// indexMagic opens the trailer of IndexFile and names its layout: a file
// of another layout is read as damaged and rebuilt.
var indexMagic = [8]byte{'t', '2', 's', 'i', 'd', 'x', 0, 1}

// trailerSize is the length of IndexFile's trailer: magic, payload length,
// SHA-256.
const trailerSize = len(indexMagic) + 8 + sha256.Size

// DefaultLockWait is how long a ChromemStore waits for another process's
// build of the same directory before failing with ErrIndexLocked: more
// than a first build with a remote embedder of a large schema takes.
const DefaultLockWait = 10 * time.Minute

// lockRetry is how often a waiting builder tries the lock again: short
// next to a build (a 1,000-table schema builds in about 0.3 s with the
// hashing embedder), so the waiter goes on soon after the build ends.
const lockRetry = 20 * time.Millisecond

var (
	// ErrIndexDamaged is wrapped by ChromemStore.Recovered when the index
	// file could not be used: truncated, overwritten, of another layout.
	ErrIndexDamaged = errors.New("retriever: index damaged")
	// ErrIndexLocked is wrapped by LockBuild (and so by NewHybrid) when
	// another process held the directory's build lock for longer than
	// the store's lock wait.
	ErrIndexLocked = errors.New("retriever: index locked by another build")
)

// errChromemEmbed is returned by the embedding function given to chromem-go:
// the retriever always passes its own vectors, so chromem must never embed.
var errChromemEmbed = errors.New("retriever: chromem store: embedding by chromem-go is disabled; vectors come from the retriever's Embedder")

func refuseEmbedding(context.Context, string) ([]float32, error) { return nil, errChromemEmbed }

// commitPhase, when set (by tests), is called at each step of a commit:
// "written" (payload and trailer in the temporary file, not synced),
// "synced" (before the rename) and "renamed" (before the directory is
// synced), so a test can kill the process there.
var commitPhase func(phase string)

// ChromemStore is the default persistent Store: a chromem-go
// (github.com/philippgille/chromem-go) in-memory database, searched
// exhaustively by cosine similarity, committed to one file, IndexFile, in
// a directory. It holds two collections: "text2sql-index" with the
// documents (metadata "kind") and "text2sql-index-meta" whose marker
// document holds the fingerprint.
//
// Add and Reset change only the memory; SetFingerprint commits: it writes
// the whole index to a temporary file in the directory, syncs it, renames
// it over IndexFile and syncs the directory. A process killed at any point
// leaves the previous index or the new one, never a mix, and readers
// never see a partial file. A file that is damaged anyway (a disk fault,
// an overwrite) fails its checksum at open: the store opens empty, and
// Recovered says why, so the retriever rebuilds it.
//
// Several processes may open one directory (replicas on a shared volume,
// parallel CLI runs): readers need no lock, and builders serialise on
// LockFile through LockBuild, which NewHybrid calls before it builds, so
// the index is built once and the others reuse it. The lock is flock(2),
// which some network filesystems do not honour.
//
// One directory holds one index: give each database its own directory.
// ChromemStore is safe for concurrent use.
type ChromemStore struct {
	dir      string
	lockWait time.Duration

	mu        sync.RWMutex
	db        *chromem.DB
	col       *chromem.Collection
	fp        string      // committed or loaded fingerprint; "" after Reset
	dim       int         // vector length of the stored documents, 0 when unknown
	loaded    fs.FileInfo // the IndexFile read into memory, nil when none
	recovered error       // why the last IndexFile read was discarded; nil when it was read or missing
}

var (
	_ Store       = (*ChromemStore)(nil)
	_ BuildLocker = (*ChromemStore)(nil)
)

// OpenChromem opens, or creates, the index in dir (created with mode 0700
// if missing) and reads IndexFile into memory. The index is derived data,
// so an IndexFile that cannot be used (truncated, overwritten, failing
// its checksum, undecodable) is not an error: the store opens empty, the
// retriever rebuilds it, and Recovered returns the reason wrapping
// ErrIndexDamaged. The per-collection directories of earlier versions
// are ignored, and removed at the next commit. OpenChromem fails when dir
// is empty or is not a directory, or when IndexFile cannot be read at all
// (permissions).
func OpenChromem(dir string) (*ChromemStore, error) {
	if dir == "" {
		return nil, fmt.Errorf("%w: retriever: chromem store: empty directory", text2sql.ErrInvalidConfig)
	}
	if st, err := os.Stat(dir); err == nil && !st.IsDir() {
		return nil, fmt.Errorf("retriever: chromem store %s: not a directory", dir)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("retriever: chromem store: %w", err)
	}
	s := &ChromemStore{dir: dir, lockWait: DefaultLockWait}
	if err := s.load(); err != nil {
		return nil, err
	}
	return s, nil
}

// SetLockWait sets how long LockBuild waits for another builder; 0 means
// DefaultLockWait, a negative value fails at once when the lock is taken.
// Call it before the store is used.
func (s *ChromemStore) SetLockWait(d time.Duration) {
	if d == 0 {
		d = DefaultLockWait
	}
	s.lockWait = d
}

// Recovered returns why the index file found in the directory was
// discarded (an error wrapping ErrIndexDamaged), at open or when
// LockBuild read it again, or nil when it was read as it was or there was
// none. It stays set after the rebuild. Hosts warn with it: the index is
// rebuilt, which takes the time of a first build.
func (s *ChromemStore) Recovered() error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.recovered
}

// Dir returns the directory of the index.
func (s *ChromemStore) Dir() string { return s.dir }

// load replaces the memory with IndexFile's contents, or with an empty
// index when the file is missing or damaged (recorded in s.recovered).
// The caller holds s.mu or owns s.
func (s *ChromemStore) load() error {
	path := filepath.Join(s.dir, IndexFile)
	s.recovered = nil
	s.loaded = nil
	s.reset()
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("retriever: chromem store: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("retriever: chromem store: %w", err)
	}
	// Read into a buffer of the file's size: io.ReadAll grows its own by
	// copying, 50 MB of copies for the 25 MB index of 10,000 tables.
	var buf bytes.Buffer
	buf.Grow(int(st.Size()) + bytes.MinRead)
	if _, err := buf.ReadFrom(f); err != nil {
		return fmt.Errorf("retriever: chromem store: %w", err)
	}
	data := buf.Bytes()
	s.loaded = st
	db, err := decodeIndex(data)
	if err != nil {
		s.recovered = fmt.Errorf("%w: %s: %v", ErrIndexDamaged, path, err)
		return nil
	}
	col := db.GetCollection(chromemDocs, refuseEmbedding)
	meta := db.GetCollection(chromemMeta, refuseEmbedding)
	if col == nil || meta == nil {
		s.recovered = fmt.Errorf("%w: %s: collections missing", ErrIndexDamaged, path)
		return nil
	}
	marker, err := meta.GetByID(context.Background(), markerID)
	if err != nil {
		s.recovered = fmt.Errorf("%w: %s: no fingerprint", ErrIndexDamaged, path)
		return nil
	}
	n, err1 := strconv.Atoi(marker.Metadata["documents"])
	dim, err2 := strconv.Atoi(marker.Metadata["dimension"])
	if err1 != nil || err2 != nil || n != col.Count() {
		s.recovered = fmt.Errorf("%w: %s: %d documents, the fingerprint records %q", ErrIndexDamaged, path, col.Count(), marker.Metadata["documents"])
		return nil
	}
	s.db, s.col, s.fp, s.dim = db, col, marker.Metadata["fingerprint"], dim
	return nil
}

// decodeIndex checks IndexFile's trailer and checksum and decodes the
// payload.
func decodeIndex(data []byte) (*chromem.DB, error) {
	if len(data) < trailerSize {
		return nil, fmt.Errorf("%d bytes, shorter than the %d-byte trailer (truncated)", len(data), trailerSize)
	}
	payload, trailer := data[:len(data)-trailerSize], data[len(data)-trailerSize:]
	if !bytes.Equal(trailer[:len(indexMagic)], indexMagic[:]) {
		return nil, errors.New("no trailer (truncated, overwritten, or another layout)")
	}
	if n := binary.BigEndian.Uint64(trailer[len(indexMagic):]); n != uint64(len(payload)) {
		return nil, fmt.Errorf("the trailer records %d bytes of payload, the file holds %d", n, len(payload))
	}
	if sum := sha256.Sum256(payload); !bytes.Equal(sum[:], trailer[len(indexMagic)+8:]) {
		return nil, errors.New("checksum mismatch (overwritten)")
	}
	db := chromem.NewDB()
	if err := db.ImportFromReader(bytes.NewReader(payload), ""); err != nil {
		return nil, err
	}
	return db, nil
}

// reset empties the memory. The caller holds s.mu or owns s.
func (s *ChromemStore) reset() {
	s.db = chromem.NewDB()
	// Cannot fail: the name is not empty and the database is new.
	s.col, _ = s.db.CreateCollection(chromemDocs, nil, refuseEmbedding)
	s.fp, s.dim = "", 0
}

// LockBuild implements BuildLocker: it waits, up to the lock wait
// (DefaultLockWait unless SetLockWait), for LockFile, removes temporary
// files left by killed builders, and reloads IndexFile when another
// process replaced it since it was read, so Fingerprint then says
// whether that process already built what the caller needs. Release
// unlocks. A wait that times out returns an error wrapping
// ErrIndexLocked; a cancelled ctx returns its error.
func (s *ChromemStore) LockBuild(ctx context.Context) (release func(), err error) {
	lock := flock.New(filepath.Join(s.dir, LockFile), flock.SetPermissions(0o600))
	wait := ctx
	if s.lockWait > 0 {
		var cancel context.CancelFunc
		wait, cancel = context.WithTimeout(ctx, s.lockWait)
		defer cancel()
	}
	ok, err := lock.TryLock()
	if err == nil && !ok && s.lockWait > 0 {
		ok, err = lock.TryLockContext(wait, lockRetry)
	}
	switch {
	case err != nil && ctx.Err() != nil:
		return nil, ctx.Err()
	case err != nil && !errors.Is(err, context.DeadlineExceeded):
		return nil, fmt.Errorf("retriever: chromem store: lock %s: %w", lock.Path(), err)
	case !ok || err != nil:
		return nil, fmt.Errorf("%w: %s held for more than %v", ErrIndexLocked, lock.Path(), max(s.lockWait, 0))
	}
	release = func() { _ = lock.Unlock() } // closing the descriptor releases the lock in any case
	if err := s.afterLock(); err != nil {
		release()
		return nil, err
	}
	return release, nil
}

// afterLock cleans up after killed builders and reads what another
// builder committed.
func (s *ChromemStore) afterLock() error {
	stale, err := filepath.Glob(filepath.Join(s.dir, tempPrefix+"*"))
	if err != nil {
		return fmt.Errorf("retriever: chromem store: %w", err)
	}
	for _, f := range stale {
		if err := os.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("retriever: chromem store: %w", err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st, err := os.Stat(filepath.Join(s.dir, IndexFile))
	switch {
	case errors.Is(err, fs.ErrNotExist) && s.loaded == nil:
		return nil
	case err == nil && s.loaded != nil && os.SameFile(st, s.loaded):
		return nil // what was read is still the committed index
	}
	recovered := s.recovered
	if err := s.load(); err != nil {
		return err
	}
	// The damage found at open still explains the rebuild to come.
	s.recovered = cmp.Or(s.recovered, recovered)
	return nil
}

// Add implements Store. Documents stay in memory until SetFingerprint.
func (s *ChromemStore) Add(ctx context.Context, records []Record) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	docs := make([]chromem.Document, 0, len(records))
	for _, r := range records {
		n2, err := checkRecord("chromem store", r, &s.dim)
		if err != nil {
			return err
		}
		if n2 == 0 {
			continue // chromem would divide by zero
		}
		v := make([]float32, len(r.Vector))
		inv := 1 / math.Sqrt(n2)
		for i, x := range r.Vector {
			v[i] = float32(float64(x) * inv)
		}
		docs = append(docs, chromem.Document{
			ID:        r.ID,
			Metadata:  map[string]string{"kind": string(r.Kind)},
			Embedding: v,
			Content:   r.Text,
		})
	}
	if len(docs) == 0 {
		return nil
	}
	// chromem-go adds a batch's documents concurrently: of two with one
	// ID, either could win. Keep the last, as sequential adds would.
	last := make(map[string]int, len(docs))
	for i, d := range docs {
		last[d.ID] = i
	}
	if len(last) < len(docs) {
		kept := docs[:0]
		for i, d := range docs {
			if last[d.ID] == i {
				kept = append(kept, d)
			}
		}
		docs = kept
	}
	if err := s.col.AddDocuments(ctx, docs, max(1, runtime.GOMAXPROCS(0))); err != nil {
		return fmt.Errorf("retriever: chromem store: %w", err)
	}
	return nil
}

// Query implements Store. Hits of equal similarity come in ascending ID
// order.
func (s *ChromemStore) Query(ctx context.Context, vector []float32, k int, kind text2sql.ItemKind) ([]Hit, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	n := s.col.Count()
	if _, ok, err := checkQuery("chromem store", vector, s.dim, k, n); !ok {
		return nil, err
	}
	var where map[string]string
	if kind != "" {
		where = map[string]string{"kind": string(kind)}
	}
	// chromem-go orders equal similarities as its goroutines finish, so
	// fetch past the k-th hit until the last one fetched scores below it
	// (every record tied with the k-th is then in res), sort ties by ID
	// and cut to k: the order of ties is then deterministic.
	var res []chromem.Result
	for m := min(k, n-1) + 1; ; m = min(2*m, n) {
		var err error
		res, err = s.col.QueryEmbedding(ctx, vector, m, where, nil)
		if err != nil {
			return nil, fmt.Errorf("retriever: chromem store: %w", err)
		}
		if len(res) < m || m == n || len(res) <= k || res[len(res)-1].Similarity < res[k-1].Similarity {
			break
		}
	}
	slices.SortStableFunc(res, func(a, b chromem.Result) int {
		if c := cmp.Compare(b.Similarity, a.Similarity); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	hits := make([]Hit, 0, min(k, len(res)))
	for _, r := range res {
		sim := float64(r.Similarity)
		if math.IsNaN(sim) {
			continue
		}
		if len(hits) == k {
			break
		}
		hits = append(hits, Hit{ID: r.ID, Kind: text2sql.ItemKind(r.Metadata["kind"]), Similarity: max(-1, min(1, sim))})
	}
	return hits, nil
}

// Count implements Store.
func (s *ChromemStore) Count(ctx context.Context) (int, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.col.Count(), nil
}

// Fingerprint implements Store: the fingerprint of the index read at
// open (or by LockBuild) or last committed, "" when there is none or
// documents were added or reset since.
func (s *ChromemStore) Fingerprint(ctx context.Context) (string, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.fp, nil
}

// SetFingerprint implements Store: it records fp, the document count and
// the vector dimension with the documents and commits the index to
// IndexFile (see ChromemStore). Collection directories of earlier
// versions are then removed.
func (s *ChromemStore) SetFingerprint(ctx context.Context, fp string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.db.DeleteCollection(chromemMeta); err != nil {
		return fmt.Errorf("retriever: chromem store: %w", err)
	}
	md := map[string]string{"fingerprint": fp, "documents": strconv.Itoa(s.col.Count()), "dimension": strconv.Itoa(s.dim)}
	meta, err := s.db.CreateCollection(chromemMeta, nil, refuseEmbedding)
	if err != nil {
		return fmt.Errorf("retriever: chromem store: %w", err)
	}
	if err := meta.AddDocument(ctx, chromem.Document{ID: markerID, Metadata: md, Embedding: []float32{1}, Content: fp}); err != nil {
		return fmt.Errorf("retriever: chromem store: %w", err)
	}
	st, err := s.commit()
	if err != nil {
		return fmt.Errorf("retriever: chromem store: commit %s: %w", filepath.Join(s.dir, IndexFile), err)
	}
	s.fp, s.loaded = fp, st
	if err := removeCollections(s.dir); err != nil {
		return fmt.Errorf("retriever: chromem store: remove the earlier layout: %w", err)
	}
	return nil
}

// commit writes the memory to IndexFile atomically and returns the new
// file's information.
func (s *ChromemStore) commit() (fs.FileInfo, error) {
	phase := func(p string) {
		if commitPhase != nil {
			commitPhase(p)
		}
	}
	f, err := os.CreateTemp(s.dir, tempPrefix+"*")
	if err != nil {
		return nil, err
	}
	tmp := f.Name()
	done := false
	defer func() {
		if !done {
			f.Close()
			os.Remove(tmp)
		}
	}()
	sum := sha256.New()
	w := &countWriter{w: io.MultiWriter(f, sum)}
	buf := bufio.NewWriterSize(w, 1<<20)
	// Uncompressed: vectors barely compress, and gzip would triple the
	// time of a commit and of every open.
	if err := s.db.ExportToWriter(buf, false, ""); err != nil {
		return nil, err
	}
	if err := buf.Flush(); err != nil {
		return nil, err
	}
	trailer := make([]byte, 0, trailerSize)
	trailer = append(trailer, indexMagic[:]...)
	trailer = binary.BigEndian.AppendUint64(trailer, uint64(w.n))
	trailer = sum.Sum(trailer)
	if _, err := f.Write(trailer); err != nil {
		return nil, err
	}
	phase("written")
	if err := f.Sync(); err != nil {
		return nil, err
	}
	phase("synced")
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	if err := os.Rename(tmp, filepath.Join(s.dir, IndexFile)); err != nil {
		return nil, err
	}
	done = true
	phase("renamed")
	// The rename is durable once the directory is synced.
	d, err := os.Open(s.dir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return st, d.Sync()
}

// countWriter counts the bytes written through it.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// removeCollections removes the collection directories earlier versions
// kept in dir (chromem-go's persistent layout: a directory per
// collection, named by the first 4 bytes of the SHA-256 of its name in
// hex), and nothing else: dir may be one the user named.
func removeCollections(dir string) error {
	for _, name := range []string{chromemDocs, chromemMeta} {
		sum := sha256.Sum256([]byte(name))
		if err := os.RemoveAll(filepath.Join(dir, hex.EncodeToString(sum[:4]))); err != nil {
			return err
		}
	}
	return nil
}

// Reset implements Store: it empties the memory; IndexFile stays as it
// is until the next commit.
func (s *ChromemStore) Reset(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reset()
	return nil
}

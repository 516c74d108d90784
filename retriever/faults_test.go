package retriever

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofrs/flock"
	chromem "github.com/philippgille/chromem-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/internal/birdschema"
	"github.com/text2sql-go/text2sql/internal/shareddata"
	"github.com/text2sql-go/text2sql/schema"
)

// The index fault tests build the index of the Spider catalog (all 166
// schemas of tables.json, 876 tables, one namespace each) in real child
// processes: the test binary run again with helperDir set, in
// TestIndexHelperProcess.
const (
	helperDir   = "TEXT2SQL_INDEX_HELPER_DIR"   // the index directory; unset: not a helper
	helperPause = "TEXT2SQL_INDEX_HELPER_PAUSE" // a phase to stop at: "embedded" or a commitPhase
	helperDim   = "TEXT2SQL_INDEX_HELPER_DIM"   // the hashing embedder's dimension, "" for the default
	helperWait  = "TEXT2SQL_INDEX_HELPER_WAIT"  // the lock wait, a time.Duration; "" for the default
)

// pausedBatches is how many embedding batches the helper adds before it
// stops at phase "embedded": a build half-way through (876 documents in
// batches of 64 make 14).
const pausedBatches = 7

// catalogQuestions are questions of the catalog with a table each must
// retrieve (its own database's, among same-named tables of others).
var catalogQuestions = map[string]string{
	"How many singers do we have?":                          "concert_singer.singer",
	"What is the average horsepower of cars made in 1980?":  "car_1.cars_data",
	"Which dogs have owners living in Virginia?":            "dog_kennels.Owners",
	"Show the names of all museums that opened after 2010.": "museum_visit.museum",
	"How many flights depart from each airline?":            "flight_2.flights",
}

var (
	catalogOnce sync.Once
	catalogDB   *schema.Database
	catalogErr  error
)

// spiderCatalog returns the Spider catalog, or skips without the data.
func spiderCatalog(tb testing.TB) *schema.Database {
	tb.Helper()
	path := shareddata.Path(tb, "spider", "tables.json")
	catalogOnce.Do(func() { catalogDB, catalogErr = birdschema.Catalog("spider", path) })
	require.NoError(tb, catalogErr)
	return catalogDB
}

// catalogTables returns the tables retrieved for each catalog question.
func catalogTables(tb testing.TB, h *Hybrid) map[string][]string {
	tb.Helper()
	out := map[string][]string{}
	for q := range catalogQuestions {
		out[q] = tableNames(retrieve(tb, h, q))
	}
	return out
}

var (
	wantOnce   sync.Once
	wantTables map[string][]string
)

// wantCatalogTables is what an in-memory build of the catalog retrieves;
// it checks that each question's table is among them.
func wantCatalogTables(t *testing.T) map[string][]string {
	t.Helper()
	db := spiderCatalog(t)
	wantOnce.Do(func() {
		h, err := NewHybrid(context.Background(), HybridOptions{Schema: db})
		require.NoError(t, err)
		wantTables = catalogTables(t, h)
	})
	for q, table := range catalogQuestions {
		require.Contains(t, wantTables[q], table, q)
	}
	return wantTables
}

// helperResult is what a helper process reports on its last line.
type helperResult struct {
	Rebuilt   bool                `json:"rebuilt"`
	LockWait  time.Duration       `json:"lock_wait"`
	Recovered string              `json:"recovered"`
	Tables    map[string][]string `json:"tables"`
	Error     string              `json:"error"`
}

const resultPrefix = "helper-result "

// pausingEmbedder stops the process, after n document batches, until
// it is killed.
type pausingEmbedder struct {
	text2sql.Embedder
	n, calls int
}

func (p *pausingEmbedder) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	if p.calls == p.n {
		pause("embedded")
	}
	p.calls++
	return p.Embedder.EmbedDocuments(ctx, texts)
}

// pause says where the helper stopped and waits to be killed.
func pause(phase string) {
	fmt.Println("paused", phase)
	time.Sleep(time.Hour)
}

// TestIndexHelperProcess is the child process of the index fault tests:
// it opens the index in $TEXT2SQL_INDEX_HELPER_DIR, builds or reuses it
// for the Spider catalog, and prints a helperResult.
func TestIndexHelperProcess(t *testing.T) {
	dir := os.Getenv(helperDir)
	if dir == "" {
		t.Skip("the child process of the index fault tests")
	}
	res := helperResult{}
	defer func() {
		b, _ := json.Marshal(res)
		fmt.Println(resultPrefix + string(b))
	}()
	var dim int
	if d := os.Getenv(helperDim); d != "" {
		_, err := fmt.Sscan(d, &dim)
		require.NoError(t, err)
	}
	var emb text2sql.Embedder = newHashing(t, dim)
	switch p := os.Getenv(helperPause); p {
	case "":
	case "embedded":
		emb = &pausingEmbedder{Embedder: emb, n: pausedBatches}
	default:
		commitPhase = func(phase string) {
			if phase == p {
				pause(phase)
			}
		}
	}
	s, err := OpenChromem(dir)
	if err != nil {
		res.Error = err.Error()
		return
	}
	if w := os.Getenv(helperWait); w != "" {
		d, err := time.ParseDuration(w)
		require.NoError(t, err)
		s.SetLockWait(d)
	}
	if err := s.Recovered(); err != nil {
		res.Recovered = err.Error()
	}
	h, err := NewHybrid(context.Background(), HybridOptions{Schema: spiderCatalog(t), Embedder: emb, Store: s})
	if err != nil {
		res.Error = err.Error()
		return
	}
	res.Rebuilt, res.LockWait = h.Stats().Rebuilt, h.Stats().LockWait
	res.Tables = catalogTables(t, h)
}

// helper starts a helper process on dir with extra environment variables.
func helper(t *testing.T, ctx context.Context, dir string, env ...string) (*exec.Cmd, io.Reader) {
	t.Helper()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestIndexHelperProcess$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), append(env, helperDir+"="+dir)...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	return cmd, out
}

// runHelper runs a helper process on dir to its end and returns its result.
func runHelper(t *testing.T, ctx context.Context, dir string, env ...string) helperResult {
	t.Helper()
	cmd, out := helper(t, ctx, dir, env...)
	b, err := io.ReadAll(out)
	require.NoError(t, err)
	require.NoError(t, cmd.Wait(), "helper: %s", b)
	return parseResult(t, string(b))
}

func parseResult(t *testing.T, out string) helperResult {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(line, resultPrefix); ok {
			var r helperResult
			require.NoError(t, json.Unmarshal([]byte(rest), &r))
			return r
		}
	}
	t.Fatalf("no result from the helper:\n%s", out)
	return helperResult{}
}

// killAt starts a helper build on dir and SIGKILLs it when it reports
// phase, or after delay when phase is "".
func killAt(t *testing.T, ctx context.Context, dir, phase string, delay time.Duration) {
	t.Helper()
	cmd, out := helper(t, ctx, dir, helperPause+"="+phase)
	if phase == "" {
		time.Sleep(delay)
	} else {
		sc := bufio.NewScanner(out)
		reached := false
		for !reached && sc.Scan() {
			reached = sc.Text() == "paused "+phase
		}
		require.True(t, reached, "the helper never reached %s", phase)
	}
	require.NoError(t, cmd.Process.Kill()) // SIGKILL: no deferred code, no clean-up
	go io.Copy(io.Discard, out)
	err := cmd.Wait()
	if phase != "" {
		require.Error(t, err, "the helper was not killed")
	}
}

// openCatalog opens the index in dir in this process and builds or reuses
// it for the catalog with the default embedder.
func openCatalog(t *testing.T, dir string) (*Hybrid, *ChromemStore) {
	t.Helper()
	s, err := OpenChromem(dir)
	require.NoError(t, err)
	h, err := NewHybrid(context.Background(), HybridOptions{Schema: spiderCatalog(t), Store: s})
	require.NoError(t, err)
	return h, s
}

// childProcessTest starts a test whose child processes build the Spider
// catalog's index (skipped with -short): the tables each question should
// retrieve, and a context that bounds the test's children to 5 minutes.
func childProcessTest(t *testing.T) (map[string][]string, context.Context) {
	t.Helper()
	if testing.Short() {
		t.Skip("child processes building an 876-table index")
	}
	want := wantCatalogTables(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	return want, ctx
}

// A build killed at any point leaves the index it replaced, or the new
// one complete: never a damaged one. The next run builds (or reuses) it
// and retrieves the right tables, and no temporary file stays.
func TestIndexSurvivesKilledBuilds(t *testing.T) {
	want, ctx := childProcessTest(t)
	type point struct {
		phase string
		delay time.Duration
	}
	points := []point{{phase: "embedded"}, {phase: "written"}, {phase: "synced"}, {phase: "renamed"}}
	// Unannounced kills, spread over a child's start-up and build (about
	// 0.5 s on 2 cores).
	for _, d := range []time.Duration{50, 150, 250, 350, 450, 600, 800} {
		points = append(points, point{delay: d * time.Millisecond})
	}
	for _, prior := range []string{"empty", "other"} {
		for _, p := range points {
			name := p.phase
			if name == "" {
				name = p.delay.String()
			}
			t.Run(prior+"/"+name, func(t *testing.T) {
				dir := filepath.Join(t.TempDir(), "idx")
				if prior == "other" {
					// An index of another fingerprint (another
					// dimension), which the killed build replaces.
					r := runHelper(t, ctx, dir, helperDim+"=256")
					require.Empty(t, r.Error)
					require.True(t, r.Rebuilt)
				}
				killAt(t, ctx, dir, p.phase, p.delay)
				tmp, err := filepath.Glob(filepath.Join(dir, tempPrefix+"*"))
				require.NoError(t, err)
				_, err = os.Stat(filepath.Join(dir, IndexFile))
				t.Logf("after the kill: index file present %v, %d temporary files", err == nil, len(tmp))
				h, s := openCatalog(t, dir)
				require.NoError(t, s.Recovered(), "a killed build left a damaged index")
				switch p.phase {
				case "renamed":
					assert.False(t, h.Stats().Rebuilt, "the build committed before the kill is reused")
				case "embedded", "written", "synced":
					assert.True(t, h.Stats().Rebuilt, "the killed build committed nothing")
				}
				assert.Equal(t, want, catalogTables(t, h))
				tmp, err = filepath.Glob(filepath.Join(dir, tempPrefix+"*"))
				require.NoError(t, err)
				if h.Stats().Rebuilt {
					assert.Empty(t, tmp, "temporary files of the killed build")
				}
				r := runHelper(t, ctx, dir)
				require.Empty(t, r.Error)
				assert.False(t, r.Rebuilt, "the index built after the kill is reused")
				assert.Empty(t, r.Recovered)
				assert.Equal(t, want, r.Tables)
			})
		}
	}
}

// Six processes opening one empty directory at once: all succeed, one
// builds, the five others wait for its build and reuse it.
func TestIndexBuiltOnceBySixProcesses(t *testing.T) {
	want, ctx := childProcessTest(t)
	dir := filepath.Join(t.TempDir(), "idx")
	const n = 6
	results := make([]helperResult, n)
	var wg sync.WaitGroup
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = runHelper(t, ctx, dir)
		}()
	}
	wg.Wait()
	built := 0
	for i, r := range results {
		require.Empty(t, r.Error, "process %d", i)
		assert.Empty(t, r.Recovered, "process %d", i)
		assert.Equal(t, want, r.Tables, "process %d", i)
		if r.Rebuilt {
			built++
		}
		t.Logf("process %d: rebuilt %v, lock wait %v", i, r.Rebuilt, r.LockWait)
	}
	assert.Equal(t, 1, built, "processes that built the index")
	h, s := openCatalog(t, dir)
	require.NoError(t, s.Recovered())
	assert.False(t, h.Stats().Rebuilt)
	assert.Equal(t, want, catalogTables(t, h))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.ElementsMatch(t, []string{IndexFile, LockFile}, names, "files in the index directory")
}

// Two stores of one directory in one process: the second waits for the
// first one's build lock and, once it has it, reuses its build.
func TestLockBuildReusesAnotherBuild(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "idx")
	s1, err := OpenChromem(dir)
	require.NoError(t, err)
	s2, err := OpenChromem(dir)
	require.NoError(t, err)
	release, err := s1.LockBuild(ctx)
	require.NoError(t, err)
	done := make(chan *Hybrid)
	go func() {
		h, err := NewHybrid(ctx, HybridOptions{Schema: registrar(), Knowledge: registrarKnowledge(), Store: s2})
		assert.NoError(t, err)
		done <- h
	}()
	// s1 builds while s2 waits for the lock.
	held := 100 * time.Millisecond
	time.Sleep(held)
	h1, err := NewHybrid(ctx, HybridOptions{Schema: registrar(), Knowledge: registrarKnowledge(), Store: struct{ Store }{s1}}) // s1 holds the lock already
	require.NoError(t, err)
	require.True(t, h1.Stats().Rebuilt)
	release()
	h2 := <-done
	require.NotNil(t, h2)
	assert.False(t, h2.Stats().Rebuilt, "the second store rebuilt what the first had built")
	// It waited for the lock; not necessarily all of held, as the
	// goroutine may reach the lock late on a loaded machine.
	assert.Positive(t, h2.Stats().LockWait, "lock wait")
	q := "How many students take each class?"
	assert.Equal(t, retrieve(t, h1, q).Schema, retrieve(t, h2, q).Schema)
}

// A build lock held past the store's lock wait fails the build with
// ErrIndexLocked, after about the wait; a cancelled context returns its
// error; once the lock is free the build goes on.
func TestIndexLocked(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "idx")
	s, err := OpenChromem(dir)
	require.NoError(t, err)
	other := flock.New(filepath.Join(dir, LockFile))
	require.NoError(t, other.Lock()) // another process's builder, as far as flock(2) goes
	build := func(ctx context.Context) (*Hybrid, error) {
		return NewHybrid(ctx, HybridOptions{Schema: registrar(), Store: s})
	}

	const wait = 200 * time.Millisecond
	s.SetLockWait(wait)
	start := time.Now()
	_, err = build(ctx)
	took := time.Since(start)
	require.ErrorIs(t, err, ErrIndexLocked)
	assert.Contains(t, err.Error(), LockFile)
	assert.GreaterOrEqual(t, took, wait, "gave up before the wait")
	assert.Less(t, took, wait+2*time.Second, "waited far past the wait")

	s.SetLockWait(-1)
	start = time.Now()
	_, err = build(ctx)
	require.ErrorIs(t, err, ErrIndexLocked, "no wait")
	assert.Less(t, time.Since(start), wait, "a negative wait waited")

	s.SetLockWait(0) // the default, 10 minutes: the context ends first
	cctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	_, err = build(cctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.NotErrorIs(t, err, ErrIndexLocked)

	require.NoError(t, other.Unlock())
	s.SetLockWait(wait)
	h, err := build(ctx)
	require.NoError(t, err)
	assert.True(t, h.Stats().Rebuilt)
	// Reuse takes no lock: a held lock does not stop readers.
	require.NoError(t, other.Lock())
	defer other.Unlock()
	s2, err := OpenChromem(dir)
	require.NoError(t, err)
	s2.SetLockWait(-1)
	h, err = NewHybrid(ctx, HybridOptions{Schema: registrar(), Store: s2})
	require.NoError(t, err)
	assert.False(t, h.Stats().Rebuilt)
}

// A damaged index file — truncated, overwritten in places, emptied, its
// trailer replaced — opens empty with Recovered wrapping ErrIndexDamaged;
// the retriever rebuilds the same index, which then reads back clean.
func TestIndexDamageRebuilt(t *testing.T) {
	want := wantCatalogTables(t)
	base := filepath.Join(t.TempDir(), "built")
	_, s := openCatalog(t, base)
	require.NoError(t, s.Recovered())
	good, err := os.ReadFile(filepath.Join(base, IndexFile))
	require.NoError(t, err)

	type damage struct {
		name string
		do   func(r *rand.Rand, b []byte) []byte
	}
	damages := []damage{
		{"empty", func(*rand.Rand, []byte) []byte { return nil }},
		{"truncated by half", func(_ *rand.Rand, b []byte) []byte { return b[:len(b)/2] }},
		{"last byte cut", func(_ *rand.Rand, b []byte) []byte { return b[:len(b)-1] }},
		{"trailer cut", func(_ *rand.Rand, b []byte) []byte { return b[:len(b)-trailerSize] }},
		{"shorter than a trailer", func(_ *rand.Rand, b []byte) []byte { return b[:trailerSize-1] }},
		{"garbage trailer", func(r *rand.Rand, b []byte) []byte {
			for i := len(b) - trailerSize; i < len(b); i++ {
				b[i] = byte(r.UintN(256))
			}
			return b
		}},
		{"another length", func(_ *rand.Rand, b []byte) []byte {
			b[len(b)-trailerSize+len(indexMagic)+7]++
			return b
		}},
		{"appended", func(_ *rand.Rand, b []byte) []byte { return append(b, "more"...) }},
		{"checksummed garbage", func(r *rand.Rand, _ []byte) []byte {
			// A payload chromem-go cannot decode under a valid trailer.
			payload := make([]byte, 1000)
			for i := range payload {
				payload[i] = byte(r.UintN(256))
			}
			sum := sha256.Sum256(payload)
			b := append(payload, indexMagic[:]...)
			b = binary.BigEndian.AppendUint64(b, uint64(len(payload)))
			return append(b, sum[:]...)
		}},
	}
	// 40 random bytes at random offsets, as in the issue, five times.
	for i := range 5 {
		damages = append(damages, damage{fmt.Sprintf("40 bytes overwritten %d", i), func(r *rand.Rand, b []byte) []byte {
			for range 40 {
				i := r.IntN(len(b))
				old := b[i]
				for b[i] == old {
					b[i] = byte(r.UintN(256))
				}
			}
			return b
		}})
	}
	for seed, d := range damages {
		t.Run(d.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "idx")
			require.NoError(t, os.MkdirAll(dir, 0o700))
			b := d.do(rand.New(rand.NewPCG(uint64(seed), 15)), append([]byte(nil), good...))
			require.NoError(t, os.WriteFile(filepath.Join(dir, IndexFile), b, 0o600))

			h, s := openCatalog(t, dir)
			require.ErrorIs(t, s.Recovered(), ErrIndexDamaged, "the damage went unnoticed")
			t.Log(s.Recovered())
			assert.True(t, h.Stats().Rebuilt)
			assert.Equal(t, want, catalogTables(t, h))

			h, s = openCatalog(t, dir)
			assert.NoError(t, s.Recovered(), "the rebuilt index reads back")
			assert.False(t, h.Stats().Rebuilt)
			assert.Equal(t, want, catalogTables(t, h))
		})
	}
}

// The layout of earlier versions (chromem-go's persistent database: a
// directory per collection) is ignored, and removed at the first commit;
// other files stay.
func TestIndexOldLayoutRemoved(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "idx")
	old, err := chromem.NewPersistentDB(dir, false)
	require.NoError(t, err)
	for _, name := range []string{chromemDocs, chromemMeta} {
		c, err := old.CreateCollection(name, nil, refuseEmbedding)
		require.NoError(t, err)
		require.NoError(t, c.AddDocument(ctx, chromem.Document{ID: "x", Embedding: []float32{1, 0}, Content: "x"}))
	}
	// A truncated document of a killed build, as that layout left them.
	oldDirs, err := filepath.Glob(filepath.Join(dir, "*", "*.gob"))
	require.NoError(t, err)
	require.NotEmpty(t, oldDirs)
	require.NoError(t, os.WriteFile(oldDirs[0], []byte{0x1f}, 0o600))
	mine := filepath.Join(dir, "NOTES.txt")
	require.NoError(t, os.WriteFile(mine, []byte("not the index's"), 0o600))
	mineDir := filepath.Join(dir, "keep")
	require.NoError(t, os.Mkdir(mineDir, 0o700))

	s, err := OpenChromem(dir)
	require.NoError(t, err)
	require.NoError(t, s.Recovered(), "the earlier layout is not damage")
	h, err := NewHybrid(ctx, HybridOptions{Schema: registrar(), Store: s})
	require.NoError(t, err)
	assert.True(t, h.Stats().Rebuilt)
	left, err := filepath.Glob(filepath.Join(dir, "*", "*.gob"))
	require.NoError(t, err)
	assert.Empty(t, left, "the earlier layout's files")
	assert.FileExists(t, mine)
	assert.DirExists(t, mineDir)
	assert.FileExists(t, filepath.Join(dir, IndexFile))
}

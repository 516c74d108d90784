package retriever

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	_ "github.com/mattn/go-sqlite3"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/embed/hashing"
	"github.com/text2sql-go/text2sql/internal/shareddata"
	"github.com/text2sql-go/text2sql/schema"
)

// inspectSQLite reads the schema of a SQLite database file, opened
// read-only.
func inspectSQLite(tb testing.TB, path string) *schema.Database {
	tb.Helper()
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	require.NoError(tb, err)
	defer db.Close()
	s, err := schema.InspectSQLite(context.Background(), db)
	require.NoError(tb, err)
	return s
}

var (
	spiderMu  sync.Mutex
	spiderDBs = map[string]*schema.Database{}
)

// spiderDB returns the schema of a Spider database, or skips.
func spiderDB(tb testing.TB, id string) *schema.Database {
	tb.Helper()
	path := shareddata.Path(tb, "spider", "database", id, id+".sqlite")
	spiderMu.Lock()
	defer spiderMu.Unlock()
	if db := spiderDBs[id]; db != nil {
		return db
	}
	db := inspectSQLite(tb, path)
	spiderDBs[id] = db
	return db
}

type devItem struct {
	DB       string `json:"db_id"`
	Question string `json:"question"`
	Query    string `json:"query"`
}

// spiderDev returns Spider dev questions whose database is present.
func spiderDev(tb testing.TB) []devItem {
	tb.Helper()
	data, err := os.ReadFile(shareddata.Path(tb, "spider", "dev.json"))
	require.NoError(tb, err)
	var all []devItem
	require.NoError(tb, json.Unmarshal(data, &all))
	var out []devItem
	for _, it := range all {
		if _, err := os.Stat(shareddata.Path(tb, "spider", "database") + "/" + it.DB + "/" + it.DB + ".sqlite"); err == nil {
			out = append(out, it)
		}
	}
	return out
}

// countingEmbedder wraps an embedder and counts its calls.
type countingEmbedder struct {
	text2sql.Embedder
	docCalls, docTexts, queryCalls atomic.Int64
}

func (c *countingEmbedder) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	c.docCalls.Add(1)
	c.docTexts.Add(int64(len(texts)))
	return c.Embedder.EmbedDocuments(ctx, texts)
}

func (c *countingEmbedder) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	c.queryCalls.Add(1)
	return c.Embedder.EmbedQuery(ctx, text)
}

func newHashing(tb testing.TB, dim int) *hashing.Embedder {
	tb.Helper()
	e, err := hashing.New(dim)
	require.NoError(tb, err)
	return e
}

func tableNames(c *text2sql.Retrieval) []string {
	var out []string
	for _, t := range c.Tables {
		out = append(out, t.Name)
	}
	return out
}

func reasonOf(c *text2sql.Retrieval, table string) string {
	for _, t := range c.Tables {
		if strings.EqualFold(t.Name, table) {
			return t.Why()
		}
	}
	return ""
}

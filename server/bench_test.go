package server

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/generator"
)

func benchHandler(b *testing.B) http.Handler {
	gen, err := generator.New(sqlModel("SELECT code, title FROM courses ORDER BY code LIMIT 5"), generator.Options{})
	require.NoError(b, err)
	p, err := text2sql.New(text2sql.Config{Retriever: fixture.ret, Generator: gen, Executor: fixture.exec, DisableExampleReuse: true})
	require.NoError(b, err)
	h, err := New(Config{Pipeline: p, Auth: NoAuth(), RateLimit: RateLimit{Unlimited: true}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	require.NoError(b, err)
	return h
}

// BenchmarkHealth and BenchmarkGenerate measure the handler without the
// network: the service's own cost per request.
func BenchmarkHealth(b *testing.B) {
	benchServe(b, func() *http.Request { return httptest.NewRequest("GET", "/health", nil) })
}

func BenchmarkGenerate(b *testing.B) {
	benchServe(b, func() *http.Request {
		r := httptest.NewRequest("POST", "/v1/generate", strings.NewReader(`{"question":"How many students take each class?"}`))
		r.Header.Set("Content-Type", "application/json")
		return r
	})
}

// benchServe serves the requests of newRequest to benchHandler in
// parallel; each must answer 200.
func benchServe(b *testing.B, newRequest func() *http.Request) {
	h := benchHandler(b)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, newRequest())
			require.Equal(b, 200, w.Code, "%v %v", w.Code, w.Body.String())
		}
	})
}

// TestConcurrentLoad sends many concurrent requests to /health and
// /v1/generate; every one must succeed, and TestMain's leak check then
// finds no goroutine left behind.
func TestConcurrentLoad(t *testing.T) {
	srv := testServer(t, Config{Auth: NoAuth()})
	var wg sync.WaitGroup
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 25; i++ {
				var r response
				if i%2 == 0 {
					r = do(t, srv, "GET", "/health", "", nil)
				} else {
					r = do(t, srv, "POST", "/v1/generate", "", map[string]string{"question": "How many students take each class?"})
				}
				assert.Equal(t, 200, r.status, "%s", r.body)
			}
		}()
	}
	wg.Wait()
}

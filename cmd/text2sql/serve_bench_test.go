package main

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// serveLoad is the number of /v1/generate requests in flight at once.
const serveLoad = 64

// BenchmarkServeGenerate runs `serve --demo` with an OpenAI-compatible
// model server (a local fake over TCP) and sends /v1/generate from
// serveLoad clients at once. It reports req/s and the share of model calls
// that opened a new connection to the model server (new-conns/call).
func BenchmarkServeGenerate(b *testing.B) {
	b.Setenv("OPENAI_API_KEY", "")
	b.Setenv("GEMINI_API_KEY", "")
	var calls, conns atomic.Int64
	model := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		io.Copy(io.Discard, r.Body)
		writeCompletion(w, modelAnswer("SELECT count(*) AS n FROM instructors WHERE hire_year < 2010", "counts"), 500)
	}))
	model.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	model.Start()
	b.Cleanup(model.Close)
	base := serveInProcess(b, "--demo", "--auth", "none", "--rate", "0",
		"--provider", "openai", "--base-url", model.URL+"/v1", "--model", "local-model")
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: serveLoad}}
	b.Cleanup(client.CloseIdleConnections)
	body := []byte(`{"question":"How many instructors were hired before 2010?"}`)
	generate := func() {
		res, err := client.Post(base+"/v1/generate", "application/json", bytes.NewReader(body))
		require.NoError(b, err)
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		require.Equal(b, http.StatusOK, res.StatusCode)
	}
	load := func(n int) {
		var next atomic.Int64
		var wg sync.WaitGroup
		for range serveLoad {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for next.Add(1) <= int64(n) {
					generate()
				}
			}()
		}
		wg.Wait()
	}
	load(serveLoad) // warm: the first connections are opened once
	calls0, conns0 := calls.Load(), conns.Load()
	b.ResetTimer()
	load(b.N)
	b.StopTimer()
	made := calls.Load() - calls0
	require.Positive(b, made, "no model call: the question was answered without the model")
	b.ReportMetric(float64(conns.Load()-conns0)/float64(made), "new-conns/call")
	b.ReportMetric(float64(made)/float64(b.N), "calls/op")
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}

package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/text2sql-go/text2sql/internal/syncbuf"
)

// freeAddr returns a loopback address with a port free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

func get(url string) (int, string, error) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// TestServeMetricsAddr serves the demo with --metrics-addr: the metrics
// listener answers without authentication and counts the API's requests,
// while the API keeps /metrics behind its authentication.
func TestServeMetricsAddr(t *testing.T) {
	t.Setenv("TEXT2SQL_TOKENS", "alice:tok-alice-0123456789abcdef")
	api, metricsAddr := freeAddr(t), freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	root := newRoot()
	var out, errOut syncbuf.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs([]string{"serve", "--demo", "--auth", "static", "--addr", api, "--metrics-addr", metricsAddr, "--index-dir", t.TempDir()})
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			assert.NoError(t, err, "serve: %s", errOut.String())
		case <-time.After(30 * time.Second):
			t.Error("serve did not stop")
		}
	})

	require.Eventually(t, func() bool {
		status, _, err := get("http://" + api + "/health")
		return err == nil && status == 200
	}, 60*time.Second, 50*time.Millisecond, "serve did not start")
	status, body, err := get("http://" + metricsAddr + "/metrics")
	require.NoError(t, err)
	require.Equal(t, 200, status, body)
	assert.Contains(t, body, `text2sql_requests_total{method="GET",route="GET /health",status="200"} 1`)
	assert.Contains(t, body, "go_goroutines", "the runtime collectors")
	assert.Contains(t, body, "process_open_fds", "the process collector")
	status, _, err = get("http://" + api + "/metrics")
	require.NoError(t, err)
	assert.Equal(t, 401, status, "the API's /metrics is behind authentication")
	_, body, err = get("http://" + metricsAddr + "/metrics")
	require.NoError(t, err)
	assert.Contains(t, body, `text2sql_requests_total{method="GET",route="GET /metrics",status="401"} 1`)
	assert.False(t, strings.Contains(body, "tok-alice"), "no token in the metrics")
}

package server_test

import (
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/text2sql-go/text2sql/server"
	"github.com/text2sql-go/text2sql/server/metrics"
	"github.com/text2sql-go/text2sql/server/tracing"
)

// BenchmarkAskTelemetry measures one /v1/ask (scripted model, demo
// database) without observers, with metrics and with tracing (spans kept
// recorded but not exported: the export runs in the batcher's goroutine).
func BenchmarkAskTelemetry(b *testing.B) {
	for _, c := range []struct {
		name string
		obs  func(b *testing.B) server.Observer
	}{
		{"off", nil},
		{"metrics", func(b *testing.B) server.Observer {
			m, err := metrics.New(metrics.Options{Registry: prometheus.NewRegistry()})
			require.NoError(b, err)
			return m
		}},
		{"tracing", func(b *testing.B) server.Observer {
			tp := sdktrace.NewTracerProvider() // sampled, recorded, exported nowhere
			b.Cleanup(func() { tp.Shutdown(b.Context()) })
			return tracing.New(tracing.Options{TracerProvider: tp})
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			cfg := server.Config{Pipeline: server.PipelineForTest(b), Auth: server.NoAuth(), RateLimit: server.RateLimit{Unlimited: true},
				Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
			if c.obs != nil {
				cfg.Observers = []server.Observer{c.obs(b)}
			}
			h, err := server.New(cfg)
			require.NoError(b, err)
			b.ReportAllocs()
			for b.Loop() {
				w := httptest.NewRecorder()
				r := httptest.NewRequest("POST", "/v1/ask", strings.NewReader(`{"question":"List two course codes"}`))
				r.Header.Set("Content-Type", "application/json")
				h.ServeHTTP(w, r)
				if w.Code != 200 {
					b.Fatalf("%d %s", w.Code, w.Body)
				}
			}
		})
	}
}

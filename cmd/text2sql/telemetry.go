package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"go.opentelemetry.io/otel"

	"github.com/text2sql-go/text2sql/server"
	"github.com/text2sql-go/text2sql/server/metrics"
	"github.com/text2sql-go/text2sql/server/tracing"
)

// traceFlushTimeout bounds the export of the spans still queued at exit.
const traceFlushTimeout = 5 * time.Second

// telemetry adds the metrics and tracing observers serve's flags and the
// OTEL_* environment ask for to cfg. It returns the metrics handler for
// --metrics-addr (nil without it) and a function that flushes the traces.
func (f *serveFlags) telemetry(ctx context.Context, cfg *server.Config, provider string, logger *slog.Logger) (http.Handler, func(), error) {
	noop := func() {}
	var mh http.Handler
	if f.metricsAddr != "" || f.metricsOnAPI {
		m, err := metrics.New(metrics.Options{Provider: provider})
		if err != nil {
			return nil, noop, err
		}
		cfg.Observers = append(cfg.Observers, m)
		if f.metricsOnAPI {
			cfg.Metrics = m.Handler()
		}
		if f.metricsAddr != "" {
			// Only /metrics: a probe pointed at this port by mistake
			// must not look healthy.
			mux := http.NewServeMux()
			mux.Handle("GET /metrics", m.Handler())
			mh = mux
		}
	}
	tp, err := tracing.ProviderFromEnv(ctx, "text2sql")
	if err != nil {
		return nil, noop, &exitErr{code: exitUsage, err: err}
	}
	if tp == nil {
		return mh, noop, nil
	}
	prop, err := tracing.PropagatorFromEnv()
	if err != nil {
		return nil, noop, &exitErr{code: exitUsage, err: err}
	}
	cfg.Observers = append(cfg.Observers, tracing.New(tracing.Options{TracerProvider: tp, Propagator: prop, Provider: provider}))
	// The exporter reports failures through otel's global handler, by
	// default the standard log package: keep them in the service's log.
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		logger.Warn("exporting spans failed", slog.String("error", err.Error()))
	}))
	logger.Info("tracing on: spans are exported over OTLP as OTEL_* say")
	return mh, func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), traceFlushTimeout)
		defer cancel()
		if err := tp.Shutdown(ctx); err != nil {
			logger.Warn("exporting the last spans failed", slog.String("error", err.Error()))
		}
	}, nil
}

// serveBoth serves h on f.addr and, when mh is set, the metrics on
// f.metricsAddr without authentication, until ctx ends or either
// listener fails.
func (f *serveFlags) serveBoth(ctx context.Context, h, mh http.Handler, logger *slog.Logger) error {
	opts := server.ServeOptions{ShutdownTimeout: f.shutdownTimeout, Logger: logger}
	if mh == nil {
		return server.ListenAndServe(ctx, f.addr, h, opts)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	metricsDone := make(chan struct{})
	go func() {
		defer close(metricsDone)
		if err := server.ListenAndServe(ctx, f.metricsAddr, mh, opts); err != nil {
			cancel(fmt.Errorf("--metrics-addr: %w", err))
		}
	}()
	err := server.ListenAndServe(ctx, f.addr, h, opts)
	cancel(nil)
	<-metricsDone
	if cause := context.Cause(ctx); err == nil && cause != nil && !errors.Is(cause, context.Canceled) {
		err = cause
	}
	return err
}

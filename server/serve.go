package server

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// ServeOptions configure ListenAndServe.
type ServeOptions struct {
	// ShutdownTimeout bounds the wait for in-flight requests after ctx
	// ends; 0 means 30 seconds. Requests still running then are cut off.
	ShutdownTimeout time.Duration
	// Logger receives the start and stop records; nil means
	// slog.Default().
	Logger *slog.Logger
	// Ready, when set, is called with the listening address once the
	// listener is open (useful with port 0).
	Ready func(addr net.Addr)
}

// ListenAndServe serves h on addr until ctx ends, then shuts down
// gracefully: it stops accepting connections, lets in-flight requests
// finish within ShutdownTimeout and returns nil. The http.Server has
// header-read and idle timeouts but no write timeout, since answers and
// MCP event streams may take minutes; Config.RequestTimeout bounds the
// work of each request. It returns the listen error, or a serve error
// other than http.ErrServerClosed.
func ListenAndServe(ctx context.Context, addr string, h http.Handler, o ServeOptions) error {
	log := o.Logger
	if log == nil {
		log = slog.Default()
	}
	timeout := o.ShutdownTimeout
	if timeout == 0 {
		timeout = 30 * time.Second
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	log.Info("listening", "addr", ln.Addr().String())
	if o.Ready != nil {
		o.Ready(ln.Addr())
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down", "timeout", timeout.String())
	sctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	err = srv.Shutdown(sctx)
	if err != nil {
		srv.Close()
	}
	if serr := <-errc; serr != nil && !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	log.Info("stopped")
	return err
}

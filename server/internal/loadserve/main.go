// Command loadserve serves the demo database through server.New with an
// instant scripted model, no authentication and no rate limit, for load
// tests on loopback:
//
//	go run ./server/internal/loadserve -addr 127.0.0.1:8089 &
//	wrk -t2 -c64 -d15s --latency http://127.0.0.1:8089/health
//	wrk -t2 -c64 -d15s --latency -s server/internal/loadserve/generate.lua http://127.0.0.1:8089/v1/generate
//
// On SIGINT or SIGTERM it shuts down and prints the goroutine count
// before the first request and after shutdown, to spot leaks.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"syscall"
	"time"

	text2sql "github.com/text2sql-go/text2sql"
	"github.com/text2sql-go/text2sql/demo"
	"github.com/text2sql-go/text2sql/executor/sqlite"
	"github.com/text2sql-go/text2sql/generator"
	"github.com/text2sql-go/text2sql/retriever"
	"github.com/text2sql-go/text2sql/server"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8089", "listen address")
	logRequests := flag.Bool("log", false, "log every request (JSON on standard error)")
	flag.Parse()
	if err := run(*addr, *logRequests); err != nil {
		log.Fatal(err)
	}
}

func run(addr string, logRequests bool) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	dir, err := os.MkdirTemp("", "loadserve-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "demo.sqlite")
	if err := demo.Create(path); err != nil {
		return err
	}
	ex, err := sqlite.Open(path, sqlite.Options{})
	if err != nil {
		return err
	}
	defer ex.Close()
	kb, err := demo.Knowledge()
	if err != nil {
		return err
	}
	ret, err := retriever.NewHybrid(ctx, retriever.HybridOptions{Schema: ex.Schema(), Knowledge: kb})
	if err != nil {
		return err
	}
	instant := text2sql.ModelFunc(func(context.Context, text2sql.ModelRequest) (*text2sql.ModelResponse, error) {
		return &text2sql.ModelResponse{Model: "instant", Text: `{"answerable":true,"sql":"SELECT code, title FROM courses ORDER BY code LIMIT 5","explanation":"The first five courses by code."}`}, nil
	})
	gen, err := generator.New(instant, generator.Options{})
	if err != nil {
		return err
	}
	p, err := text2sql.New(text2sql.Config{Retriever: ret, Generator: gen, Executor: ex, DisableExampleReuse: true})
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	if logRequests {
		logger = slog.New(slog.NewJSONHandler(os.Stderr, nil))
	}
	st := ret.Stats()
	h, err := server.New(server.Config{
		Pipeline: p, Auth: server.NoAuth(), RateLimit: server.RateLimit{Unlimited: true}, Logger: logger,
		Info: server.Info{Models: []string{"instant"}, Dialect: text2sql.DialectSQLite, Fingerprint: st.Fingerprint,
			Embedder: st.Embedder, Documents: st.Documents, Knowledge: st.Kinds},
	})
	if err != nil {
		return err
	}
	before := runtime.NumGoroutine()
	err = server.ListenAndServe(ctx, addr, h, server.ServeOptions{Logger: logger, ShutdownTimeout: 5 * time.Second,
		Ready: func(a net.Addr) { fmt.Fprintf(os.Stderr, "loadserve: listening on %s\n", a) }})
	time.Sleep(200 * time.Millisecond)
	fmt.Fprintf(os.Stderr, "loadserve: goroutines before %d, after shutdown %d\n", before, runtime.NumGoroutine())
	return err
}

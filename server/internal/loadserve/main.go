// Command loadserve serves the demo database through server.New with an
// instant scripted model, no authentication and no rate limit, for load
// tests on loopback:
//
//	go run ./server/internal/loadserve -addr 127.0.0.1:8089 &
//	wrk -t2 -c64 -d15s --latency http://127.0.0.1:8089/health
//	wrk -t2 -c64 -d15s --latency -s server/internal/loadserve/generate.lua http://127.0.0.1:8089/v1/generate
//
// -rate N limits requests per minute (in memory; a large N measures the
// limiter's cost without refusals), -redis URL counts the limit in Redis
// instead (server/redisstore), and -cache adds the answer cache there:
//
//	go run ./server/internal/loadserve -rate 100000000 -redis redis://127.0.0.1:6379/0 &
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
	"github.com/text2sql-go/text2sql/server/redisstore"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8089", "listen address")
	logRequests := flag.Bool("log", false, "log every request (JSON on standard error)")
	var lim limits
	flag.IntVar(&lim.rate, "rate", 0, "requests per minute per principal; 0: no limit")
	flag.StringVar(&lim.redis, "redis", "", "Redis URL: the limit (and -cache) in Redis")
	flag.BoolVar(&lim.cache, "cache", false, "with -redis, cache answers there")
	flag.Parse()
	if err := run(*addr, *logRequests, lim); err != nil {
		log.Fatal(err)
	}
}

// limits are the rate limit and cache settings of a run.
type limits struct {
	rate  int
	redis string
	cache bool
}

func run(addr string, logRequests bool, lim limits) error {
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
	cfg := server.Config{
		Pipeline: p, Auth: server.NoAuth(), RateLimit: server.RateLimit{Requests: lim.rate, Window: time.Minute, Unlimited: lim.rate == 0}, Logger: logger,
		Info: server.Info{Models: []string{"instant"}, Dialect: text2sql.DialectSQLite, Fingerprint: st.Fingerprint,
			Embedder: st.Embedder, Documents: st.Documents, Knowledge: st.Kinds},
	}
	if lim.redis != "" {
		rs, err := redisstore.New(lim.redis, redisstore.Options{Prefix: fmt.Sprintf("loadserve:%d:", os.Getpid())})
		if err != nil {
			return err
		}
		defer rs.Close()
		cfg.Limiter = rs.Limiter(cfg.RateLimit)
		if lim.cache {
			cfg.Cache = server.Cache{Store: rs, DataVersion: ex.DataVersion}
		}
	}
	h, err := server.New(cfg)
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
